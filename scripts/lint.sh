#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint (and CI): checkpatch.pl --strict on each patch of hooks.patch
# and on the module sources, shellcheck on every tracked shell script.
# Takes seconds; the per-commit build is scripts/lint-bisect.sh.  One line
# per check, then "N passed, N failed"; exits non-zero on any failure.
#
# checkpatch.pl comes from the guest kernel tree (build/kernel/src) when it
# is there, else from Debian's linux-source-6.1 tarball, extracted once
# into build/lint/ (~20 s).  CHECKPATCH=path overrides both.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

tarball=/usr/src/linux-source-6.1.tar.xz
lintdir=build/lint

# checkpatch.pl wants spelling.txt and const_structs.checkpatch beside it.
find_checkpatch() {
	local members=(scripts/checkpatch.pl scripts/spelling.txt
		scripts/const_structs.checkpatch)
	if [[ -n ${CHECKPATCH:-} ]]; then
		echo "$CHECKPATCH"
	elif [[ -x build/kernel/src/scripts/checkpatch.pl ]]; then
		echo build/kernel/src/scripts/checkpatch.pl
	else
		if [[ ! -x $lintdir/linux-source-6.1/scripts/checkpatch.pl ]]; then
			[[ -r $tarball ]] ||
				{ echo "lint: $tarball missing (make deps)" >&2; return 1; }
			mkdir -p "$lintdir"
			tar -C "$lintdir" -xf "$tarball" \
				"${members[@]/#/linux-source-6.1/}"
		fi
		echo "$lintdir/linux-source-6.1/scripts/checkpatch.pl"
	fi
}

passed=0 failed=0
result() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		printf '%s\n' "$out" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}

checkpatch=$(find_checkpatch)
mails=$(mktemp -d)
trap 'rm -rf "$mails"' EXIT
git mailsplit -o"$mails" hooks.patch >/dev/null
mapfile -t patches < <(find "$mails" -type f | sort)
for p in "${patches[@]}"; do
	# The Subject header, unfolded.
	subject=$(awk '/^Subject: / { s = substr($0, 10); folded = 1; next }
		folded && /^[ \t]/ { sub(/^[ \t]+/, " "); s = s $0; next }
		folded { print s; exit }' "$p")
	result "checkpatch --strict: $subject" \
		"$checkpatch" --strict --no-tree --quiet "$p"
done

mapfile -t module_sources < <(git ls-files 'module/*.[ch]')
result "checkpatch --strict -f: ${module_sources[*]}" \
	"$checkpatch" --strict --no-tree --quiet -f "${module_sources[@]}"

mapfile -t scripts < <(scripts/list-shell-scripts.sh)
result "shellcheck: ${#scripts[@]} scripts" shellcheck "${scripts[@]}"

echo "$passed passed, $failed failed"
((failed == 0))
