#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# numab_balancing_test with its output held until it ends: it reads global
# NUMA balancing counters, and a reader busy printing its lines meanwhile
# would be scanned by NUMA balancing and add to them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
./numab_balancing_test > "$out" 2>&1 || rc=$?
cat "$out"
exit "$rc"
