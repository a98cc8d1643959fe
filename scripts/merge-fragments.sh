#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# merge-fragments.sh BASE OVERRIDE: print the kernel config fragment BASE
# without the lines for the symbols that OVERRIDE sets, then OVERRIDE.
# The result says each symbol once, so that build-kernel.sh, which checks
# every line of its fragments, can take it (merge_config.sh lets the later
# fragment win, the check would then report the earlier line lost).
set -euo pipefail

(($# == 2)) || { echo "usage: $0 BASE OVERRIDE" >&2; exit 64; }
base=$1 override=$2

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
' "$override" "$base"
cat "$override"
