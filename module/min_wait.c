// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_MIN_WAIT: the shortest time a blocking epoll_wait() waits for
 * events to accumulate before it returns.
 *
 * An instance with a minimum wait pins this module, so the module cannot
 * be unloaded while an instance or one of its waiters depends on it.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/eventpoll.h>
#include <linux/hrtimer.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "numab_minwait.h"

atomic_t min_wait_instances = ATOMIC_INIT(0);

static int min_wait_set(u32 *min_wait_us, u64 usecs)
{
	u32 old;

	/* The previous value is the return value: keep it an int. */
	if (usecs > INT_MAX)
		return -EINVAL;

	old = xchg(min_wait_us, (u32)usecs);
	if (!old && usecs) {
		__module_get(THIS_MODULE);
		atomic_inc(&min_wait_instances);
	} else if (old && !usecs) {
		atomic_dec(&min_wait_instances);
		/* Our caller holds its own reference across this call. */
		module_put(THIS_MODULE);
	}
	return old;
}

static void min_wait_wait(u32 usecs, const ktime_t *timeout, const bool *full)
{
	ktime_t end = ktime_add_us(ktime_get(), usecs);

	if (timeout && ktime_before(*timeout, end))
		end = *timeout;

	/* Entered in TASK_INTERRUPTIBLE: a signal, fatal or not, ends it. */
	while (!READ_ONCE(*full) && !signal_pending(current)) {
		if (!schedule_hrtimeout_range(&end, current->timer_slack_ns,
					      HRTIMER_MODE_ABS))
			break;
		set_current_state(TASK_INTERRUPTIBLE);
	}
}

static const struct epoll_min_wait_ops min_wait_ops = {
	.owner = THIS_MODULE,
	.set = min_wait_set,
	.wait = min_wait_wait,
};

int min_wait_register(void)
{
	return epoll_register_min_wait(&min_wait_ops);
}

void min_wait_unregister(void)
{
	epoll_unregister_min_wait(&min_wait_ops);
}
