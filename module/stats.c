// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs numab_minwait/counters: the state the module accounts for, the
 * blocking calls that entered its minimum wait, and the adaptive wait's
 * probes of a larger batch that ran out, one "name value" pair a line, so
 * that tests can check nothing leaks, what epoll calls and what the
 * policy costs.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "numab_minwait.h"

static struct dentry *numab_debugfs_dir;

static unsigned long numab_percpu_sum(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		/* Races this_cpu_inc(): a count a little behind is fine. */
		sum += data_race(*per_cpu_ptr(counter, cpu));
	}
	return sum;
}

static int counters_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "enabled_mms %d\n", numa_prctl_enabled_mms());
	seq_printf(m, "key_count %d\n", numa_prctl_key_count());
	seq_printf(m, "key_held %d\n", numa_prctl_key_held());
	seq_printf(m, "min_wait_instances %d\n",
		   atomic_read(&min_wait_instances));
	seq_printf(m, "min_wait_waits %lu\n",
		   numab_percpu_sum(&min_wait_waits));
	seq_printf(m, "min_wait_probes_out %lu\n",
		   numab_percpu_sum(&min_wait_probes_out));
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
