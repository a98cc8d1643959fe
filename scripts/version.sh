#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The project's version, from the one place that sets it: the first entry
# of debian/changelog ("numab-minwait (1.1) unstable; ..."), without an
# epoch or a Debian revision, as the packages' DEB_VERSION_UPSTREAM.
#
#   scripts/version.sh
set -euo pipefail

changelog="$(dirname "${BASH_SOURCE[0]}")/../debian/changelog"
version=$(sed -n '1s/^numab-minwait (\([^)]*\)).*/\1/p' "$changelog")
[[ -n $version ]] || {
	echo "$0: no version on the first line of $changelog" >&2
	exit 1
}
version=${version#*:}
echo "${version%-*}"
