#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the two Debian packages of debian/, numab-minwait-dkms and
# numab-tools, built with dpkg-buildpackage from a copy of the tree (the
# files git knows, committed or not) so that the packaging's own files
# stay out of the work tree; then lintian, which fails on any error or
# warning. The packages land in build/deb/; nothing is installed here.
#
#   scripts/deb.sh [--out DIR] [--no-lintian]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=build/deb lintian=1
while (($#)); do
	case "$1" in
	--out) [[ $# -ge 2 ]] || { echo "deb: --out needs a folder" >&2; exit 2; }
		out=$2; shift ;;
	--no-lintian) lintian=0 ;;
	*) echo "deb: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

scripts/deps.sh --deb
version=$(scripts/version.sh)
mkdir -p -- "$out"
out=$(cd -- "$out" && pwd)
# Only what an earlier run left: --out may be a folder with other files.
rm -f -- "$out"/numab-minwait-dkms_* "$out"/numab-tools_* \
	"$out"/numab-tools-dbgsym_* "$out"/numab-minwait_* "$out/build.log"
src=$out/numab-minwait-$version
case "$PWD/" in
"$src"/*)
	echo "deb: --out $out would put the build copy at $src, over this tree" >&2
	exit 2 ;;
esac
rm -rf -- "$src"
mkdir -- "$src"
git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -t "$src" --

# SOURCE_DATE_EPOCH: dpkg-buildpackage takes it from debian/changelog.
(cd "$src" && dpkg-buildpackage -b -us -uc >"$out/build.log" 2>&1) || {
	tail -n 30 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; the log: $out/build.log" >&2
	exit 1
}
rm -rf -- "$src"
changes=("$out"/numab-minwait_*_"$(dpkg --print-architecture)".changes)
[[ -f ${changes[0]} ]] || { echo "deb: no .changes in $out" >&2; exit 1; }
mapfile -t debs < <(sed -n 's/^ [0-9a-f]\{64\} [0-9]* \(.*\.deb\)$/\1/p' \
	"${changes[0]}")
echo "deb: built ${debs[*]} in $out"
if ((lintian)); then
	lintian --fail-on error,warning --info "${changes[0]}"
	echo "deb: lintian: no error, no warning"
fi
