#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dracut cmdline hook (sourced by dracut's /init once /proc, /sys, /dev and
# the console are set up; the last cmdline hook, so after kernel-modules'
# rd.driver.pre).  It hands PID 1 over to the guest's runner, which runs
# the requested command and powers the guest off: it never returns.
set -euo pipefail
exec /usr/lib/numab/guest-init dracut
