#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a guest kernel from Debian's linux-source-6.1: extract, apply a
# patch series with git am, configure tinyconfig + fragments, build bzImage
# and modules, stage modules_install.
#
# Each distinct input (source package version, series, fragments, this
# script) gets its own tree under the cache folder, so an unchanged input
# is reused as it is and a changed one starts from a pristine tree.
# ccache, when present, speeds up the compiles of a new tree.
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 --link DIR [--patch MBOX] [--fragment FILE]... [--name NAME]

  --link DIR       symlink to create to the built tree (src/, obj/, modules/)
  --patch MBOX     patch series to apply with git am (none: stock kernel)
  --fragment FILE  config fragment merged onto tinyconfig (repeatable)
  --name NAME      label for the cache folder (default: kernel)

Environment: NUMAB_CACHE (default /var/cache/numab-minwait), JOBS.
USAGE
}

link="" patch="" name="kernel"
fragments=()
while (($#)); do
	case "$1" in
	--link) link="$2"; shift 2 ;;
	--patch) patch="$2"; shift 2 ;;
	--fragment) fragments+=("$2"); shift 2 ;;
	--name) name="$2"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 64 ;;
	esac
done
[[ -n "$link" && ${#fragments[@]} -gt 0 ]] || { usage >&2; exit 64; }
mkdir -p "$(dirname "$link")"

tarball=/usr/src/linux-source-6.1.tar.xz
[[ -r "$tarball" ]] || { echo "$0: $tarball missing (make deps)" >&2; exit 1; }

cache="${NUMAB_CACHE:-/var/cache/numab-minwait}"
jobs="${JOBS:-$(nproc)}"
srcver=$(dpkg-query -W -f '${Version}' linux-source-6.1)

# Build from a copy of the inputs taken now: a build that waits for the
# lock must not apply a series that changed meanwhile under this key.
inputs=$(mktemp -d)
trap 'rm -rf "$inputs"' EXIT
for i in "${!fragments[@]}"; do
	cp "${fragments[i]}" "$inputs/fragment-$i"
	fragments[i]=$inputs/fragment-$i
done
if [[ -n "$patch" ]]; then
	cp "$patch" "$inputs/series.patch"
	patch=$inputs/series.patch
fi

# Bump when a change to this script changes what it builds.
recipe=1
key=$( {
	echo "$srcver recipe $recipe"
	sha256sum "${fragments[@]}" | cut -d' ' -f1
	if [[ -n "$patch" ]]; then sha256sum "$patch" | cut -d' ' -f1; fi
} | sha256sum | cut -c1-16)
tree="$cache/$name-$key"

reuse() {
	echo "kernel: reusing $tree"
	ln -sfn "$tree" "$link"
	exit 0
}

# A finished tree needs no lock; a build waits for any other one.
[[ -e "$tree/.done" ]] && reuse
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
[[ -e "$tree/.done" ]] && reuse

rm -rf "$tree"
mkdir -p "$tree"
echo "kernel: extracting $tarball into $tree/src"
tar -C "$tree" -xf "$tarball"
mv "$tree/linux-source-6.1" "$tree/src"

if [[ -n "$patch" ]]; then
	echo "kernel: applying $(grep -c '^Subject: \[PATCH' "$patch") patches"
	git -C "$tree/src" init -q
	git -C "$tree/src" add -f -A .
	git -C "$tree/src" -c user.name=debian -c user.email=debian@localhost \
		commit -q -m "linux-source-6.1 $srcver"
	git -C "$tree/src" -c user.name=numab -c user.email=numab@localhost \
		am -q --whitespace=error-all "$(realpath "$patch")"
fi

obj="$tree/obj"
mkdir -p "$obj"
make -s -C "$tree/src" O="$obj" LOCALVERSION= tinyconfig >/dev/null
"$tree/src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"${fragments[@]}" >/dev/null
make -s -C "$tree/src" O="$obj" LOCALVERSION= olddefconfig

# Kconfig drops what it cannot satisfy: insist on every line we asked for.
missing=0
while IFS= read -r line; do
	[[ "$line" =~ ^(CONFIG_|#\ CONFIG_.*is\ not\ set) ]] || continue
	if ! grep -qxF "$line" "$obj/.config"; then
		echo "kernel: config lost: $line" >&2
		missing=1
	fi
done < <(cat "${fragments[@]}")
((missing == 0)) || exit 1

cc=gcc
if command -v ccache >/dev/null; then
	cc="ccache gcc"
	export CCACHE_DIR="$cache/ccache" CCACHE_BASEDIR="$tree"
fi
echo "kernel: building with -j$jobs (a cold build takes ~8 min on 2 cores)"
make -s -C "$tree/src" O="$obj" LOCALVERSION= CC="$cc" -j"$jobs" bzImage modules
make -s -C "$tree/src" O="$obj" LOCALVERSION= INSTALL_MOD_PATH="$tree/modules" \
	modules_install
make -s -C "$tree/src" O="$obj" LOCALVERSION= kernelrelease > "$tree/kernel.release"
touch "$tree/.done"

# Keep the three most recent trees of this name.
find "$cache" -maxdepth 1 -name "$name-????????????????" -type d -printf '%T@ %p\n' |
	sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf

ln -sfn "$tree" "$link"
echo "kernel: $(cat "$tree/kernel.release") ready in $tree"
