#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo, in the guest: both features at work, in a few lines.
set -euo pipefail

module=numab_minwait
numab_debugfs=/sys/kernel/debug/sched/numa_balancing

heading() {
	printf '\n== %s\n' "$*"
}

# "name: value" or "name value" from a file; empty when absent.
field() {
	awk -v k="$2" '$1 == k || $1 == k":" { print $NF; exit }' "$1"
}

# Pages of the mapping at ADDR of process PID on node N (/proc/PID/numa_maps).
pages_on_node() {
	awk -v a="$2" -v n="N$3=" '$1 == a { for (i = 2; i <= NF; i++)
		if (index($i, n) == 1) print substr($i, length(n) + 1) }
		END { print 0 }' "/proc/$1/numa_maps" | head -n 1
}

heading "The guest"
echo "kernel $(uname -r), $(nproc) CPUs"
for node in /sys/devices/system/node/node[0-9]*; do
	echo "${node##*/}: CPUs $(cat "$node/cpulist"), $(awk '/MemTotal/ { print int($4 / 1024) " MiB" }' "$node/meminfo")"
done
echo "kernel.numa_balancing = $(cat /proc/sys/kernel/numa_balancing)"

heading "The module"
if [[ ! -d /sys/module/$module ]]; then
	modprobe "$module"
fi
echo "loaded: $(grep "^$module " /proc/modules | cut -d' ' -f1-3)"
sed 's/^/  /' "/sys/kernel/debug/$module/counters"

heading "Per-process NUMA balancing: the same wrong-node workload, side by side"
# Scan sooner and more often than the defaults so that a few seconds show it.
echo 0 > "$numab_debugfs/scan_delay_ms"
echo 100 > "$numab_debugfs/scan_period_min_ms"
numab-run --disable -- wrong_node 32 4 > /tmp/demo-disabled &
disabled_pid=$!
numab-run --enable -- wrong_node 32 4 > /tmp/demo-enabled &
enabled_pid=$!
until grep -q ready /tmp/demo-disabled /dev/null &&
	grep -q ready /tmp/demo-enabled /dev/null; do
	sleep 0.2
done
printf '  %-9s %-11s %12s %15s %16s\n' process NumaB_mode "hint faults" \
	"pages migrated" "pages on node 1"
for run in disabled enabled; do
	pid=${run}_pid
	pid=${!pid}
	read -r _ addr faults migrated < "/tmp/demo-$run"
	printf '  %-9s %-11s %12s %15s %10s of %s\n' "$pid" \
		"$(field "/proc/$pid/status" NumaB_mode)" "$faults" "$migrated" \
		"$(pages_on_node "$pid" "$addr" 1)" "$((32 * 256))"
done
kill "$disabled_pid" "$enabled_pid"
wait "$disabled_pid" "$enabled_pid" 2>/dev/null || true
rm -f /tmp/demo-disabled /tmp/demo-enabled
echo "  numab-run --show $$: $(numab-run --show $$)"

heading "epoll minimum wait: the seed's test (two events 10 ms apart)"
echo "  seed_min_wait (min-wait 200 ms, unchanged from the posting): $(seed_min_wait)"
minwait_demo seed 0
minwait_demo seed 200000

heading "epoll minimum wait: a steady load, one event every 100 us for 1 s"
minwait_demo load 0
minwait_demo load 200
minwait_demo load 1000

heading "The module unloads once nothing uses it"
sed 's/^/  /' "/sys/kernel/debug/$module/counters"
rmmod "$module"
echo "  rmmod $module: done; prctl(PR_NUMA_BALANCING) now answers EINVAL:"
numab-run --show $$ >/dev/null && numab-run --disable -- true ||
	echo "  (numab-run exit status $?, as without the module)"
