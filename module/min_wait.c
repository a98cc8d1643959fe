// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_MIN_WAIT and EPOLL_CTL_MIN_EVENTS: the values that shape a
 * blocking epoll_wait() on an instance, and the minimum wait itself.
 *
 * epoll counts the ready items, holds wakeups back and scans (the
 * epoll_mw_*() helpers); this module decides when a wait ends: from the
 * call's entry or from its first ready event, at a batch of
 * min(K, maxevents) items, at the caller's timeout; with
 * EPOLL_MIN_WAIT_ADAPTIVE, how long it is (min_wait_adapt.c). Its hrtimer
 * ends the minimum wait and then times the caller's timeout. An event
 * never calls into the module, nor does a call that returns at once.
 *
 * An instance with min-wait state pins this module (epoll holds the
 * reference, until the last waiter has left min_wait_wait()), so the
 * module cannot be unloaded while an instance depends on it.
 */
/* linux/eventpoll.h relies on these */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/eventpoll.h>
#include <linux/hrtimer.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>

#include "numab_minwait.h"

atomic_t min_wait_instances = ATOMIC_INIT(0);
/* Blocking calls that entered the wait: per CPU, no atomic on the way in. */
DEFINE_PER_CPU(unsigned long, min_wait_waits);
/* Probes of a batch one higher that ran out: each held its events. */
DEFINE_PER_CPU(unsigned long, min_wait_probes_out);

/* The bits of an EPOLL_CTL_MIN_WAIT value that may be set. */
#define MIN_WAIT_VALID	(EPOLL_MIN_WAIT_AFTER_FIRST | \
			 EPOLL_MIN_WAIT_ADAPTIVE | INT_MAX)

static bool min_wait_active(const struct epoll_min_wait *mw)
{
	return mw->usecs || mw->flags || mw->events;
}

static int min_wait_set(struct epoll_min_wait *mw, int op, u64 value)
{
	bool was_active = min_wait_active(mw);
	int old;

	switch (op) {
	case EPOLL_CTL_MIN_WAIT:
		/* The previous value is the return value: keep it an int. */
		if (value & ~MIN_WAIT_VALID)
			return -EINVAL;
		old = mw->usecs;
		if (mw->usecs == lower_32_bits(value) &&
		    mw->flags == upper_32_bits(value))
			break;
		mw->usecs = lower_32_bits(value);
		mw->flags = upper_32_bits(value);
		/* Even a fixed one: calls made for the last learn nothing. */
		min_wait_adapt_reset(mw);
		break;
	case EPOLL_CTL_MIN_EVENTS:
		if (value > INT_MAX)
			return -EINVAL;
		old = mw->events;
		mw->events = value;
		break;
	default:
		return -EINVAL;
	}

	if (!was_active && min_wait_active(mw))
		atomic_inc(&min_wait_instances);
	else if (was_active && !min_wait_active(mw))
		atomic_dec(&min_wait_instances);
	return old;
}

static void min_wait_release(struct epoll_min_wait *mw)
{
	atomic_dec(&min_wait_instances);
}

/* One blocking call in its minimum wait. */
struct min_wait_call {
	struct epoll_min_waiter *w;
	struct hrtimer timer;
	ktime_t first;		/* its first ready event; 0 before it */
	ktime_t min_end;	/* KTIME_MAX until the wait has a start */
	int batch;		/* the smallest min(K, maxevents) it was told */
	ktime_t armed;		/* the timer's expiry, as last armed */
	u64 min_slack;
	u32 wait_us;		/* adaptive: the wait it takes */
	u16 gen;		/* adaptive: the value it was made for */
	bool hard;		/* the timer only wakes the waiter */
	bool kick;		/* the timer woke the waiter */
	bool over;		/* the minimum wait has ended */
	bool idle;		/* it ended with nothing ready */
	ktime_t seen;		/* when an event was first found ready */
};

/*
 * At the end of the minimum wait, epoll wakes the waiter if events are
 * ready, and otherwise leaves it asleep until the first one; the timer
 * goes on to the caller's timeout. Under PREEMPT_RT a real-time waiter's
 * timer expires in hard interrupt context, where epoll's lock (a sleeping
 * lock there) cannot be taken: it wakes the waiter, which ends its hold
 * itself.
 */
static enum hrtimer_restart min_wait_expire(struct hrtimer *timer)
{
	struct min_wait_call *c = container_of(timer, struct min_wait_call,
					       timer);
	struct epoll_min_waiter *w = c->w;

	if (!ktime_before(hrtimer_cb_get_time(timer), w->timeout)) {
		WRITE_ONCE(w->timed_out, true);
		WRITE_ONCE(c->kick, true);
		wake_up_process(w->task);
		return HRTIMER_NORESTART;
	}
	if (c->hard) {
		WRITE_ONCE(c->kick, true);
		wake_up_process(w->task);
	} else if (!epoll_mw_end_hold(w)) {
		WRITE_ONCE(c->idle, true);
	}
	if (w->timeout == KTIME_MAX)
		return HRTIMER_NORESTART;
	hrtimer_set_expires_range_ns(timer, w->timeout, w->slack);
	return HRTIMER_RESTART;
}

/* Time the end of the minimum wait, or once it is over the timeout. */
static void min_wait_arm(struct min_wait_call *c, bool over)
{
	struct epoll_min_waiter *w = c->w;
	ktime_t expires = w->timeout;
	u64 slack = w->slack;

	if (!over && ktime_before(c->min_end, expires)) {
		expires = c->min_end;
		slack = c->min_slack;
	} else if (over && hrtimer_active(&c->timer)) {
		/* Already on its way to the timeout. */
		return;
	}
	if (expires == c->armed || expires == KTIME_MAX)
		return;
	/* The callback may be running: it sets the expiry of a restart. */
	hrtimer_cancel(&c->timer);
	hrtimer_start_range_ns(&c->timer, expires, slack,
			       c->hard ? HRTIMER_MODE_ABS_HARD :
					 HRTIMER_MODE_ABS);
	c->armed = expires;
}

static void min_wait_sleep(struct min_wait_call *c)
{
	struct epoll_min_waiter *w = c->w;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (READ_ONCE(w->woken) || READ_ONCE(c->kick) ||
		    signal_pending(current))
			break;
		schedule();
	}
	epoll_mw_finish_sleep(w);
	WRITE_ONCE(c->kick, false);
}

/*
 * An adaptive wait of 0: sleep to the first event, as a plain call, and
 * deliver what is ready then; all the policy needs is when it came.
 * Returns what epoll_mw_scan() delivered, with @c->seen set, or 0 to go
 * on as a plain call.
 */
static int min_wait_first_event(struct min_wait_call *c)
{
	struct epoll_min_waiter *w = c->w;
	ktime_t now;
	int res;

	while (!READ_ONCE(w->timed_out) && !signal_pending(current)) {
		min_wait_arm(c, true);
		switch (epoll_mw_prepare_sleep(w, 1, false)) {
		case EPOLL_MW_SLEEP:
			min_wait_sleep(c);
			break;
		case EPOLL_MW_CHANGED:
			/*
			 * A new K leaves this wait of 0 as it was; a new
			 * value, or one cleared, ends it (the generation
			 * read on entry may be that of the value since).
			 */
			if (!READ_ONCE(w->mw->usecs) ||
			    !(READ_ONCE(w->mw->flags) & EPOLL_MIN_WAIT_ADAPT) ||
			    !min_wait_adapt_current(w->mw, c->gen))
				return 0;
			break;
		case EPOLL_MW_SCAN:
			/* Only an item still ready is an event: not a scan. */
			now = ktime_get();
			res = epoll_mw_scan(w, 1);
			if (res > 0)
				c->seen = now;
			if (res)
				return res;
			break;
		}
	}
	return 0;
}

/*
 * The values are read again after every wakeup: a value that would end
 * the minimum wait sooner (a lower M or K, or M cleared) applies at
 * once to the calls in progress, and one that would end it later (a
 * higher M or K) from the next call. The adaptive target is read as it
 * is.
 */
static int min_wait_loop(struct min_wait_call *c)
{
	struct epoll_min_waiter *w = c->w;
	bool scan = false;
	int res;

	for (;;) {
		u32 usecs = READ_ONCE(w->mw->usecs);
		u32 flags = READ_ONCE(w->mw->flags);
		u32 k = READ_ONCE(w->mw->events);
		int batch = k && k < w->maxevents ? k : w->maxevents;
		ktime_t now = ktime_get();
		ktime_t min_end;
		bool over, hold;
		int need;

		/* A higher K, as a longer M, applies from the next call. */
		batch = min(batch, c->batch);
		c->batch = batch;
		/* Cleared, or a batch of one: a plain wait from here on. */
		if (!usecs || batch < 2)
			return 0;
		if (flags & EPOLL_MIN_WAIT_ADAPT) {
			u32 target = READ_ONCE(w->mw->cur_events);

			usecs = min(usecs, c->wait_us);
			if (target >= 2)
				batch = min_t(u32, batch, target);
		}
		if (w->ready && !c->seen)
			c->seen = now;
		if (!(flags & EPOLL_MIN_WAIT_FIRST))
			min_end = ktime_add_us(w->start, usecs);
		else if (c->first)
			min_end = ktime_add_us(c->first, usecs);
		else
			min_end = KTIME_MAX;
		/* A value that would wait longer applies from the next call. */
		if (ktime_before(min_end, c->min_end)) {
			c->min_end = min_end;
			c->min_slack = min_t(u64, current->timer_slack_ns,
					     (u64)usecs * NSEC_PER_USEC / 8);
			if (rt_prio(current->prio))
				c->min_slack = 0;
		}
		over = READ_ONCE(w->hold_ended) || !ktime_before(now, c->min_end);
		need = over ? 1 : batch;

		if (scan) {
			res = epoll_mw_scan(w, need);
			if (res) {
				c->over = over;
				return res;
			}
			scan = false;
		}
		/* After the first event: the minimum wait starts with it. */
		if (w->ready && !c->first && c->min_end == KTIME_MAX) {
			c->first = now;
			c->seen = c->seen ?: now;
			continue;
		}
		if (w->ready >= need) {
			scan = true;
			continue;
		}
		if (READ_ONCE(w->timed_out) || signal_pending(current))
			return 0;

		if (over && !w->ready)
			WRITE_ONCE(c->idle, true);
		min_wait_arm(c, over);
		hold = !over && c->min_end != KTIME_MAX;
		if (epoll_mw_prepare_sleep(w, need, hold) == EPOLL_MW_SLEEP)
			min_wait_sleep(c);
		scan = true;
	}
}

/* Tell the adaptive policy what the call saw. */
static void min_wait_report(struct min_wait_call *c, int res)
{
	struct epoll_min_waiter *w = c->w;
	struct min_wait_sample s = {
		.start = w->start,
		.first = c->seen,
		.wait_start = c->first ? c->first : w->start,
		.end = ktime_get(),
		.wait_us = c->wait_us,
		.events = res,
		.ready_wakes = w->ready_wakes,
		.gen = c->gen,
		.after_first = c->first,
		.early = !c->over,
		.idle = READ_ONCE(c->idle),
	};

	if (!s.first)
		s.first = s.end;
	min_wait_adapt_end(w->mw, &s);
}

static int min_wait_wait(struct epoll_min_waiter *w)
{
	struct min_wait_call c = {
		.w = w,
		.min_end = KTIME_MAX,
		.batch = INT_MAX,
		.armed = KTIME_MAX,
		.hard = IS_ENABLED(CONFIG_PREEMPT_RT) && rt_prio(current->prio),
	};
	bool adaptive = READ_ONCE(w->mw->flags) & EPOLL_MIN_WAIT_ADAPT;
	int res;

	this_cpu_inc(min_wait_waits);
	c.wait_us = min_wait_adapt_begin(w->mw, &c.gen);
	hrtimer_init_on_stack(&c.timer, CLOCK_MONOTONIC,
			      c.hard ? HRTIMER_MODE_ABS_HARD : HRTIMER_MODE_ABS);
	c.timer.function = min_wait_expire;
	if (adaptive && !c.wait_us)
		res = min_wait_first_event(&c);
	else
		res = min_wait_loop(&c);
	hrtimer_cancel(&c.timer);
	destroy_hrtimer_on_stack(&c.timer);
	if (!adaptive)
		return res;
	/*
	 * Ended by its timeout or a signal, or made plain, a call that saw
	 * events delivers what is ready, as epoll's plain path would: the
	 * policy learns the batch it got.
	 */
	if (!res && c.seen)
		res = epoll_mw_scan(w, 1);
	if (res > 0)
		min_wait_report(&c, res);
	return res;
}

static const struct epoll_min_wait_ops min_wait_ops = {
	.owner = THIS_MODULE,
	.set = min_wait_set,
	.release = min_wait_release,
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
