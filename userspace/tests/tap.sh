# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # tap_n, tap_failed: read by the sourcing script
#
# TAP results for the shell tests and checks, sourced by them (next to
# them in the guest's /opt/numab/bin too):
#
#   tap_result STATUS NAME   "ok N NAME" when STATUS is 0, else "not ok"
#   tap_run NAME CMD...      run CMD: "ok N - NAME", or "not ok" with its
#                            output as "#" lines
#
# They count in tap_n, and set tap_failed to 1 on a failure: end with
# "exit $tap_failed" (and print "1..$tap_n" when no plan came first).

tap_n=0
tap_failed=0

tap_result() {
	tap_n=$((tap_n + 1))
	if (($1 == 0)); then
		echo "ok $tap_n $2"
	else
		echo "not ok $tap_n $2"
		tap_failed=1
	fi
}

tap_run() {
	local name=$1 out
	shift
	tap_n=$((tap_n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $tap_n - $name"
	else
		echo "not ok $tap_n - $name"
		printf '%s\n' "$out" | sed 's/^/#   /'
		tap_failed=1
	fi
}
