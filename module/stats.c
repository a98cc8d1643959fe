// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs numab_minwait/counters: the state the module accounts for, and
 * the blocking calls that entered its minimum wait, one "name value" pair
 * a line, so that tests can check nothing leaks and what epoll calls.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "numab_minwait.h"

static struct dentry *numab_debugfs_dir;

static unsigned long min_wait_waits_sum(void)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(min_wait_waits, cpu);
	return sum;
}

static int counters_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "enabled_mms %d\n", numa_prctl_enabled_mms());
	seq_printf(m, "key_count %d\n", numa_prctl_key_count());
	seq_printf(m, "key_held %d\n", numa_prctl_key_held());
	seq_printf(m, "min_wait_instances %d\n",
		   atomic_read(&min_wait_instances));
	seq_printf(m, "min_wait_waits %lu\n", min_wait_waits_sum());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(counters);

/* debugfs is best effort: the module works without it. */
void numab_stats_init(void)
{
	numab_debugfs_dir = debugfs_create_dir("numab_minwait", NULL);
	debugfs_create_file("counters", 0444, numab_debugfs_dir, NULL,
			    &counters_fops);
}

void numab_stats_exit(void)
{
	debugfs_remove_recursive(numab_debugfs_dir);
}
