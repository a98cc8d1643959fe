#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The epoll dup-storm at the fd count an unprivileged user can reach.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
NUMAB_DUP_STORM_N=65536 exec ./epoll_dup_storm_test
