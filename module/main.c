// SPDX-License-Identifier: GPL-2.0
/*
 * numab_minwait: per-process NUMA balancing (prctl PR_NUMA_BALANCING) and
 * the epoll minimum wait (EPOLL_CTL_MIN_WAIT), supplied to the hook points
 * of a patched kernel.
 *
 * Unloading is refused while state exists: every process out of the
 * DEFAULT NUMA balancing mode and every epoll instance with a minimum wait
 * holds a reference on the module.
 */
#include <linux/module.h>

#include "numab_minwait.h"

bool numab_live __ro_after_init;

/*
 * The epoll hook goes last and debugfs after it, so that nothing fails
 * once a file or epoll instance can pin the module; a prctl() made while
 * the second registration may still fail is refused (numab_live).
 */
static int __init numab_minwait_init(void)
{
	int ret;

	ret = numa_prctl_register();
	if (ret)
		return ret;

	ret = min_wait_register();
	if (ret) {
		numa_prctl_unregister();
		return ret;
	}

	WRITE_ONCE(numab_live, true);
	numab_stats_init();
	return 0;
}

static void __exit numab_minwait_exit(void)
{
	min_wait_unregister();
	numa_prctl_unregister();
	numab_stats_exit();
}

module_init(numab_minwait_init);
module_exit(numab_minwait_exit);

MODULE_DESCRIPTION("Per-process NUMA balancing and epoll minimum wait");
MODULE_LICENSE("GPL");
MODULE_VERSION(NUMAB_VERSION);
