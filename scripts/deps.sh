#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install with apt-get what building and running the project needs, with
# the Debian kernel source of each series named (default: $KSERIES, 6.1).
# Asks apt only when a package is missing, so a second run takes a second.
#
#   scripts/deps.sh [SERIES...]
set -euo pipefail

(($#)) || set -- "${KSERIES:-6.1}"
packages=(
	"${@/#/linux-source-}" gcc make libc6-dev bc flex bison libelf-dev libssl-dev
	cpio xz-utils kmod rsync git ccache python3 python3-pyflakes perl mandoc
	qemu-system-x86 dracut-core dkms shellcheck man-db
)

missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[[ "$status" == installed ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
	exit 0
fi

if ((EUID != 0)); then
	echo "deps: missing ${missing[*]}; run as root (apt-get install)" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
