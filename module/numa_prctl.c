// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_NUMA_BALANCING): the per-mm NUMA balancing mode.
 *
 * A mode other than DEFAULT pins this module, so the module cannot be
 * unloaded while a process could still depend on it. While any mm is
 * ENABLED, the module holds one reference on sched_numa_balancing, so
 * that balancing runs for those mms even with kernel.numa_balancing = 0.
 *
 * Taking or dropping that reference patches kernel text, with IPIs to
 * every CPU, under cpu_hotplug_lock. It is taken by the first ENABLED mm
 * and dropped lazily, a second after the last one goes, as
 * static_key_deferred does: a process toggling its mode cannot make the
 * kernel patch itself more than about once a second, and an mm going
 * away (possibly in atomic context, with cpu_hotplug_lock held) never
 * touches the key itself. Modes change with atomics: fork, exec and exit
 * take no lock.
 */
#include <linux/jump_label.h>
#include <linux/mm_types.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/sched/numa_balancing.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "numab_minwait.h"

#define KEY_RELEASE_DELAY	HZ

atomic_t numab_enabled_mms = ATOMIC_INIT(0);
bool numab_key_held;

/* Serialises taking and dropping our reference on the key. */
static DEFINE_MUTEX(numab_key_lock);

static void numab_key_release(struct work_struct *work)
{
	mutex_lock(&numab_key_lock);
	if (numab_key_held && !atomic_read(&numab_enabled_mms)) {
		static_branch_dec(&sched_numa_balancing);
		WRITE_ONCE(numab_key_held, false);
	}
	mutex_unlock(&numab_key_lock);
}

static DECLARE_DELAYED_WORK(numab_key_release_work, numab_key_release);

/* One more ENABLED mm; the key is on when this returns. May sleep. */
static void numab_enabled_get(void)
{
	/* More than none means that the key is held. */
	if (atomic_inc_not_zero(&numab_enabled_mms))
		return;

	mutex_lock(&numab_key_lock);
	if (!numab_key_held) {
		static_branch_inc(&sched_numa_balancing);
		WRITE_ONCE(numab_key_held, true);
	}
	atomic_inc(&numab_enabled_mms);
	mutex_unlock(&numab_key_lock);
}

/* One ENABLED mm less. Does not sleep. */
static void numab_enabled_put(void)
{
	if (atomic_dec_and_test(&numab_enabled_mms))
		mod_delayed_work(system_wq, &numab_key_release_work,
				 KEY_RELEASE_DELAY);
}

/*
 * Move @mm to @mode: take what the new mode holds, then switch, then drop
 * what the old one held, so that concurrent changes by the mm's threads
 * stay balanced. Sleeps only to take the key for the first ENABLED mm.
 */
static void numa_mode_set(struct mm_struct *mm, int mode)
{
	int old;

	if (mode == PR_SET_NUMA_BALANCING_ENABLED)
		numab_enabled_get();
	if (mode != PR_SET_NUMA_BALANCING_DEFAULT)
		__module_get(THIS_MODULE);

	old = xchg(&mm->numa_balancing_mode, mode);

	if (old == PR_SET_NUMA_BALANCING_ENABLED)
		numab_enabled_put();
	/* Our caller holds a reference, or runs under RCU. */
	if (old != PR_SET_NUMA_BALANCING_DEFAULT)
		module_put(THIS_MODULE);
}

static void numa_mode_release(struct mm_struct *mm)
{
	numa_mode_set(mm, PR_SET_NUMA_BALANCING_DEFAULT);
}

static int numa_prctl(unsigned long arg2, unsigned long arg3,
		      unsigned long arg4, unsigned long arg5)
{
	if (arg4 || arg5 || !READ_ONCE(numab_live))
		return -EINVAL;

	switch (arg2) {
	case PR_SET_NUMA_BALANCING_DISABLED:
	case PR_SET_NUMA_BALANCING_ENABLED:
	case PR_SET_NUMA_BALANCING_DEFAULT:
		if (arg3)
			return -EINVAL;
		numa_mode_set(current->mm, arg2);
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
	.inherit = numa_mode_set,
	.release = numa_mode_release,
};

int numa_prctl_key_count(void)
{
	return static_key_count(&sched_numa_balancing.key);
}

int numa_prctl_register(void)
{
	return numa_balancing_register_ops(&numa_prctl_ops);
}

/* No mm is out of DEFAULT any more: drop the key now if we hold it. */
void numa_prctl_unregister(void)
{
	numa_balancing_unregister_ops(&numa_prctl_ops);
	cancel_delayed_work_sync(&numab_key_release_work);
	numab_key_release(NULL);
}
