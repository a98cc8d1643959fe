#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run last on a debug kernel: what kmemleak finds since run_tests.sh
# cleared its boot-time reports (scanned twice, after its 5 s minimum
# object age). Skipped on a kernel without kmemleak.
set -euo pipefail

kmemleak=/sys/kernel/debug/kmemleak
if [[ ! -w $kmemleak ]]; then
	echo "# $kmemleak missing: not a debug kernel"
	exit 4	# kselftest's skip
fi
sleep 6
echo scan > "$kmemleak"
echo scan > "$kmemleak"
leaks=$(grep -c "unreferenced object" "$kmemleak" || true)
sed 's/^/# /' "$kmemleak"
echo "# kmemleak: $leaks suspected leaks"
((leaks == 0))
