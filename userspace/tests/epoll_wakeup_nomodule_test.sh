#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# epoll_wakeup_test.sh with the module unloaded (only the hooks left); the
# module is loaded again afterwards.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

rmmod numab_minwait || { echo "# cannot unload numab_minwait"; exit 1; }
rc=0
./epoll_wakeup_test.sh || rc=$?
modprobe numab_minwait || { echo "# cannot load numab_minwait again"; rc=1; }
exit "$rc"
