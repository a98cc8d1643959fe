/* SPDX-License-Identifier: GPL-2.0 */
#ifndef NUMAB_MINWAIT_H
#define NUMAB_MINWAIT_H

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/types.h>

/*
 * Set once init holds both hook points: until then prctl() refuses, so
 * that a load that fails half-way leaves no mm out of DEFAULT.
 */
extern bool numab_live;

/* Published read-only in debugfs. */
extern atomic_t min_wait_instances;
DECLARE_PER_CPU(unsigned long, min_wait_waits);
DECLARE_PER_CPU(unsigned long, min_wait_probes_out);

int min_wait_register(void);
void min_wait_unregister(void);

struct epoll_min_wait;

/* What a call that slept in an adaptive minimum wait saw. */
struct min_wait_sample {
	ktime_t start;		/* its entry into epoll_wait() */
	ktime_t first;		/* when it first found an event ready */
	ktime_t wait_start;	/* start, or first when timed from the first */
	ktime_t end;
	u32 wait_us;		/* the wait it took */
	int events;		/* delivered, or 0 or an errno */
	u32 ready_wakes;	/* wakeups of items already ready */
	u16 gen;		/* the value it was made for */
	bool after_first;	/* the wait was timed from the first event */
	bool early;		/* its batch was complete before the wait ended */
	bool idle;		/* the wait ended with nothing ready */
};

void min_wait_adapt_reset(struct epoll_min_wait *mw);
u32 min_wait_adapt_begin(struct epoll_min_wait *mw, u16 *gen);
bool min_wait_adapt_current(struct epoll_min_wait *mw, u16 gen);
void min_wait_adapt_end(struct epoll_min_wait *mw,
			const struct min_wait_sample *s);

#ifdef CONFIG_NUMA_BALANCING
extern atomic_t numab_enabled_mms;
extern bool numab_key_held;

int numa_prctl_register(void);
void numa_prctl_unregister(void);
int numa_prctl_key_count(void);

static inline int numa_prctl_enabled_mms(void)
{
	return atomic_read(&numab_enabled_mms);
}

static inline bool numa_prctl_key_held(void)
{
	return READ_ONCE(numab_key_held);
}
#else
static inline int numa_prctl_register(void)
{
	return 0;
}

static inline void numa_prctl_unregister(void)
{
}

static inline int numa_prctl_key_count(void)
{
	return 0;
}

static inline int numa_prctl_enabled_mms(void)
{
	return 0;
}

static inline bool numa_prctl_key_held(void)
{
	return false;
}
#endif

void numab_stats_init(void);
void numab_stats_exit(void);

#endif /* NUMAB_MINWAIT_H */
