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
	size_t len = strlen(name);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen("/proc/self/sched", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, len) || (line[len] != ' ' &&
						  line[len] != ':'))
			continue;
		v = strtol(strchr(line, ':') + 1, NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

#endif /* NUMA_NODES_H */
