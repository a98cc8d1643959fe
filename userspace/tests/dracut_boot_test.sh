#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest booted as users of the design boot it: through dracut's own
# /init, whose kernel-modules hook loads numab_minwait from
# rd.driver.pre=numab_minwait before the runner starts (the runner leaves
# rd.driver.pre to dracut then). make check runs it as
#
#   qemu/run --dracut-init --append rd.driver.pre=numab_minwait -- dracut_boot_test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# shellcheck source=userspace/tests/tap.sh
. ./tap.sh

booted_by_dracut() {
	[[ -d /run/initramfs && " $(cat /proc/cmdline) " != *" rdinit="* ]]
}

loaded_from_cmdline() {
	[[ " $(cat /proc/cmdline) " == *" rd.driver.pre=numab_minwait "* &&
		-d /sys/module/numab_minwait ]]
}

features_work() {
	local mode seed
	mode=$(numab-run --disable -- cat /proc/self/status | grep NumaB_mode)
	seed=$(./seed_min_wait)
	echo "# $mode; seed_min_wait: $seed"
	[[ $mode == *disabled && $seed == epoll_wait=2 ]]
}

echo "TAP version 13"
echo "1..3"
rc=0
booted_by_dracut || rc=$?
tap_result "$rc" "booted through dracut's /init"
rc=0
loaded_from_cmdline || rc=$?
tap_result "$rc" "dracut loaded numab_minwait from rd.driver.pre"
rc=0
features_work || rc=$?
tap_result "$rc" "the module works: numab-run --disable, the seed's epoll_wait=2"
exit "$tap_failed"
