#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest runner for the numab_minwait tests.
#
#   run_tests.sh [TEST...]
#
# Runs the test programs that sit next to this script (all of them, or the
# ones named), each from that directory, with the module loaded. Each
# "ok N" / "not ok N" line of a program's TAP output is one result
# ("ok N ... # SKIP" is a skip); a program that exits non-zero without any
# "not ok" line, or prints no result at all, adds one failure. The last
# line is "N passed, N failed" (", N skipped" when there are skips); the
# exit status is 1 if anything failed.
#
# Environment: EPOLL_SELFTEST overrides the path of the kernel's
# epoll_wakeup_test (default: /opt/numab/selftests/epoll_wakeup_test, or
# .../selftests/epoll/epoll_wakeup_test).

set -euo pipefail

BIN_DIR=${BASH_SOURCE[0]%/*}
[[ $BIN_DIR == "${BASH_SOURCE[0]}" ]] && BIN_DIR=.
BIN_DIR=$(cd "$BIN_DIR" && pwd)
MODULE=numab_minwait
MINWAIT_US_TEST=1234
export PATH="$PATH:/sbin:/usr/sbin"

OUR_TESTS=(
	seed_min_wait
	prctl_numab_test
	numab_lifetime_test
	epoll_min_wait_test
	epoll_min_events_test
	epoll_dup_storm_test
	numab_run_test
	libminwait_test
	numab_balancing_test
	fuzz_test
	stress_test
	fault_inject_test
)
# The kernel's own selftest, as a regression suite.
UPSTREAM_TESTS=(
	epoll_wakeup_test
	epoll_wakeup_test_nomodule
)
# Runs for the debug kernel's lockup and stall detectors, in make
# check-debug (all tests, or "debug") but not in make check.
DEBUG_TESTS=(
	epoll_dup_storm_test_65536
)
ALL_TESTS=("${OUR_TESTS[@]}" "${UPSTREAM_TESTS[@]}" "${DEBUG_TESTS[@]}")

passed=0
failed=0
skipped=0

RE_OK='^ok [0-9]+'
RE_NOT_OK='^not ok [0-9]+'
RE_SKIP='^ok [0-9]+.*#[[:space:]]*(SKIP|Skip|skip)'

usage() {
	echo "Usage: $0 [TEST|ours|upstream|debug...]"
	echo "Tests: ${ALL_TESTS[*]}"
	echo "ours: ${OUR_TESTS[*]}"
	echo "upstream: ${UPSTREAM_TESTS[*]}"
	echo "debug: ${DEBUG_TESTS[*]}"
}

# The first of the arguments that exists, else the first one.
first_existing() {
	local f

	for f in "$@"; do
		if [[ -e $f ]]; then
			echo "$f"
			return
		fi
	done
	echo "$1"
}

EPOLL_SELFTEST=${EPOLL_SELFTEST:-$(first_existing \
	/opt/numab/selftests/epoll_wakeup_test \
	/opt/numab/selftests/epoll/epoll_wakeup_test)}
# Shared objects may be installed beside the binaries or in ../lib.
LIBMINWAIT=$(first_existing "$BIN_DIR/libminwait.so" \
	"$BIN_DIR/../lib/libminwait.so")

module_loaded() {
	[[ -d /sys/module/$MODULE ]]
}

ensure_module() {
	if ! module_loaded && ! modprobe "$MODULE"; then
		echo "# modprobe $MODULE failed" >&2
	fi
}

debugfs_mounted() {
	local _ mnt type

	while read -r _ mnt type _; do
		[[ $mnt == /sys/kernel/debug && $type == debugfs ]] && return 0
	done < /proc/mounts
	return 1
}

mount_debugfs() {
	if ! debugfs_mounted &&
	   ! mount -t debugfs debugfs /sys/kernel/debug; then
		echo "# cannot mount debugfs on /sys/kernel/debug" >&2
	fi
}

# A kselftest (TAP) program: $1 name, the rest the command. Its output is
# shown as it comes and its results counted.
run_tap() {
	local name=$1 rc=0 line ok=0 skip=0 notok=0

	shift
	echo "# ---- $name"
	while IFS= read -r line; do
		printf '%s\n' "$line"
		if [[ $line =~ $RE_SKIP ]]; then
			skip=$((skip + 1))
		elif [[ $line =~ $RE_OK ]]; then
			ok=$((ok + 1))
		elif [[ $line =~ $RE_NOT_OK ]]; then
			notok=$((notok + 1))
		fi
	done < <("$@" 2>&1)
	wait "$!" || rc=$?

	passed=$((passed + ok))
	skipped=$((skipped + skip))
	failed=$((failed + notok))
	if ((rc != 0 && notok == 0)); then
		echo "# $name exited with status $rc without a failed test: counted as one failure"
		failed=$((failed + 1))
	elif ((ok + skip + notok == 0)); then
		echo "# $name reported no result: counted as one failure"
		failed=$((failed + 1))
	fi
}

run_seed() {
	local out rc=0

	echo "# ---- seed_min_wait"
	out=$("$BIN_DIR/seed_min_wait" 2>&1) || rc=$?
	printf '%s\n' "$out"
	if ((rc == 0)) && [[ $out == "epoll_wait=2" ]]; then
		echo "ok 1 seed_min_wait prints exactly epoll_wait=2"
		passed=$((passed + 1))
	else
		echo "not ok 1 seed_min_wait: status $rc, output not exactly epoll_wait=2"
		failed=$((failed + 1))
	fi
}

run_epoll_selftest() {
	local name=$1

	if [[ ! -x $EPOLL_SELFTEST ]]; then
		echo "# ---- $name"
		echo "ok 1 $name # SKIP $EPOLL_SELFTEST not found"
		skipped=$((skipped + 1))
		return
	fi
	# The same selftest with the module unloaded (only the hooks left).
	if [[ $name == epoll_wakeup_test_nomodule ]] && ! rmmod "$MODULE"; then
		echo "# ---- $name"
		echo "not ok 1 $name: cannot unload $MODULE"
		failed=$((failed + 1))
		return
	fi
	run_upstream_tap "$name" "$EPOLL_SELFTEST"
}

# An upstream selftest whose multi-threaded cases depend on timing (the
# nested-wakeup cases epoll57..60 race a sleeping emitter): under an
# emulated, CPU-starved guest one can lose that race. A failed run is shown
# in full and run once more; only the second run's results count.
run_upstream_tap() {
	local name=$1 p=$passed f=$failed s=$skipped

	shift
	run_tap "$name" "$@"
	if ((failed == f)); then
		return
	fi
	echo "# $name: $((failed - f)) failure(s) above; running it once more"
	passed=$p failed=$f skipped=$s
	run_tap "$name (second run)" "$@"
}

# Run "$@" with its output held until it ends: the measured NUMA test reads
# global counters, and a shell busy printing its lines would be scanned by
# NUMA balancing meanwhile, adding to them.
buffered() {
	local out=/tmp/run_tests.$$.out rc=0

	"$@" > "$out" 2>&1 || rc=$?
	cat "$out"
	rm -f "$out"
	return "$rc"
}

# The epoll dup-storm at the fd count an unprivileged user can reach.
dup_storm_65536() {
	NUMAB_DUP_STORM_N=65536 ./epoll_dup_storm_test
}

# Run "$@" with the LD_PRELOAD shim and a min-wait to apply.
with_shim() {
	MINWAIT_US=$MINWAIT_US_TEST LD_PRELOAD=$LIBMINWAIT "$@"
}

run_one() {
	local name=$1

	case $name in
	seed_min_wait)
		run_seed
		;;
	libminwait_test)
		run_tap "$name" with_shim "./$name"
		;;
	epoll_wakeup_test | epoll_wakeup_test_nomodule)
		run_epoll_selftest "$name"
		;;
	epoll_dup_storm_test_65536)
		run_tap "$name" dup_storm_65536
		;;
	numab_balancing_test)
		run_tap "$name" buffered "./$name"
		;;
	*)
		if [[ ! -x $BIN_DIR/$name ]]; then
			echo "# ---- $name"
			echo "not ok 1 $name: $BIN_DIR/$name not found"
			failed=$((failed + 1))
			return
		fi
		run_tap "$name" "./$name"
		;;
	esac
}

main() {
	local tests=() name known t

	if (($# == 0)); then
		tests=("${ALL_TESTS[@]}")
	fi
	for name in "$@"; do
		case $name in
		-h | --help)
			usage
			exit 0
			;;
		esac
		case $name in
		ours)
			tests+=("${OUR_TESTS[@]}")
			continue
			;;
		upstream)
			tests+=("${UPSTREAM_TESTS[@]}")
			continue
			;;
		debug)
			tests+=("${DEBUG_TESTS[@]}")
			continue
			;;
		esac
		known=no
		for t in "${ALL_TESTS[@]}"; do
			[[ $t == "$name" ]] && known=yes
		done
		if [[ $known == no ]]; then
			echo "$0: unknown test '$name'" >&2
			usage >&2
			exit 2
		fi
		tests+=("$name")
	done

	cd "$BIN_DIR"
	mount_debugfs
	for name in "${tests[@]}"; do
		ensure_module
		run_one "$name"
	done
	ensure_module

	if ((skipped)); then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	((failed == 0)) || exit 1
}

main "$@"
