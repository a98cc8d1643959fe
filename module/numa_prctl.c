// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_NUMA_BALANCING): the per-mm NUMA balancing mode.
 *
 * A mode other than DEFAULT pins this module, so the module cannot be
 * unloaded while a process could still depend on it; ENABLED also holds a
 * reference on sched_numa_balancing, so that balancing runs for the mm
 * even with kernel.numa_balancing = 0.
 */
#include <linux/jump_label.h>
#include <linux/mm_types.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/sched/numa_balancing.h>
#include <linux/uaccess.h>

#include "numab_minwait.h"

atomic_t numab_enabled_mms = ATOMIC_INIT(0);

/* Keeps each mm's key reference in step with its mode. */
static DEFINE_MUTEX(numa_mode_lock);

static void numa_prctl_set_mode(struct mm_struct *mm, int mode)
{
	int old;

	mutex_lock(&numa_mode_lock);
	old = mm->numa_balancing_mode;
	if (old == mode)
		goto out;

	if (old == PR_SET_NUMA_BALANCING_DEFAULT)
		__module_get(THIS_MODULE);
	/* The key is on before the mm is seen ENABLED, and off after. */
	if (mode == PR_SET_NUMA_BALANCING_ENABLED) {
		static_branch_inc(&sched_numa_balancing);
		atomic_inc(&numab_enabled_mms);
	}
	WRITE_ONCE(mm->numa_balancing_mode, mode);
	if (old == PR_SET_NUMA_BALANCING_ENABLED) {
		atomic_dec(&numab_enabled_mms);
		static_branch_dec(&sched_numa_balancing);
	}
	/* Our caller holds its own reference across this call. */
	if (mode == PR_SET_NUMA_BALANCING_DEFAULT)
		module_put(THIS_MODULE);
out:
	mutex_unlock(&numa_mode_lock);
}

static int numa_prctl(unsigned long arg2, unsigned long arg3,
		      unsigned long arg4, unsigned long arg5)
{
	if (arg4 || arg5)
		return -EINVAL;

	switch (arg2) {
	case PR_SET_NUMA_BALANCING_DISABLED:
	case PR_SET_NUMA_BALANCING_ENABLED:
	case PR_SET_NUMA_BALANCING_DEFAULT:
		if (arg3)
			return -EINVAL;
		numa_prctl_set_mode(current->mm, arg2);
		return 0;
	case PR_GET_NUMA_BALANCING:
		return put_user(READ_ONCE(current->mm->numa_balancing_mode),
				(int __user *)arg3);
	default:
		return -EINVAL;
	}
}

static const struct numa_balancing_ops numa_prctl_ops = {
	.owner = THIS_MODULE,
	.prctl = numa_prctl,
	.set_mode = numa_prctl_set_mode,
};

int numa_prctl_key_count(void)
{
	return static_key_count(&sched_numa_balancing.key);
}

int numa_prctl_register(void)
{
	return numa_balancing_register_ops(&numa_prctl_ops);
}

void numa_prctl_unregister(void)
{
	numa_balancing_unregister_ops(&numa_prctl_ops);
}
