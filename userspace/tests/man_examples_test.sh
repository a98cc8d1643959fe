#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# On the host: every C program of the man pages' EXAMPLES sections
# compiles as printed (against the installed header, userspace/include),
# warnings as errors.  TAP, one result per program.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=userspace/tests/tap.sh
. userspace/tests/tap.sh

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT

# c_examples PAGE: each .EX/.EE block of its EXAMPLES section that holds a
# main(), as plain C (the roff escapes undone), into $work/PAGE-N.c.
c_examples() {
	awk -v out="$work/${1##*/}" '
		/^\.SH / { in_ex = ($2 == "EXAMPLES") }
		in_ex && /^\.EX/ { blk = 1; n++; code = ""; next }
		in_ex && /^\.EE/ {
			blk = 0
			if (code ~ /\nmain\(/)
				print code > (out "-" n ".c")
			next
		}
		blk { code = code "\n" $0 }
	' "$1"
	for f in "$work/${1##*/}"-*.c; do
		[[ -e $f ]] || continue
		sed -i -e 's/\\-/-/g' -e 's/^\\&$//' -e 's/\\en/\\n/g' \
			-e 's/\\e/\\/g' "$f"
	done
}

echo "TAP version 13"
for page in docs/man/*.[0-9]*; do
	c_examples "$page"
done
mapfile -t programs < <(find "$work" -name '*.c' | sort)
echo "1..${#programs[@]}"
for c in "${programs[@]}"; do
	name=${c##*/}
	status=0
	"${CC:-cc}" -Wall -Wextra -Werror -Iuserspace/include -o "${c%.c}" "$c" \
		> "$work/cc.log" 2>&1 || status=$?
	tap_result "$status" "the C example of ${name%-*} compiles"
	sed 's/^/# /' "$work/cc.log"
done
((${#programs[@]} > 0)) || tap_failed=1
exit "$tap_failed"
