/* SPDX-License-Identifier: GPL-2.0 */
/* The CPUs of a NUMA node, for tests and demos that place work on a node. */
#ifndef NUMA_NODES_H
#define NUMA_NODES_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif /* NUMA_NODES_H */
