#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-all (what CI runs): make check on each kernel series named,
# one after the other whatever the earlier ones gave, then their TAP
# streams as one, build/logs/check-all.tap (each result named by its
# series), and its "N passed, N failed" line.  A series whose make check
# ends without its stream (a kernel that does not build) adds a failure.
# Exit status: 1 if anything failed, 2 on a usage error.
#
#   userspace/tests/check-all.sh SERIES...
set -euo pipefail

if (($# == 0)) || [[ $1 == -* ]]; then
	echo "usage: $0 SERIES..." >&2
	exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
mkdir -p build/logs
all=build/logs/check-all.tap
start=$SECONDS
declare -A status
for series in "$@"; do
	rm -f "build/$series/logs/check.tap"
	echo "# ==== make KSERIES=$series check"
	status[$series]=0
	make --no-print-directory KSERIES="$series" check || status[$series]=$?
done

n=0
{
	echo "TAP version 13"
	for series in "$@"; do
		tap=build/$series/logs/check.tap
		if [[ ! -f $tap ]] || ! grep -q '^1\.\.' "$tap"; then
			n=$((n + 1))
			echo "not ok $n - linux $series: make check exited ${status[$series]} without results"
			continue
		fi
		while IFS= read -r line; do
			if [[ $line =~ ^(not )?ok\ [0-9]+\ -\ (.*)$ ]]; then
				n=$((n + 1))
				echo "${BASH_REMATCH[1]}ok $n - linux $series: ${BASH_REMATCH[2]}"
			elif [[ $line == "#"* ]]; then
				echo "$line"
			fi
		done < "$tap"
	done
	echo "1..$n"
} > "$all"

echo "# ==== $(printf 'linux %s ' "$@")in $((SECONDS - start)) s; the TAP stream: $all"
grep '^not ok' "$all" || true
"$here/tap-summary.pl" "$all"
