#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint-bisect: is hooks.patch bisectable?  Applies the series one
# commit at a time onto a pristine linux-source-6.1 tree and builds the
# kernel (bzImage and its in-tree modules; numab_minwait.ko is not built)
# at each commit with the guest configuration, incrementally in one object
# folder and with ccache.  Prints one line per commit and the total time;
# exits non-zero when a commit does not build.
#
# Commit 2 changes headers that most of the kernel includes: with a warm
# ccache, a run took 20 min on 2 cores (commits 1-5: 228, 734, 47, 60,
# 16 s).  Holds the kernel build lock of scripts/build-kernel.sh
# (NUMAB_CACHE/.lock) for the whole run.
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 [--patch MBOX] [--fragment FILE]...

  --patch MBOX     series to check (default: hooks.patch)
  --fragment FILE  config fragment merged onto tinyconfig (repeatable;
                   default: qemu/guest.config)

Environment: NUMAB_CACHE (default /var/cache/numab-minwait), JOBS.
The tree is NUMAB_CACHE/lint-bisect/; each commit's build log is
build/logs/lint-bisect-N.log.
USAGE
}

top=$(cd "$(dirname "$0")/.." && pwd)
patch=$top/hooks.patch
fragments=()
while (($#)); do
	case "$1" in
	--patch) patch=$(realpath "$2"); shift 2 ;;
	--fragment) fragments+=("$(realpath "$2")"); shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 64 ;;
	esac
done
((${#fragments[@]})) || fragments=("$top/qemu/guest.config")

tarball=/usr/src/linux-source-6.1.tar.xz
[[ -r "$tarball" ]] || { echo "$0: $tarball missing (make deps)" >&2; exit 1; }
command -v ccache >/dev/null || { echo "$0: ccache missing (make deps)" >&2; exit 1; }

cache="${NUMAB_CACHE:-/var/cache/numab-minwait}"
jobs="${JOBS:-$(nproc)}"
work=$cache/lint-bisect
src=$work/src
obj=$work/obj
logs=$top/build/logs
mkdir -p "$cache" "$logs"

exec 9>"$cache/.lock"
if ! flock -n 9; then
	echo "lint-bisect: waiting for the kernel build lock $cache/.lock"
	flock 9
fi

start=$(date +%s)
rm -rf "$work"
mkdir -p "$work" "$obj"
echo "lint-bisect: extracting $tarball"
tar -C "$work" -xf "$tarball"
mv "$work/linux-source-6.1" "$src"

git_src() {
	git -C "$src" -c user.name=numab -c user.email=numab@localhost "$@"
}
git_src init -q
git_src add -f -A .
git_src commit -q -m "linux-source-6.1 $(dpkg-query -W -f '${Version}' linux-source-6.1)"
base=$(git_src rev-parse HEAD)
git_src am -q --whitespace=error-all "$patch"
mapfile -t commits < <(git_src rev-list --reverse "$base..HEAD")
total=${#commits[@]}
echo "lint-bisect: $total commits on $base"

make -s -C "$src" O="$obj" LOCALVERSION= tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"${fragments[@]}" >/dev/null

export CCACHE_DIR="$cache/ccache" CCACHE_BASEDIR="$work"
failed=0
i=0
for commit in "${commits[@]}"; do
	i=$((i + 1))
	subject=$(git_src log -1 --format=%s "$commit")
	log=$logs/lint-bisect-$i.log
	t0=$(date +%s)
	git_src checkout -q "$commit"
	status=ok
	if ! make -C "$src" O="$obj" LOCALVERSION= olddefconfig >"$log" 2>&1 ||
		! make -C "$src" O="$obj" LOCALVERSION= CC="ccache gcc" \
			-j"$jobs" bzImage modules >>"$log" 2>&1; then
		status="FAILED (log: $log)"
		failed=$((failed + 1))
	fi
	warnings=$(grep -c -E '(^|: )warning:' "$log" || true)
	printf 'lint-bisect: %d/%d %s: %s, %ds, %s compiler warnings\n' \
		"$i" "$total" "$subject" "$status" $(($(date +%s) - t0)) "$warnings"
done
printf 'lint-bisect: %d of %d commits built, %d failed, in %ds\n' \
	$((total - failed)) "$total" "$failed" $(($(date +%s) - start))
((failed == 0))
