#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the in-guest test suite (run_tests.sh) on the debug
# kernel (KASAN, lockdep, kmemleak, ...: qemu/debug.config), then a
# kmemleak scan. qemu/run fails the run on any kernel report on the
# console (panic_on_warn is on), a leak fails it too. Ends with one line
# "N passed, N failed" and exits non-zero on any failure.
#
#   scripts/check-debug.sh --kernel BZIMAGE --initramfs IMG [TEST...]
#
# Environment: NUMAB_CHECK_TIMEOUT (seconds, default 3600).
set -euo pipefail

usage() {
	echo "usage: $0 --kernel BZIMAGE --initramfs IMG [TEST...]"
}

kernel="" initramfs=""
while (($#)); do
	case "$1" in
	--kernel) kernel="$2"; shift 2 ;;
	--initramfs) initramfs="$2"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) break ;;
	esac
done
[[ -n "$kernel" && -n "$initramfs" ]] || { usage >&2; exit 64; }

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# In the guest: forget what kmemleak reports from the boot, run the suite,
# then scan (twice, after kmemleak's 5 s minimum object age) for leaks.
# shellcheck disable=SC2016 # expanded in the guest
guest='
kmemleak=/sys/kernel/debug/kmemleak
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
if [[ -w $kmemleak ]]; then
	echo scan > "$kmemleak"
	echo "# kmemleak: $(grep -c "unreferenced object" "$kmemleak") suspected leaks from the boot, cleared"
	echo clear > "$kmemleak"
fi
rc=0
run_tests.sh "$@" || rc=$?
if [[ ! -w $kmemleak ]]; then
	echo "not ok - kmemleak: $kmemleak missing"
	exit 1
fi
sleep 6
echo scan > "$kmemleak"
echo scan > "$kmemleak"
leaks=$(grep -c "unreferenced object" "$kmemleak" || true)
sed "s/^/# kmemleak: /" "$kmemleak"
if ((leaks)); then
	echo "not ok - kmemleak: $leaks suspected leaks"
	exit 1
fi
echo "ok - kmemleak: no leak"
exit "$rc"
'

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
guest_status=0
qemu/run --kernel "$kernel" --initramfs "$initramfs" --allow-alloc-failures \
	--timeout "${NUMAB_CHECK_TIMEOUT:-3600}" -- bash -c "$guest" bash "$@" |
	tee "$log" || guest_status=$?

passed=0 failed=0 skipped=0
clean=$(tr -d '\r' < "$log")
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' \
	<<< "$clean" | tail -n 1 || true)
if [[ -n "$summary" ]]; then
	read -r passed _ failed _ skipped _ <<< "${summary//,/}"
	skipped=${skipped:-0}
fi
if grep -qx 'ok - kmemleak: no leak' <<< "$clean"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi
# A splat, crash or hang fails the run even when every test passed.
if ((guest_status != 0)) && { [[ -z "$summary" ]] || ((failed == 0)); }; then
	echo "not ok - guest: qemu/run exited $guest_status (see its log above)"
	failed=$((failed + 1))
fi
echo "# check-debug took $(($(date +%s) - start)) s"

line="$passed passed, $failed failed"
((skipped == 0)) || line+=", $skipped skipped"
echo "$line"
((failed == 0))
