#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# On the host, installing nothing: the two Debian packages of make deb.
# Built twice, from copies in different folders: lintian-clean (no error,
# no warning) and byte-identical (SOURCE_DATE_EPOCH, reproducible
# builds). numab-tools' payload is the make install tree (the same files;
# the man pages and examples the same bytes, the programs built with
# Debian's flags instead); numab-minwait-dkms' is the module's source,
# dkms.conf and the hook check; one version everywhere. TAP.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=userspace/tests/tap.sh
. userspace/tests/tap.sh

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
version=$(scripts/version.sh)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
	gcc -print-multiarch)

echo "1..6"
tap_run "make deb: built, lintian-clean" \
	scripts/deb.sh --out "$work/a"
tap_run "built again elsewhere" scripts/deb.sh --no-lintian --out "$work/b"

# reproducible: the same .deb files, byte for byte.
# shellcheck disable=SC2317 # called by tap_run
reproducible() {
	local deb rc=0
	for deb in "$work"/a/*.deb; do
		cmp -- "$deb" "$work/b/${deb##*/}" || rc=1
	done
	return "$rc"
}
tap_run "the two builds are byte-identical" reproducible

# tree DIR: its files, one a line, man pages without their .gz.
# shellcheck disable=SC2317 # called by tap_run
tree() {
	(cd "$1" && find . -type f -o -type l) | sed 's/\.gz$//' | sort
}

# shellcheck disable=SC2317 # called by tap_run
tools_payload() {
	local pkg=$work/tools inst=$work/install f
	dpkg-deb -x "$work"/a/numab-tools_"$version"_*.deb "$pkg"
	make -s install DESTDIR="$inst" PREFIX=/usr \
		libdir="/usr/lib/$multiarch/numab-tools" >/dev/null
	diff <(tree "$inst") <(tree "$pkg" |
		grep -v '^./usr/share/doc/numab-tools/\(changelog\|copyright\)$')
	for f in $(cd "$inst" && find . -name '*.[0-9]*' -o -path '*/examples/*'); do
		if [[ -e $pkg/$f.gz ]]; then
			zcat -- "$pkg/$f.gz" | cmp -- "$inst/$f" -
		else
			cmp -- "$inst/$f" "$pkg/$f"
		fi
	done
}
tap_run "numab-tools' payload is the make install tree" tools_payload

# shellcheck disable=SC2317 # called by tap_run
dkms_payload() {
	local pkg=$work/dkms src f
	dpkg-deb -x "$work"/a/numab-minwait-dkms_"$version"_all.deb "$pkg"
	src=$pkg/usr/src/numab-minwait-$version
	for f in $(git ls-files module) scripts/dkms-check-hooks.sh; do
		cmp -- "$f" "$src/$f"
	done
	diff <(cd "$src" && find . -type f | sort) \
		<( (echo ./dkms.conf; git ls-files module |
			sed 's|^|./|'; echo ./scripts/dkms-check-hooks.sh) | sort)
	grep -qx "PACKAGE_VERSION=\"$version\"" "$src/dkms.conf"
	grep -qx 'PACKAGE_NAME="numab-minwait"' "$src/dkms.conf"
}
tap_run "numab-minwait-dkms' payload is the module's DKMS source" dkms_payload

# shellcheck disable=SC2317 # called by tap_run
one_version() {
	local pkg=$work/tools page
	[[ $("$pkg/usr/bin/numab-run" --version) == "numab-run $version" ]]
	for page in "$pkg"/usr/share/man/man*/*.gz; do
		zcat -- "$page" | grep -q "^\.TH .* \"numab-minwait $version\"$"
	done
	for deb in "$work"/a/*.deb; do
		[[ $(dpkg-deb -f "$deb" Version) == "$version" ]]
	done
}
tap_run "one version ($version): packages, numab-run, man pages" one_version

exit "$tap_failed"
