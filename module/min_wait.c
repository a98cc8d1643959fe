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

struct min_wait_sleeper {
	struct hrtimer timer;
	struct epoll_min_waiter *mw;
	struct task_struct *task;
	ktime_t timeout;	/* KTIME_MAX for none */
	u64 slack;
	bool elapsed;
	bool timed_out;
};

/*
 * At the end of the minimum wait the kernel wakes the waiter only if
 * events are ready, so a waiter that finds none sleeps through: the timer
 * goes on to the caller's timeout, if any.
 */
static enum hrtimer_restart min_wait_timer_fn(struct hrtimer *timer)
{
	struct min_wait_sleeper *s = container_of(timer,
						  struct min_wait_sleeper,
						  timer);

	if (!s->elapsed) {
		s->elapsed = true;
		epoll_min_wait_elapsed(s->mw);
		if (s->timeout == KTIME_MAX)
			return HRTIMER_NORESTART;
		hrtimer_set_expires_range_ns(timer, s->timeout, s->slack);
		return HRTIMER_RESTART;
	}
	WRITE_ONCE(s->timed_out, true);
	wake_up_process(s->task);
	return HRTIMER_NORESTART;
}

static void min_wait_wait(struct epoll_min_waiter *mw, u32 usecs,
			  const ktime_t *timeout)
{
	ktime_t end = ktime_add_us(ktime_get(), usecs);
	struct min_wait_sleeper s = {
		.mw = mw,
		.task = current,
		.timeout = timeout ? *timeout : KTIME_MAX,
		.slack = current->timer_slack_ns,
	};

	/* A timeout before the end of the minimum wait is all that counts. */
	if (!ktime_before(end, s.timeout)) {
		s.elapsed = true;
		end = s.timeout;
	}
	hrtimer_init_on_stack(&s.timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	s.timer.function = min_wait_timer_fn;
	hrtimer_set_expires_range_ns(&s.timer, end, s.slack);
	hrtimer_start_expires(&s.timer, HRTIMER_MODE_ABS);

	/* Entered in TASK_INTERRUPTIBLE: a signal, fatal or not, ends it. */
	while (!epoll_min_waiter_woken(mw) && !READ_ONCE(s.timed_out) &&
	       !signal_pending(current)) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	hrtimer_cancel(&s.timer);
	destroy_hrtimer_on_stack(&s.timer);
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
