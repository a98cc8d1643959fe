#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS PRE_BUILD of numab_minwait (see dkms.conf): refuse, with a message
# that says why, a kernel that does not carry the hooks of hooks.patch,
# instead of letting the module fail to compile or link against it.
#
#   scripts/dkms-check-hooks.sh KERNEL_BUILD_DIR KERNEL_RELEASE
#
# The hooks are the symbols the patched kernel exports to the module, as
# listed in the built kernel's Module.symvers (epoll_register_min_wait and
# the epoll_mw_*() helpers of the minimum wait always;
# numa_balancing_register_ops and sched_numa_balancing when
# CONFIG_NUMA_BALANCING=y), with the ops members this module fills in, as
# its headers declare them (->release of both ops, the epoll ->wait(),
# the adaptive wait's ready_wakes, the reason epoll_mw_prepare_sleep()
# returns: older versions of the series exported the same functions with
# other ops and types). Exit status 0 when they are all there, 1
# otherwise (2 on a usage error).
set -euo pipefail

if (($# != 2)); then
	echo "usage: $0 KERNEL_BUILD_DIR KERNEL_RELEASE" >&2
	exit 2
fi
kdir=$1 kver=$2

refuse() {
	echo "numab_minwait: kernel $kver lacks the numab_minwait hooks" \
		"(apply its hook series, hooks.patch or hooks-6.12.patch): $*" >&2
	exit 1
}

symvers=$kdir/Module.symvers
config=$kdir/.config
[[ -r $symvers ]] || refuse "no $symvers (is the kernel built?)"
[[ -r $config ]] || refuse "no $config (is the kernel configured?)"

# A built tree (O=) reaches its headers through "source"; a headers
# package has them in place.
header() {
	local f
	for f in "$kdir/include/$1" "$kdir/source/include/$1"; do
		[[ -r $f ]] && { echo "$f"; return; }
	done
	refuse "no include/$1 in $kdir"
}

needed=(epoll_register_min_wait epoll_mw_scan epoll_mw_prepare_sleep
	epoll_mw_finish_sleep epoll_mw_end_hold)
# header:pattern, as grep -E reads it
members=('linux/eventpoll.h:void \(\*release\)\(struct epoll_min_wait \*'
	'linux/eventpoll.h:int \(\*wait\)\(struct epoll_min_waiter \*'
	'linux/eventpoll.h:unsigned int ready_wakes;'
	'linux/eventpoll.h:^enum epoll_mw_sleep epoll_mw_prepare_sleep\(')
if grep -qx 'CONFIG_NUMA_BALANCING=y' "$config"; then
	needed+=(numa_balancing_register_ops sched_numa_balancing)
	members+=('linux/sched/numa_balancing.h:void \(\*release\)\(struct mm_struct \*')
fi
missing=()
for sym in "${needed[@]}"; do
	awk -v sym="$sym" '$2 == sym { found = 1 } END { exit !found }' \
		"$symvers" || missing+=("$sym")
done
((${#missing[@]} == 0)) ||
	refuse "$symvers does not export ${missing[*]}"
for member in "${members[@]}"; do
	file=$(header "${member%%:*}")
	pattern=${member#*:}
	grep -qE "$pattern" "$file" ||
		refuse "$file has an older version of the hooks" \
			"(no '${pattern//\\/}')"
done
echo "numab_minwait: kernel $kver has the hooks (${needed[*]})"
