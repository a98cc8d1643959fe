#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The seed's epoll example, kept as posted, prints exactly "epoll_wait=2".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

echo "TAP version 13"
echo "1..1"
rc=0
out=$(./seed_min_wait 2>&1) || rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
if ((rc == 0)) && [[ $out == "epoll_wait=2" ]]; then
	echo "ok 1 seed_min_wait prints exactly epoll_wait=2"
else
	echo "not ok 1 seed_min_wait prints exactly epoll_wait=2 (status $rc)"
	exit 1
fi
