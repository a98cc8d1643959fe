#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a guest kernel from Debian's linux-source-SERIES: extract, apply a
# patch series with git am, configure tinyconfig + fragments, build bzImage
# and modules, stage modules_install.  With --bisect, build each commit of
# the series instead (is it bisectable?); with --purge, remove what this
# script put in the cache.
#
# Each distinct input (source package version, series, fragments, this
# script itself) gets its own tree under the cache folder, so an
# unchanged input is reused as it is and a changed one starts from a
# pristine tree.  ccache, when present, speeds up the compiles of a new
# tree.  The full output of a build goes to a log; the terminal gets its
# path, a line a minute and, on failure, the log's tail.
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 --link DIR [--series S] [--patch MBOX] [--fragment FILE]...
          [--name NAME] [--log FILE]
       $0 --bisect [--series S] [--patch MBOX] [--fragment FILE]...
       $0 --purge

  --link DIR       symlink to create to the built tree (src/, obj/, modules/)
  --series S       the kernel: Debian's linux-source-S (default: the first
                   line of kernel/series)
  --patch MBOX     patch series to apply with git am (none: stock kernel)
  --fragment FILE  config fragment merged onto tinyconfig (repeatable; a
                   symbol set by a later fragment replaces its earlier line)
  --name NAME      label for the cache folder and the log (default: kernel)
  --log FILE       the build's full output
                   (default: build/logs/NAME-SERIES.log)
  --bisect         build each commit of MBOX in turn, in the cache's
                   lint-bisect/ tree; logs build/logs/lint-bisect-SERIES-N.log
  --purge          remove the trees, the bisect tree and the ccache that
                   this script made in the cache (make distclean)

Environment: NUMAB_CACHE (default /var/cache/numab-minwait as root, else
~/.cache/numab-minwait), JOBS.
Exit status: 0 when built, 1 when a build failed, 2 on a usage error.
USAGE
}

top=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
if ((EUID == 0)); then
	cache="${NUMAB_CACHE:-/var/cache/numab-minwait}"
else
	cache="${NUMAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numab-minwait}"
fi
jobs="${JOBS:-$(nproc)}"
logs=$top/build/logs

bad_usage() {
	echo "$0: $*" >&2
	echo "Try '$0 --help'." >&2
	exit 2
}

link="" patch="" name=kernel log="" mode=build
series=$(awk '!/^#/ && NF { print $1; exit }' "$top/kernel/series")
fragments=()
need_arg() {
	(($2 >= 2)) || bad_usage "option '$1' needs an argument"
}
while (($#)); do
	case "$1" in
	--link) need_arg "$1" $#; link="$2"; shift 2 ;;
	--series) need_arg "$1" $#; series="$2"; shift 2 ;;
	--patch) need_arg "$1" $#; patch=$(realpath "$2"); shift 2 ;;
	--fragment) need_arg "$1" $#; fragments+=("$(realpath "$2")"); shift 2 ;;
	--name) need_arg "$1" $#; name="$2"; shift 2 ;;
	--log) need_arg "$1" $#; log="$2"; shift 2 ;;
	--bisect) mode=bisect; shift ;;
	--purge) mode=purge; shift ;;
	-h|--help) usage; exit 0 ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
done

say() {
	printf 'kernel: %s\n' "$*"
}

# Take the cache's build lock (one kernel build at a time on the machine).
lock() {
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	if ! flock -n 9; then
		say "waiting for another kernel build (lock $cache/.lock)"
		flock 9
	fi
}

# The trees this script makes: NAME-KEY (16 hex digits) with a source
# tree, lint-bisect/, and ccache/ (see CCACHE_DIR below).
purge() {
	local d
	[[ -d $cache ]] || return 0
	lock
	for d in "$cache"/*-????????????????; do
		[[ -d $d/src && ${d##*-} =~ ^[0-9a-f]{16}$ ]] || continue
		say "removing $d"
		rm -rf -- "$d"
	done
	for d in "$cache/lint-bisect" "$cache/ccache"; do
		[[ -d $d ]] || continue
		say "removing $d"
		rm -rf -- "$d"
	done
	rm -f -- "$cache/.lock"
	rmdir -- "$cache" 2>/dev/null || true
}
if [[ $mode == purge ]]; then
	purge
	exit 0
fi

[[ $mode == bisect || -n $link ]] || bad_usage "--link or --bisect is required"
((${#fragments[@]})) || bad_usage "at least one --fragment is required"
[[ $mode == build || -n $patch ]] || bad_usage "--bisect needs --patch"

package=linux-source-$series
tarball=/usr/src/$package.tar.xz
[[ -r "$tarball" ]] || { echo "$0: $tarball missing (make deps)" >&2; exit 1; }
srcver=$(dpkg-query -W -f '${Version}' "$package")

# Build from a copy of the inputs taken now: a build that waits for the
# lock must not apply a series that changed meanwhile under this key.
inputs=$(mktemp -d)
trap 'rm -rf "$inputs"' EXIT
if [[ -n "$patch" ]]; then
	cp "$patch" "$inputs/series.patch"
	patch=$inputs/series.patch
fi

# The fragments as one, each symbol once: configure insists on every
# line, and merge_config.sh would let a later line win over an earlier one
# that the check would then report lost.
merged=$inputs/fragment
: > "$merged"
for f in "${fragments[@]}"; do
	awk '
	function symbol(line, f) {
		if (line ~ /^CONFIG_[A-Za-z0-9_]+=/)
			return substr(line, 1, index(line, "=") - 1)
		if (line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/) {
			split(line, f, " ")
			return f[2]
		}
		return ""
	}
	FNR == NR {
		s = symbol($0)
		if (s != "")
			overridden[s] = 1
		next
	}
	!(symbol($0) in overridden)
	' "$f" "$merged" > "$merged.new"
	cat "$f" >> "$merged.new"
	mv "$merged.new" "$merged"
done

# unpack DIR: the pristine source tree in DIR/src.
unpack() {
	say "extracting $tarball into $1/src"
	tar -C "$1" -xf "$tarball"
	mv "$1/$package" "$1/src"
}

git_src() {
	# No auto gc: it would repack a kernel tree in the background, holding
	# the build lock it inherited.
	git -C "$src" -c gc.auto=0 -c user.name=numab \
		-c user.email=numab@localhost "$@"
}

# apply: the series as commits on one commit of the pristine tree.
apply() {
	say "applying $(grep -c '^Subject: \[PATCH' "$patch") patches"
	git_src init -q
	git_src add -f -A .
	git_src commit -q -m "$package $srcver"
	git_src am -q --whitespace=error-all "$patch"
}

# configure: tinyconfig + the fragments in $obj, every line of them kept.
configure() {
	local line missing=0
	mkdir -p "$obj"
	make -s -C "$src" O="$obj" LOCALVERSION= tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"$merged" >/dev/null
	make -s -C "$src" O="$obj" LOCALVERSION= olddefconfig
	# Kconfig drops what it cannot satisfy: insist on every line.  A
	# symbol that is not set may also be one this kernel does not have
	# (CONFIG_SLOB, gone in 6.4).
	while IFS= read -r line; do
		if [[ "$line" =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			grep -q "^${BASH_REMATCH[1]}=" "$obj/.config" || continue
		elif [[ ! "$line" =~ ^CONFIG_ ]] || grep -qxF "$line" "$obj/.config"; then
			continue
		fi
		say "config lost: $line" >&2
		missing=1
	done < "$merged"
	((missing == 0))
}

# compile LOG TARGET...: make TARGET... in $obj with the whole output in
# LOG, a line a minute on the terminal, and the log's tail on failure.
compile() {
	local log=$1 rc=0 beat start=$SECONDS
	shift
	make -C "$src" O="$obj" LOCALVERSION= CC="$cc" -j"$jobs" "$@" \
		>>"$log" 2>&1 &
	local pid=$!
	(
		while sleep 60 && kill -0 "$pid" 2>/dev/null; do
			last=$(grep -E '^  [A-Z]+ ' "$log" | tail -n 1 |
				awk '{ print $NF }')
			printf 'kernel: %dm elapsed, at %s\n' \
				$(((SECONDS - start) / 60)) "${last:-the start}"
		done
	) &
	beat=$!
	wait "$pid" || rc=$?
	kill "$beat" 2>/dev/null || true
	wait "$beat" 2>/dev/null || true
	if ((rc)); then
		say "make $* failed (status $rc); the end of $log:" >&2
		tail -n 40 "$log" >&2
		return 1
	fi
}

cc=gcc
if command -v ccache >/dev/null; then
	cc="ccache gcc"
	export CCACHE_DIR="$cache/ccache"
fi

# --bisect: each commit of the series built on its own, incrementally in
# one object folder.  Commit 2 of each series changes headers that most
# of the kernel includes: with a warm ccache, a run took 20 min on 2 cores.
if [[ $mode == bisect ]]; then
	work=$cache/lint-bisect
	src=$work/src obj=$work/obj
	export CCACHE_BASEDIR="$work"
	mkdir -p "$logs"
	lock
	start=$SECONDS
	rm -rf "$work"
	mkdir -p "$work"
	unpack "$work"
	apply
	base=$(git_src rev-parse HEAD~"$(grep -c '^Subject: \[PATCH' "$patch")")
	mapfile -t commits < <(git_src rev-list --reverse "$base..HEAD")
	configure
	failed=0 i=0
	for commit in "${commits[@]}"; do
		i=$((i + 1))
		subject=$(git_src log -1 --format=%s "$commit")
		log=$logs/lint-bisect-$series-$i.log
		t0=$SECONDS
		git_src checkout -q "$commit"
		: >"$log"
		status=ok
		if ! make -C "$src" O="$obj" LOCALVERSION= olddefconfig \
			>>"$log" 2>&1 || ! compile "$log" bzImage modules; then
			status="FAILED (log: $log)"
			failed=$((failed + 1))
		fi
		warnings=$(grep -c -E '(^|: )warning:' "$log" || true)
		say "$i/${#commits[@]} $subject: $status, $((SECONDS - t0))s," \
			"$warnings compiler warnings"
	done
	say "$((${#commits[@]} - failed)) of ${#commits[@]} commits built," \
		"$failed failed, in $((SECONDS - start))s"
	((failed == 0))
	exit
fi

# This script is an input too: an edit to it never reuses a tree built
# by an older version (ccache keeps the rebuild short).
key=$( {
	echo "$srcver"
	sha256sum "$top/kernel/build.sh" | cut -d' ' -f1
	sha256sum "$merged" | cut -d' ' -f1
	if [[ -n "$patch" ]]; then sha256sum "$patch" | cut -d' ' -f1; fi
} | sha256sum | cut -c1-16)
tree="$cache/$name-$key"
src=$tree/src obj=$tree/obj
export CCACHE_BASEDIR="$tree"
log=${log:-$logs/$name-$series.log}
mkdir -p "$(dirname "$link")" "$(dirname "$log")"

reuse() {
	say "reusing $tree"
	ln -sfn "$tree" "$link"
	exit 0
}

# A finished tree needs no lock; a build waits for any other one.
[[ -e "$tree/.done" ]] && reuse
lock
[[ -e "$tree/.done" ]] && reuse

rm -rf "$tree"
mkdir -p "$tree"
unpack "$tree"
[[ -z $patch ]] || apply
configure
: >"$log"
say "building $name with -j$jobs (a cold build takes ~9 min on 2 cores);" \
	"full output in $log"
compile "$log" bzImage modules
make -s -C "$src" O="$obj" LOCALVERSION= INSTALL_MOD_PATH="$tree/modules" \
	modules_install >>"$log" 2>&1
make -s -C "$src" O="$obj" LOCALVERSION= kernelrelease > "$tree/kernel.release"
touch "$tree/.done"

# Keep the three most recent trees of this name and series (the series
# share a name: a tree's release says which it is).
find "$cache" -maxdepth 1 -name "$name-????????????????" -type d -printf '%T@ %p\n' |
	sort -rn | cut -d' ' -f2- | while IFS= read -r t; do
		if [[ $(cat "$t/kernel.release" 2>/dev/null) == "$series".* ]]; then
			echo "$t"
		fi
	done | tail -n +4 | xargs -r rm -rf

ln -sfn "$tree" "$link"
say "$(cat "$tree/kernel.release") ready in $tree"
