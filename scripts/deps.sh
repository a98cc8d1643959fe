#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install with apt-get what building and running the project needs, with
# the Debian kernel source of each series named (default: $KSERIES, 6.1).
# Asks apt only when a package is missing, so a second run takes a second.
#
#   scripts/deps.sh [--list] [--lint | --deb] [SERIES...]
#
#   --lint   what make lint-quick needs: every series' source (for its
#            checkpatch.pl) and the linters, instead of the build packages
#   --deb    what make deb needs: Debian's packaging tools and lintian
#   --list   print the packages, one a line, and install nothing
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list=0 lint=0 deb=0
series=()
while (($#)); do
	case "$1" in
	--list) list=1 ;;
	--lint) lint=1 ;;
	--deb) deb=1 ;;
	-*) echo "deps: unknown option '$1'" >&2; exit 2 ;;
	*) series+=("$1") ;;
	esac
	shift
done

if ((deb)); then
	series=()
	# dpkg-buildpackage checks build-essential itself, not its parts.
	packages=(build-essential git debhelper dh-dkms lintian)
elif ((lint)); then
	mapfile -t series < <(awk '!/^#/ && NF { print $1 }' "$here/../kernel/series")
	packages=(git perl python3 python3-pyflakes shellcheck mandoc)
else
	((${#series[@]})) || series=("${KSERIES:-6.1}")
	# What the guest image takes from this machine is here too: a
	# minimal Debian root has no reboot, ps, numactl or hexdump.
	packages=(
		gcc make libc6-dev bc flex bison libelf-dev libssl-dev cpio
		xz-utils kmod rsync git ccache python3 perl qemu-system-x86
		dracut-core dkms man-db mandoc busybox procps numactl bsdextrautils
		mount
	)
fi
packages=("${series[@]/#/linux-source-}" "${packages[@]}")

if ((list)); then
	printf '%s\n' "${packages[@]}"
	exit 0
fi

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
