/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ABI of the numab_minwait project, as seen from userspace: the same on
 * every kernel it targets (6.1 and 6.12). Each number is guarded so that
 * this header also compiles next to kernel headers that already carry it.
 */
#ifndef NUMAB_UAPI_H
#define NUMAB_UAPI_H

/*
 * Per-process NUMA balancing: prctl(PR_NUMA_BALANCING, op, arg3, 0, 0).
 * A tagged number ("NUMA"), as mainline gives options outside its sequence
 * (PR_SET_PTRACER, PR_SET_VMA): the original postings' 65 is PR_SET_MDWE
 * since 6.3.
 */
#ifndef PR_NUMA_BALANCING
#define PR_NUMA_BALANCING		0x4e554d41
#endif
/*
 * The postings' number, accepted as well on 6.1 only (same sub-commands),
 * so that their examples run unchanged there. New code uses the above.
 */
#ifndef PR_NUMA_BALANCING_LEGACY
#define PR_NUMA_BALANCING_LEGACY		65
#endif
#ifndef PR_SET_NUMA_BALANCING_DISABLED
#define PR_SET_NUMA_BALANCING_DISABLED	0
#endif
#ifndef PR_SET_NUMA_BALANCING_ENABLED
#define PR_SET_NUMA_BALANCING_ENABLED	1
#endif
#ifndef PR_SET_NUMA_BALANCING_DEFAULT
#define PR_SET_NUMA_BALANCING_DEFAULT	2
#endif
#ifndef PR_GET_NUMA_BALANCING
#define PR_GET_NUMA_BALANCING		3
#endif

/*
 * epoll minimum wait: epoll_ctl(epfd, EPOLL_CTL_MIN_WAIT, fd, &ev) with
 * ev.data.u64 = usecs (0..INT_MAX), optionally or-ed with
 * EPOLL_MIN_WAIT_AFTER_FIRST to time it from the first ready event instead
 * of the start of the call, and with EPOLL_MIN_WAIT_ADAPTIVE to make usecs
 * a ceiling that the module adapts each call's wait to. Any other bit of
 * 32..63 is EINVAL.
 */
#ifndef EPOLL_CTL_MIN_WAIT
#define EPOLL_CTL_MIN_WAIT		4
#endif
#ifndef EPOLL_MIN_WAIT_AFTER_FIRST
#define EPOLL_MIN_WAIT_AFTER_FIRST	(1ULL << 32)
#endif
#ifndef EPOLL_MIN_WAIT_ADAPTIVE
#define EPOLL_MIN_WAIT_ADAPTIVE		(1ULL << 33)
#endif

/*
 * Batch target: epoll_ctl(epfd, EPOLL_CTL_MIN_EVENTS, fd, &ev) with
 * ev.data.u64 = K (0..INT_MAX): the minimum wait ends once min(K, maxevents)
 * items are ready; 0 means maxevents.
 */
#ifndef EPOLL_CTL_MIN_EVENTS
#define EPOLL_CTL_MIN_EVENTS		5
#endif

/* Observability: names and paths published by the kernel and the module */
#define NUMAB_MODULE_NAME		"numab_minwait"
#define NUMAB_STATUS_KEY		"NumaB_mode:"
#define NUMAB_FDINFO_KEY		"min_wait_us:"
/* the flag bits shifted down by 32, in hex: AFTER_FIRST is 0x1 */
#define NUMAB_FDINFO_FLAGS_KEY		"min_wait_flags:"
#define NUMAB_FDINFO_EVENTS_KEY		"min_events:"
#define NUMAB_DEBUGFS_DIR		"/sys/kernel/debug/numab_minwait"
#define NUMAB_DEBUGFS_COUNTERS		NUMAB_DEBUGFS_DIR "/counters"

#endif /* NUMAB_UAPI_H */
