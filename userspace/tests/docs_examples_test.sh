#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# On the host: the shell examples of README.md and qemu/README.md are
# valid bash and name what exists: make targets of the Makefile, options
# of qemu/run --help, guest commands of the image (a program of
# userspace/ or a command copied from this machine), test programs that
# run_tests.sh knows, --preload before a guest command that needs the
# module (numab-run). The commands that do not boot a kernel (qemu/run
# --help, run_tests.sh --help, make help) are run. A block fenced as
# "sh real-machine" is for a machine of the reader's own: checked as bash
# only.  TAP, one result per document.
#
#   userspace/tests/docs_examples_test.sh [DOC.md...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=userspace/tests/tap.sh
. userspace/tests/tap.sh

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT

qemu/run --help > "$work/qemu-run.help"
userspace/tests/run_tests.sh --help > "$work/run-tests.help"
make --no-print-directory help > /dev/null
{ make -pRrq -f Makefile : 2> /dev/null || true; } |
	awk -F: '/^[a-zA-Z][a-zA-Z0-9_.-]*:/ { print $1 }' | sort -u > "$work/targets"

# check_line LINE: what one command line names.
# shellcheck disable=SC2317 # check_doc, called by tap_run, calls it
check_line() {
	local -a words
	local w i cmd="" preload=0
	read -r -a words <<< "$1"
	# Leading VAR=value assignments.
	for ((i = 0; i < ${#words[@]}; i++)); do
		[[ ${words[i]} == [A-Z_]*=* ]] || break
	done
	case ${words[i]:-} in
	make)
		for w in "${words[@]:i+1}"; do
			[[ $w == *=* || $w == -* ]] && continue
			grep -qx -- "$w" "$work/targets" ||
				{ echo "make target '$w' does not exist: $1"; return 1; }
		done
		;;
	qemu/run)
		for ((i++; i < ${#words[@]}; i++)); do
			w=${words[i]}
			[[ $w == -- ]] && { cmd=${words[i + 1]:-}; break; }
			[[ $w == --preload ]] && preload=1
			[[ $w == -* ]] || continue
			grep -qE -- "(^|[ ,])$w([ ,=]|$)" "$work/qemu-run.help" ||
				{ echo "qemu/run has no option '$w': $1"; return 1; }
		done
		# A guest command: a path, a program of the guest image, or a
		# command the image copies from this machine.
		if [[ -n $cmd && $cmd != /* && $cmd != *=* ]] &&
			! compgen -G "userspace/*/$cmd" > /dev/null &&
			! compgen -G "userspace/*/$cmd.c" > /dev/null &&
			! command -v "$cmd" > /dev/null; then
			echo "no program '$cmd' in the guest: $1"
			return 1
		fi
		if [[ $cmd == numab-run ]] && ((!preload)); then
			echo "numab-run needs the module: --preload missing: $1"
			return 1
		fi
		if [[ $cmd == run_tests.sh ]]; then
			for w in "${words[@]:i+2}"; do
				grep -qw -- "$w" "$work/run-tests.help" ||
					{ echo "no test '$w': $1"; return 1; }
			done
		fi
		;;
	esac
}

# check_doc FILE: every sh block of FILE.
# shellcheck disable=SC2317 # called by tap_run
check_doc() {
	local line block=0 kind="" n=0 bad=0
	while IFS= read -r line; do
		if ((!block)) && [[ $line =~ ^\`\`\`sh(\ (.*))?$ ]]; then
			block=1 kind=${BASH_REMATCH[2]} n=$((n + 1))
			: > "$work/block"
		elif ((block)) && [[ $line == '```' ]]; then
			block=0
			bash -n "$work/block" || { echo "block $n: not valid bash"; bad=1; }
		elif ((block)); then
			printf '%s\n' "$line" >> "$work/block"
			[[ $kind == real-machine ]] && continue
			line=${line%%#*}
			[[ -n ${line// /} ]] || continue
			check_line "$line" || bad=1
		fi
	done < "$1"
	((n > 0)) || { echo "no sh block in $1"; bad=1; }
	return "$bad"
}

(($#)) || set -- README.md qemu/README.md
echo "TAP version 13"
echo "1..$#"
for doc in "$@"; do
	tap_run "the shell examples of $doc name what exists" check_doc "$doc"
done
exit "$tap_failed"
