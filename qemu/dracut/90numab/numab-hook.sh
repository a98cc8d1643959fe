#!/usr/bin/env bash
# dracut cmdline hook (sourced by dracut's /init once /proc, /sys, /dev and
# the console are set up; the last cmdline hook, so after rd.driver.pre).  It hands PID 1 over to the numab runner, which
# runs the requested command and powers the guest off: it never returns.
set -euo pipefail
exec /usr/lib/numab/numab-run
