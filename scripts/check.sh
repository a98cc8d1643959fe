#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: host-side checks (checkpatch, shellcheck), then the test
# suite in the guest, then the kernel's epoll selftest in a second guest. Ends with one line "N passed, N failed" and exits
# non-zero on any failure, including a guest splat, crash or hang.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

passed=0 failed=0 skipped=0

# Adds the "N passed, N failed[, N skipped]" of a suite's output $1 to
# ours; a suite that failed ($2 != 0) without saying so counts as one
# failure more (a guest splat, crash or hang).
add_summary() {
	local summary p f s

	summary=$(tr -d '\r' <<< "$1" |
		grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' |
		tail -n 1 || true)
	read -r p _ f _ s _ <<< "${summary//,/}"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	if (($2 != 0)) && ((${f:-0} == 0)); then
		echo "not ok - $3 exited $2 (see its output above)"
		failed=$((failed + 1))
	fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# qemu/run's console check, as make check and make check-debug use it: a
# kernel warning in the guest fails the run, with or without the filter
# for deliberate allocation failures.
console_check() {
	local opts=("$@") name="qemu/run fails on a kernel warning${1:+ ($1)}"
	local rc=0

	qemu/run "${opts[@]}" --cpus 1 --nodes 1 --timeout 120 -- \
		sh -c 'echo "<4>WARNING: qemu/run console check" > /dev/kmsg; sleep 1' \
		> "$log" 2>&1 || rc=$?
	if ((rc == 125)) && grep -q "kernel splat on the console" "$log"; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name: exit $rc"
		tail -n 20 "$log"
		failed=$((failed + 1))
	fi
}

status=0
scripts/lint.sh | tee "$log" || status=$?
add_summary "$(cat "$log")" "$status" "host checks"

console_check
console_check --allow-alloc-failures

# Our tests, in the default guest (4 vCPUs, 2 NUMA nodes).
status=0
qemu/run --timeout "${NUMAB_CHECK_TIMEOUT:-1200}" -- run_tests.sh ours |
	tee "$log" || status=$?
add_summary "$(cat "$log")" "$status" "the guest (qemu/run)"

# The kernel's epoll selftest races threads against a sleeping emitter:
# with more vCPUs than host cores, TCG preempts vCPUs for whole host time
# slices and the stock kernel loses those races too. One vCPU a core.
status=0
qemu/run --cpus 2 --nodes 1 --timeout "${NUMAB_CHECK_TIMEOUT:-1200}" -- \
	run_tests.sh upstream | tee "$log" || status=$?
add_summary "$(cat "$log")" "$status" "the guest for the epoll selftest"

line="$passed passed, $failed failed"
((skipped == 0)) || line+=", $skipped skipped"
echo "$line"
((failed == 0))
