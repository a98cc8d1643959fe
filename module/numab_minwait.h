/* SPDX-License-Identifier: GPL-2.0 */
#ifndef NUMAB_MINWAIT_H
#define NUMAB_MINWAIT_H

#include <linux/atomic.h>
#include <linux/types.h>

/* Published read-only in debugfs. */
extern atomic_t min_wait_instances;

int min_wait_register(void);
void min_wait_unregister(void);

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
