#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint-quick (make check and CI run it): checkpatch.pl --strict on each
# patch of hooks.patch (6.1) and hooks-6.12.patch, each with the
# checkpatch.pl of its own kernel, and on the module sources; shellcheck
# on every tracked shell script, pyflakes on every Python file, mandoc
# -Tlint on the man pages and their rendered views up to date.  Takes
# seconds; the per-commit build is `make lint-bisect`.  Prints TAP, one
# result per check; exits non-zero on any failure.
#
# checkpatch.pl of a series comes from its guest kernel tree
# (build/SERIES/kernel/src) when it is there, else from Debian's
# linux-source-SERIES tarball, extracted once into build/lint/ (~20 s).
# CHECKPATCH=path overrides both.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

lintdir=build/lint
# The series and their patches (kernel/series); the module is checked
# with the newest, the last one.
declare -A series_patch=()
all_series=()
while read -r s p; do
	series_patch[$s]=$p
	all_series+=("$s")
done < <(awk '!/^#/ && NF' kernel/series)
newest=${all_series[-1]}

# find_checkpatch SERIES. checkpatch.pl wants spelling.txt and
# const_structs.checkpatch beside it.
find_checkpatch() {
	local series=$1 tarball=/usr/src/linux-source-$1.tar.xz
	local members=(scripts/checkpatch.pl scripts/spelling.txt
		scripts/const_structs.checkpatch)
	if [[ -n ${CHECKPATCH:-} ]]; then
		echo "$CHECKPATCH"
	elif [[ -x build/$series/kernel/src/scripts/checkpatch.pl ]]; then
		echo "build/$series/kernel/src/scripts/checkpatch.pl"
	else
		if [[ ! -x $lintdir/linux-source-$series/scripts/checkpatch.pl ]]; then
			[[ -r $tarball ]] ||
				{ echo "lint: $tarball missing (scripts/deps.sh --lint)" >&2; return 1; }
			mkdir -p "$lintdir"
			tar -C "$lintdir" -xf "$tarball" \
				"${members[@]/#/linux-source-$series/}"
		fi
		echo "$lintdir/linux-source-$series/scripts/checkpatch.pl"
	fi
}

# shellcheck source=userspace/tests/tap.sh
. userspace/tests/tap.sh
echo "TAP version 13"

# The tracked files of a kind: shell scripts (*.sh, or a sh/bash
# shebang), Python (*.py, or a python shebang).
tracked() {
	local f
	git ls-files | while IFS= read -r f; do
		[[ -f "$f" ]] || continue
		if [[ "$f" == *."$1" ]] || head -n 1 "$f" | grep -qE "$2"; then
			echo "$f"
		fi
	done
}

# What this script reads from outside the tree belongs to the packages
# that scripts/deps.sh --lint installs (make check and make lint-quick
# run it first): a package missing from that list fails here, on a
# machine that has it, rather than on a fresh one.
lint_deps() {
	local wanted path owner bad=0 s paths=()
	wanted=$(scripts/deps.sh --list --lint)
	for s in "${all_series[@]}"; do
		paths+=("/usr/src/linux-source-$s.tar.xz")
	done
	paths+=("$(command -v shellcheck)" "$(command -v mandoc)"
		"$(/usr/bin/python3 -c 'import pyflakes; print(pyflakes.__path__[0])')")
	for path in "${paths[@]}"; do
		owner=$(dpkg-query -S "$path" 2>/dev/null | head -n 1) ||
			{ echo "$path: no package has it"; bad=1; continue; }
		owner=${owner%%:*}
		grep -qx "$owner" <<<"$wanted" ||
			{ echo "$path is $owner's, not in scripts/deps.sh --lint"; bad=1; }
	done
	return "$bad"
}
tap_run "lint's dependencies are what scripts/deps.sh --lint installs" lint_deps

mails=$(mktemp -d)
trap 'rm -rf "$mails"' EXIT
for series in "${all_series[@]}"; do
	checkpatch=$(find_checkpatch "$series")
	mkdir "$mails/$series"
	git mailsplit -o"$mails/$series" "${series_patch[$series]}" >/dev/null
	mapfile -t patches < <(find "$mails/$series" -type f | sort)
	for p in "${patches[@]}"; do
		# The Subject header, unfolded.
		subject=$(awk '/^Subject: / { s = substr($0, 10); folded = 1; next }
			folded && /^[ \t]/ { sub(/^[ \t]+/, " "); s = s $0; next }
			folded { print s; exit }' "$p")
		tap_run "checkpatch --strict ($series): $subject" \
			"$checkpatch" --strict --no-tree --quiet "$p"
	done
done

checkpatch=$(find_checkpatch "$newest")
mapfile -t module_sources < <(git ls-files 'module/*.[ch]')
tap_run "checkpatch --strict -f: ${module_sources[*]}" \
	"$checkpatch" --strict --no-tree --quiet -f "${module_sources[@]}"

mapfile -t scripts < <(tracked sh '^#!.*\b(ba)?sh\b')
tap_run "shellcheck: ${#scripts[@]} scripts" shellcheck "${scripts[@]}"

mapfile -t python < <(tracked py '^#!.*\bpython')
tap_run "pyflakes: ${python[*]}" /usr/bin/python3 -m pyflakes "${python[@]}"

mapfile -t pages < <(git ls-files 'docs/man/*.[0-9]*')
tap_run "mandoc -Tlint: ${pages[*]##*/}" \
	mandoc -Tlint -W warning "${pages[@]}"
tap_run "docs/*.[0-9]*.md are the man pages rendered" docs/man/render.sh --check

echo "1..$tap_n"
((tap_failed == 0))
