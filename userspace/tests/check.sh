#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: the host checks (lint, make install, the examples of the
# READMEs and the man pages), qemu/run's console
# check, the test suite in the guest, a boot through dracut's /init, and
# the kernel's epoll selftest in a second guest.
# make check-debug (--debug): the whole suite on the debug kernel (KASAN,
# lockdep, kmemleak, ...; kernel/debug.config), kmemleak scanned last.
# The kernel series is $KSERIES (default 6.1), as for qemu/run.
#
#   userspace/tests/check.sh [--debug [TEST...]]
#
# Each step's output is shown as it runs; their results make one TAP
# stream, build/SERIES/logs/check.tap (check-debug.tap), renumbered, the
# rest of their output as comments.  A step that exits non-zero without a
# failed result, or runs fewer results than it planned (a guest splat,
# crash or hang: qemu/run exits 125 or 124), adds a failure.  The last
# line is "N passed, N failed" as tap-summary.pl counts the stream; the
# exit status is 1 if anything failed, 2 on a usage error.
#
# Environment: NUMAB_CHECK_TIMEOUT (seconds a guest may run; default 1200,
# --debug 3600).
set -euo pipefail

usage() {
	echo "usage: $0 [--debug [TEST...]]"
}

debug=0
tests=()
while (($#)); do
	case "$1" in
	--debug) debug=1; shift ;;
	-h|--help) usage; exit 0 ;;
	-*)
		echo "$0: unknown option '$1'" >&2
		usage >&2
		exit 2
		;;
	*)
		((debug)) || { echo "$0: tests are named with --debug only" >&2; exit 2; }
		tests+=("$1")
		shift
		;;
	esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
series=${KSERIES:-$(awk '!/^#/ && NF { print $1; exit }' "./kernel/series")}
logs=build/$series/logs
mkdir -p "$logs"
tap=$logs/check.tap
((debug == 0)) || tap=$logs/check-debug.tap
echo "TAP version 13" > "$tap"
n=0

# fold NAME STATUS < OUTPUT: the step's results into the stream.
fold() {
	local name=$1 status=$2 line desc planned=-1 ran=0 failed=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		if [[ $line =~ ^(not )?ok([[:space:]]+[0-9]+)?([[:space:]].*)?$ ]]; then
			n=$((n + 1)) ran=$((ran + 1))
			[[ -z ${BASH_REMATCH[1]} ]] || failed=$((failed + 1))
			desc=${BASH_REMATCH[3]# }
			echo "${BASH_REMATCH[1]}ok $n - $name: ${desc#- }"
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			planned=${BASH_REMATCH[1]}
		elif [[ $line != "TAP version "* ]]; then
			echo "# $line"
		fi
	done
	if ((planned >= 0 && ran != planned)); then
		n=$((n + 1))
		echo "not ok $n - $name: $ran results of $planned planned (exit $status)"
	elif ((status != 0 && failed == 0)); then
		n=$((n + 1))
		echo "not ok $n - $name: exited $status (see its output above)"
	fi
} >> "$tap"

# step NAME CMD...: run CMD, its output on the terminal and in the stream.
step() {
	local name=$1 out status=0
	shift
	echo "# ---- $name: $*"
	out=$(mktemp)
	"$@" 2>&1 | tee "$out" || status=$?
	fold "$name" "$status" < "$out"
	rm -f "$out"
}

# A warn_alloc report in 6.12's wording, as fault injection makes them.
# shellcheck disable=SC2016 # expanded by the guest shell
readonly FAKE_ALLOC_REPORT='for l in "warn_alloc: 8 callbacks suppressed" \
"fault_inject_te: vmalloc error: size 4096, failed to allocated page array size 8, mode:0xcc2(GFP_KERNEL|__GFP_HIGHMEM)" \
"Call Trace:" " <TASK>" "  warn_alloc+0x1b7/0x310" " </TASK>"; do
echo "<4>$l" > /dev/kmsg; done; sleep 1'

# qemu/run's console check, as the other steps rely on it: a kernel
# warning in the guest fails the run (exit 125), with or without the
# filter for deliberate allocation failures, which passes their reports.
console_check() {
	local opt i=0 log rc
	log=$(mktemp)
	echo "1..3"
	for opt in "" --allow-alloc-failures; do
		i=$((i + 1)) rc=0
		# shellcheck disable=SC2086 # no option, or one
		qemu/run $opt --cpus 1 --nodes 1 --timeout 120 -- \
			sh -c 'echo "<4>WARNING: qemu/run console check" > /dev/kmsg; sleep 1' \
			> "$log" 2>&1 || rc=$?
		if ((rc == 125)) && grep -q "kernel splat on the console" "$log"; then
			echo "ok $i qemu/run fails on a kernel warning${opt:+ ($opt)}"
		else
			tail -n 20 "$log" | sed 's/^/# /'
			echo "not ok $i qemu/run fails on a kernel warning${opt:+ ($opt)}: exit $rc"
		fi
	done
	i=$((i + 1)) rc=0
	qemu/run --allow-alloc-failures --cpus 1 --nodes 1 --timeout 120 -- \
		sh -c "$FAKE_ALLOC_REPORT" > "$log" 2>&1 || rc=$?
	if ((rc == 0)); then
		echo "ok $i qemu/run --allow-alloc-failures passes a warn_alloc report"
	else
		tail -n 20 "$log" | sed 's/^/# /'
		echo "not ok $i qemu/run --allow-alloc-failures passes a warn_alloc report: exit $rc"
	fi
	rm -f "$log"
}

start=$SECONDS
if ((debug)); then
	step "debug guest" qemu/run \
		--kernel "build/$series/kernel-debug/obj/arch/x86/boot/bzImage" \
		--initramfs "build/$series/initramfs-debug.img" --allow-alloc-failures \
		--timeout "${NUMAB_CHECK_TIMEOUT:-3600}" -- run_tests.sh "${tests[@]}"
else
	step "lint" scripts/lint.sh
	step "install" userspace/tests/install_test.sh
	step "docs examples" userspace/tests/docs_examples_test.sh
	step "man page examples" userspace/tests/man_examples_test.sh
	step "debian packages" userspace/tests/deb_test.sh
	step "console check" console_check
	# Our tests, in the default guest (4 vCPUs, 2 NUMA nodes).
	step "guest" qemu/run --timeout "${NUMAB_CHECK_TIMEOUT:-1200}" -- \
		run_tests.sh ours
	step "dracut boot" qemu/run --dracut-init --cpus 2 --nodes 1 \
		--append rd.driver.pre=numab_minwait --timeout 300 -- \
		dracut_boot_test.sh
	# The kernel's epoll selftest races threads against a sleeping
	# emitter: with more vCPUs than host cores, TCG preempts vCPUs for
	# whole host time slices and the stock kernel loses those races too.
	# One vCPU a core.
	step "epoll selftest guest" qemu/run --cpus 2 --nodes 1 \
		--timeout "${NUMAB_CHECK_TIMEOUT:-1200}" -- run_tests.sh upstream
fi
echo "1..$n" >> "$tap"

echo "# ---- linux $series: $n results in $((SECONDS - start)) s; the TAP stream: $tap"
grep '^not ok' "$tap" || true
"$here/tap-summary.pl" "$tap"
