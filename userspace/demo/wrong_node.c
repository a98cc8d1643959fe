// SPDX-License-Identifier: GPL-2.0
/*
 * wrong_node: the workload NUMA balancing exists for. First-touches a
 * buffer from node 0's CPUs, then keeps touching it from node 1's CPUs,
 * so that balancing (when on for this process) migrates it to node 1.
 *
 *   wrong_node MIB SECONDS
 *
 * Then prints "ready ADDR FAULTS MIGRATED": the buffer's address, and the
 * NUMA hinting faults and page migrations this program took (a shell
 * that forked it may have taken some before the exec), and waits to be
 * killed, so that its caller can read its /proc files.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "numa_nodes.h"

static int pin_to_node(int node)
{
	cpu_set_t set;
	int err = node_cpus(node, &set);

	if (err)
		return err;
	return sched_setaffinity(0, sizeof(set), &set);
}

static void touch(volatile char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 4096)
		buf[i] = 1;
}

int main(int argc, char **argv)
{
	long faults, migrated;
	size_t len;
	time_t end;
	char *buf;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MIB SECONDS\n", argv[0]);
		return 64;
	}
	len = strtoul(argv[1], NULL, 10) << 20;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || pin_to_node(0)) {
		perror("setup");
		return 1;
	}
	faults = sched_field("total_numa_faults");
	migrated = sched_field("numa_pages_migrated");
	touch(buf, len);
	if (pin_to_node(1)) {
		perror("node 1");
		return 1;
	}
	end = time(NULL) + atoi(argv[2]);
	while (time(NULL) < end)
		touch(buf, len);
	printf("ready %lx %ld %ld\n", (unsigned long)buf,
	       sched_field("total_numa_faults") - faults,
	       sched_field("numa_pages_migrated") - migrated);
	fflush(stdout);
	pause();
	return 0;
}
