/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA helpers for tests and demos: the CPUs of a node, and the NUMA
 * balancing statistics of the calling task.
 */
#ifndef NUMA_NODES_H
#define NUMA_NODES_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_field.h"

/* Parse /sys/devices/system/node/node<n>/cpulist ("0-1,4"). */
static inline int node_cpus(int node, cpu_set_t *set)
{
	char path[64], buf[256], *p;
	long a, b;
	FILE *f;

	CPU_ZERO(set);
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 node);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return -ENODATA;
	while (*p && *p != '\n') {
		a = strtol(p, &p, 10);
		b = a;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (; a <= b; a++)
			CPU_SET(a, set);
		if (*p == ',')
			p++;
		else
			break;
	}
	return CPU_COUNT(set) ? 0 : -ENODATA;
}

/* A "name   :   value" line of /proc/self/sched; -1 when absent. */
static inline long sched_field(const char *name)
{
	long v;

	return proc_field_long("/proc/self/sched", name, &v) ? -1 : v;
}

#endif /* NUMA_NODES_H */
