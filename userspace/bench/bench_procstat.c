// SPDX-License-Identifier: GPL-2.0
/*
 * bench_procstat: what a process (all of its threads) has used so far, for
 * a shell script to take the difference around a load generator.
 *
 *   bench_procstat PID
 *
 * Prints "cpu_ns=N vcs=N ivcs=N": its process CPU clock in ns, and the sum
 * of voluntary and involuntary context switches of its threads.
 */
#define _GNU_SOURCE
#include "bench_util.h"

int main(int argc, char **argv)
{
	struct bench_proc_usage u;

	if (argc != 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: %s PID\n", argv[0]);
		return 2;
	}
	bench_proc_usage_read(atoi(argv[1]), &u);
	printf("cpu_ns=%llu vcs=%ld ivcs=%ld\n", (unsigned long long)u.cpu_ns,
	       u.nvcsw, u.nivcsw);
	return 0;
}
