#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest runner for the numab_minwait tests: one TAP stream.
#
#   run_tests.sh [TEST|GROUP...]
#
# Runs the test programs that sit next to this script (all of them, or
# the ones and groups named) with the module loaded, through the kernel
# tree's kselftest runner (../kselftest/runner.sh): one plan, one result
# per program, each program's own TAP nested as "# " lines, a timeout per
# program (./settings). Exit status: 1 if a program failed, 2 on a usage
# error.
set -euo pipefail

BIN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODULE=numab_minwait
export PATH="$PATH:/sbin:/usr/sbin"

OUR_TESTS=(
	seed_min_wait_test.sh
	prctl_numab_test
	numab_lifetime_test
	epoll_min_wait_test
	epoll_min_events_test
	epoll_min_wait_hold_test
	epoll_min_wait_adaptive_test
	epoll_dup_storm_test
	numab_run_test
	libminwait_test.sh
	numab_balancing_test.sh
	fuzz_test
	stress_test
	fault_inject_test
)
# The kernel's own selftest, as a regression suite.
UPSTREAM_TESTS=(
	epoll_wakeup_test.sh
	epoll_wakeup_nomodule_test.sh
)
# For the debug kernel's lockup and stall detectors and kmemleak, in make
# check-debug (all tests, or "debug") but not in make check.
DEBUG_TESTS=(
	epoll_dup_storm_65536_test.sh
	kmemleak_test.sh
)
ALL_TESTS=("${OUR_TESTS[@]}" "${UPSTREAM_TESTS[@]}" "${DEBUG_TESTS[@]}")

usage() {
	echo "Usage: $0 [TEST|ours|upstream|debug...]"
	echo "ours: ${OUR_TESTS[*]}"
	echo "upstream: ${UPSTREAM_TESTS[*]}"
	echo "debug: ${DEBUG_TESTS[*]}"
}

tests=()
(($#)) || tests=("${ALL_TESTS[@]}")
for name in "$@"; do
	case $name in
	-h | --help) usage; exit 0 ;;
	ours) tests+=("${OUR_TESTS[@]}") ;;
	upstream) tests+=("${UPSTREAM_TESTS[@]}") ;;
	debug) tests+=("${DEBUG_TESTS[@]}") ;;
	*)
		if [[ " ${ALL_TESTS[*]} " != *" $name "* ]]; then
			echo "$0: unknown test '$name'" >&2
			usage >&2
			exit 2
		fi
		tests+=("$name")
		;;
	esac
done

grep -qs ' /sys/kernel/debug debugfs ' /proc/mounts ||
	mount -t debugfs debugfs /sys/kernel/debug ||
	echo "# cannot mount debugfs on /sys/kernel/debug"
[[ -d /sys/module/$MODULE ]] || modprobe "$MODULE" ||
	echo "# modprobe $MODULE failed"
# A debug kernel: forget what kmemleak found during the boot, so that
# kmemleak_test.sh reports what the tests leaked.
kmemleak=/sys/kernel/debug/kmemleak
if [[ -w $kmemleak ]]; then
	echo scan > "$kmemleak"
	echo "# kmemleak: $(grep -c "unreferenced object" "$kmemleak" || true)" \
		"suspected leaks from the boot, cleared"
	echo clear > "$kmemleak"
fi

# runner.sh is plain sh, written without set -eu; its output is the TAP
# stream, and a "not ok" at its top level is a failed program.
export BASE_DIR
BASE_DIR=$(dirname "$BIN_DIR")
cd "$BIN_DIR"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
(
	set +euo pipefail
	# shellcheck source=/dev/null # the kernel tree's, installed beside us
	. "$BASE_DIR/kselftest/runner.sh"
	run_many "${tests[@]/#/./}"
) | tee "$out"
! grep -q '^not ok' "$out"
