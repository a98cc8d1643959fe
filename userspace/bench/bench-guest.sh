#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest bench driver: runs one suite of the bench programs (next to this
# script, /opt/bench) and prints one "BENCH suite=S key=value..." line per
# measurement, for scripts/bench.sh to collect. Never loads a module: the
# host boots kernel C with qemu/run --preload.
#
#   bench-guest.sh info|unused|rr|memc|numa [--quick]
#
# info    kernel release, NUMA balancing, whether the module is loaded and
#         its counters (no process may be using either feature)
# unused  each bench_unused test, best of 5 (--quick: 3), on CPU 0
# rr      bench_rr at 4000 requests/s: plain, sleep 200 us, min-wait
#         50/100/200/500 us; at 2000/s: plain, sleep 200 us, min-wait
#         200 us; in an order that rotates with $BENCH_ROUND; server and
#         client share CPU 0 (across two vCPUs, TCG wakeups take
#         milliseconds)
# memc    memcached (one worker thread) driven by bench_memc, both on
#         CPU 0, without and with libminwait.so (MINWAIT_US=200)
# numa    bench_numa probe and stream, DEFAULT and DISABLED, working set
#         first touched on node 1 and used from node 0
set -euo pipefail

BIN=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
readonly BIN
readonly LIBMINWAIT=/opt/numab/lib/libminwait.so
readonly MEMC_SOCK=/run/bench-memcached.sock
readonly NUMA_DEBUGFS=/sys/kernel/debug/sched/numa_balancing

suite=${1:-}
quick=0
[[ ${2:-} == --quick ]] && quick=1
round=${BENCH_ROUND:-0}

# scale FULL QUICK: the iteration count for this mode.
scale() {
	if ((quick)); then echo "$2"; else echo "$1"; fi
}

emit() {
	printf 'BENCH suite=%s round=%s %s\n' "$suite" "$round" "$*"
}

# rotate N ITEMS...: ITEMS starting at index N modulo their count.
rotate() {
	local n=$1
	shift
	local items=("$@") i
	for ((i = 0; i < ${#items[@]}; i++)); do
		printf '%s\n' "${items[(i + n) % ${#items[@]}]}"
	done
}

suite_info() {
	local loaded=no counters=none
	if [[ -d /sys/module/numab_minwait ]]; then
		loaded=yes
		counters=$(tr '\n ' ',=' < /sys/kernel/debug/numab_minwait/counters)
		counters=${counters%,}
	fi
	emit "kernel=$(uname -r) numa_balancing=$(cat /proc/sys/kernel/numa_balancing)" \
		"nodes_online=$(cat /sys/devices/system/node/online)" \
		"cpus=$(nproc) module=$loaded counters=$counters"
}

suite_unused() {
	local tests=(
		"pipe $(scale 60000 20000)"
		"pingpong $(scale 5000 2000)"
		"getppid $(scale 1000000 300000)"
		"fork $(scale 300 100)"
		"execl $(scale 100 40)"
		"epoll $(scale 400000 120000)"
		"fault $(scale 32768 8192)"
		"cpuloop $(scale 400000000 120000000)"
	)
	local t repeats
	repeats=$(scale 5 3)
	for t in "${tests[@]}"; do
		# shellcheck disable=SC2086 # "name iters"
		emit "$("$BIN/bench_unused" $t 0 "$repeats")"
	done
}

suite_rr() {
	local conns=8 rate spec
	# The sweep at a load where a 200 us wait batches requests, then the
	# three modes at half of it, where most 200 us waits see no request.
	while read -r rate spec; do
		# shellcheck disable=SC2086 # "mode wait_us"
		emit "$("$BIN/bench_rr" $spec "$conns" "$rate" \
			"$((rate * $(scale 4 2)))" 0 0)"
	done < <(rotate "$round" "4000 plain 0" "4000 sleep 200" \
		"4000 minwait 50" "4000 minwait 100" "4000 minwait 200" \
		"4000 minwait 500" "2000 plain 0" "2000 sleep 200" \
		"2000 minwait 200")
}

# memc_run LABEL [ENV...]: one memcached run, started with ENV.
memc_run() {
	local label=$1 pid out
	shift
	rm -f -- "$MEMC_SOCK"
	env "$@" taskset -c 0 memcached -u root -t 1 -m 64 -s "$MEMC_SOCK" &
	pid=$!
	for _ in $(seq 100); do
		[[ -S $MEMC_SOCK ]] && break
		sleep 0.1
	done
	out=$("$BIN/bench_memc" "$MEMC_SOCK" "$pid" 8 2000 "$(scale 10000 4000)" 0)
	kill "$pid"
	wait "$pid" || true
	emit "server=memcached shim=$label $out"
}

suite_memc() {
	command -v memcached > /dev/null || {
		emit "server=memcached missing=memcached-not-in-image"
		return 0
	}
	local label
	while read -r label; do
		case $label in
			none) memc_run none ;;
			minwait200) memc_run minwait200 LD_PRELOAD="$LIBMINWAIT" MINWAIT_US=200 ;;
		esac
	done < <(rotate "$round" none minwait200)
}

suite_numa() {
	local mib=64 seconds mode test
	seconds=$(scale 8 4)
	echo 1 > /proc/sys/kernel/numa_balancing
	# Scan soon and often, so that a few seconds show the steady state.
	echo 100 > "$NUMA_DEBUGFS/scan_delay_ms"
	echo 100 > "$NUMA_DEBUGFS/scan_period_min_ms"
	for test in probe stream; do
		while read -r mode; do
			emit "$("$BIN/bench_numa" "$test" "$mode" "$mib" "$seconds" 0 1)"
		done < <(rotate "$round" default disabled)
	done
}

case $suite in
	info | unused | rr | memc | numa) "suite_$suite" ;;
	*)
		echo "usage: $0 info|unused|rr|memc|numa [--quick]" >&2
		exit 64
		;;
esac
