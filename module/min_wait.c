// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_CTL_MIN_WAIT and EPOLL_CTL_MIN_EVENTS: the values that shape a
 * blocking epoll_wait() on an instance, validated and accounted for here.
 * The wait itself is epoll's: the hot path never calls into this module.
 *
 * An instance with min-wait state pins this module, so the module cannot
 * be unloaded while an instance depends on it.
 */
/* linux/eventpoll.h relies on these */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/eventpoll.h>
#include <linux/limits.h>
#include <linux/module.h>

#include "numab_minwait.h"

atomic_t min_wait_instances = ATOMIC_INIT(0);

/* The bits of an EPOLL_CTL_MIN_WAIT value that may be set. */
#define MIN_WAIT_VALID	(EPOLL_MIN_WAIT_AFTER_FIRST | INT_MAX)

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
		mw->usecs = lower_32_bits(value);
		mw->flags = upper_32_bits(value);
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

	if (!was_active && min_wait_active(mw)) {
		__module_get(THIS_MODULE);
		atomic_inc(&min_wait_instances);
	} else if (was_active && !min_wait_active(mw)) {
		atomic_dec(&min_wait_instances);
		/* Our caller holds its own reference across this call. */
		module_put(THIS_MODULE);
	}
	return old;
}

static void min_wait_release(struct epoll_min_wait *mw)
{
	atomic_dec(&min_wait_instances);
	module_put(THIS_MODULE);
}

static const struct epoll_min_wait_ops min_wait_ops = {
	.owner = THIS_MODULE,
	.set = min_wait_set,
	.release = min_wait_release,
};

int min_wait_register(void)
{
	return epoll_register_min_wait(&min_wait_ops);
}

void min_wait_unregister(void)
{
	epoll_unregister_min_wait(&min_wait_ops);
}
