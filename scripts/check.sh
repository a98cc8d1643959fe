#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: host-side checks (checkpatch, shellcheck), then the test
# suite in the guest. Ends with one line "N passed, N failed" and exits
# non-zero on any failure, including a guest splat, crash or hang.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

passed=0 failed=0 skipped=0

result() {
	local name="$1"
	shift
	if "$@"; then
		echo "ok - host: $name"
		passed=$((passed + 1))
	else
		echo "not ok - host: $name"
		failed=$((failed + 1))
	fi
}

log=$(mktemp)
patches=$(mktemp -d)
trap 'rm -rf "$log" "$patches"' EXIT

checkpatch=build/kernel/src/scripts/checkpatch.pl
git mailsplit -o"$patches" hooks.patch >/dev/null
for patch in "$patches"/*; do
	subject=$(sed -n 's/^Subject: //p' "$patch" | head -n 1)
	result "checkpatch --strict ${subject:0:60}" \
		"$checkpatch" --strict --quiet --no-tree "$patch"
done
mapfile -t module_sources < <(git ls-files 'module/*.[ch]')
result "checkpatch --strict module sources" \
	"$checkpatch" --strict --quiet --no-tree -f "${module_sources[@]}"
mapfile -t scripts < <(scripts/list-shell-scripts.sh)
result "shellcheck ${#scripts[@]} scripts" shellcheck "${scripts[@]}"

guest_status=0
qemu/run --timeout "${NUMAB_CHECK_TIMEOUT:-1200}" -- run_tests.sh "$@" |
	tee "$log" || guest_status=$?

summary=$(tr -d '\r' < "$log" |
	grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' | tail -n 1 ||
	true)
if [[ -n "$summary" ]]; then
	read -r gp _ gf _ gs _ <<< "${summary//,/}"
	passed=$((passed + gp))
	failed=$((failed + gf))
	skipped=$((skipped + ${gs:-0}))
fi
# A splat, crash or hang fails the run even when every test passed.
if ((guest_status != 0)) && { [[ -z "$summary" ]] || ((gf == 0)); }; then
	echo "not ok - guest: qemu/run exited $guest_status (see its log above)"
	failed=$((failed + 1))
fi

line="$passed passed, $failed failed"
((skipped == 0)) || line+=", $skipped skipped"
echo "$line"
((failed == 0))
