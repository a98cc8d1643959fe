// SPDX-License-Identifier: GPL-2.0
/*
 * bench_numa: a working set first placed on one node's memory, then used
 * from a CPU of another node, with this process's NUMA balancing mode set
 * by prctl(PR_NUMA_BALANCING).
 *
 *   bench_numa probe|stream default|disabled MIB SECONDS HOME_CPU FAR_NODE
 *
 * probe:  one timed touch per page, page after page, for SECONDS: the
 *         distribution of per-access times (a NUMA hint fault and a page
 *         migration show as stalls)
 * stream: sum and write back the whole set, pass after pass, for SECONDS:
 *         bytes per second
 *
 * The set is first touched under set_mempolicy(MPOL_BIND, FAR_NODE), so
 * FAR_NODE may be a node without CPUs; the policy is then reset to the
 * default, and everything runs on HOME_CPU.
 * "default" leaves the mode alone (it follows kernel.numa_balancing);
 * "disabled" needs the numab_minwait module (exit 2 without it).
 * Also prints the NUMA hint faults and page migrations meanwhile (the
 * guest's /proc/vmstat: run it in an otherwise idle guest), the pages this
 * task migrated (/proc/self/sched) and how many pages are on the home
 * node at the end (move_pages).
 */
#define _GNU_SOURCE
#include <math.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "bench_util.h"
#include "numab_uapi.h"

#define PAGE		4096UL
/* Log-linear histogram: 16 buckets per power of two of nanoseconds. */
#define SUB_BITS	4
#define BUCKETS		(64 << SUB_BITS)

static uint64_t hist[BUCKETS];

static unsigned int bucket_of(uint64_t ns)
{
	unsigned int e;

	if (ns < (1u << SUB_BITS))
		return ns;
	e = 63 - __builtin_clzll(ns);
	return ((e - SUB_BITS + 1) << SUB_BITS) |
	       ((ns >> (e - SUB_BITS)) & ((1u << SUB_BITS) - 1));
}

/* Lower bound, in ns, of a bucket. */
static uint64_t bucket_floor(unsigned int b)
{
	unsigned int e = b >> SUB_BITS;

	if (!e)
		return b;
	return (uint64_t)((1u << SUB_BITS) | (b & ((1u << SUB_BITS) - 1)))
	       << (e - 1);
}

static uint64_t hist_quantile(uint64_t total, double p)
{
	uint64_t want = (uint64_t)ceil(p * (double)total), seen = 0;

	for (unsigned int b = 0; b < BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want && hist[b])
			return bucket_floor(b);
	}
	return 0;
}

/* The "NAME VALUE" or "NAME : VALUE" line of @path, or -1. */
static long field(const char *path, const char *name)
{
	long v;

	return proc_field_long(path, name, &v) ? -1 : v;
}

/* How many pages of [buf, buf + pages * PAGE) are on @node. */
static long pages_on_node(char *buf, long pages, unsigned int node)
{
	void **addr = calloc(pages, sizeof(*addr));
	int *status = calloc(pages, sizeof(*status));
	long n = 0;

	if (!addr || !status)
		bench_die("calloc");
	for (long i = 0; i < pages; i++)
		addr[i] = buf + i * PAGE;
	if (syscall(SYS_move_pages, 0, pages, addr, NULL, status, 0))
		bench_die("move_pages");
	for (long i = 0; i < pages; i++)
		n += status[i] == (int)node;
	free(addr);
	free(status);
	return n;
}

static void run_probe(volatile char *buf, long pages, uint64_t end)
{
	uint64_t total = 0, max = 0, over_10us = 0, over_100us = 0;

	while (bench_now_ns() < end) {
		for (long i = 0; i < pages; i++) {
			uint64_t t0 = bench_now_ns(), dt;

			buf[i * PAGE]++;
			dt = bench_now_ns() - t0;
			hist[bucket_of(dt)]++;
			if (dt > max)
				max = dt;
			over_10us += dt > 10000;
			over_100us += dt > 100000;
		}
		total += pages;
	}
	printf(" accesses=%llu over_10us=%llu over_100us=%llu acc_p50_ns=%llu acc_p99_ns=%llu acc_p999_ns=%llu acc_p9999_ns=%llu acc_max_us=%.1f",
	       (unsigned long long)total, (unsigned long long)over_10us,
	       (unsigned long long)over_100us,
	       (unsigned long long)hist_quantile(total, 0.50),
	       (unsigned long long)hist_quantile(total, 0.99),
	       (unsigned long long)hist_quantile(total, 0.999),
	       (unsigned long long)hist_quantile(total, 0.9999),
	       max / 1e3);
}

static void run_stream(uint64_t *buf, long pages, uint64_t start,
		       uint64_t end)
{
	long words = pages * PAGE / sizeof(*buf), passes = 0;
	uint64_t sum = 0;

	while (bench_now_ns() < end) {
		for (long i = 0; i < words; i++) {
			sum += buf[i];
			buf[i] = sum;
		}
		passes++;
	}
	printf(" passes=%ld mib_per_s=%.1f",
	       passes, passes * (pages * PAGE / 1048576.0) * 1e9 /
	       (bench_now_ns() - start));
}

static void set_policy(int mode, int node)
{
	unsigned long mask = node < 0 ? 0 : 1UL << node;

	if (syscall(SYS_set_mempolicy, mode, node < 0 ? NULL : &mask,
		    node < 0 ? 0 : sizeof(mask) * 8))
		bench_die("set_mempolicy(%d, node %d)", mode, node);
}

int main(int argc, char **argv)
{
	long mib, seconds, pages, faults0, migrated0, task_migrated0;
	unsigned int cpu, home_node;
	int home, far, probe;
	uint64_t start;
	char *buf;

	if (argc != 7 || (strcmp(argv[1], "probe") && strcmp(argv[1], "stream")) ||
	    (strcmp(argv[2], "default") && strcmp(argv[2], "disabled"))) {
		fprintf(stderr,
			"usage: %s probe|stream default|disabled MIB SECONDS HOME_CPU FAR_NODE\n",
			argv[0]);
		return 2;
	}
	probe = !strcmp(argv[1], "probe");
	mib = atol(argv[3]);
	seconds = atol(argv[4]);
	home = atoi(argv[5]);
	far = atoi(argv[6]);
	pages = mib * 1048576 / PAGE;
	if (!strcmp(argv[2], "disabled") &&
	    prctl(PR_NUMA_BALANCING, PR_SET_NUMA_BALANCING_DISABLED, 0, 0, 0)) {
		fprintf(stderr, "%s: prctl(PR_NUMA_BALANCING): %s (module not loaded?)\n",
			argv[0], strerror(errno));
		return 2;
	}

	/* First touch on the far node, then work from the home CPU. */
	bench_pin(home);
	buf = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		bench_die("mmap");
	madvise(buf, pages * PAGE, MADV_NOHUGEPAGE);
	set_policy(MPOL_BIND, far);
	memset(buf, 1, pages * PAGE);
	set_policy(MPOL_DEFAULT, -1);
	if (getcpu(&cpu, &home_node))
		bench_die("getcpu");

	faults0 = field("/proc/vmstat", "numa_hint_faults");
	migrated0 = field("/proc/vmstat", "numa_pages_migrated");
	task_migrated0 = field("/proc/self/sched", "numa_pages_migrated");
	printf("test=%s mode=%s mib=%ld seconds=%ld pages=%ld", argv[1],
	       argv[2], mib, seconds, pages);
	start = bench_now_ns();
	if (probe)
		run_probe(buf, pages, start + seconds * 1000000000ull);
	else
		run_stream((uint64_t *)buf, pages, start,
			   start + seconds * 1000000000ull);
	printf(" hint_faults=%ld pages_migrated=%ld task_pages_migrated=%ld pages_on_home_node=%ld\n",
	       field("/proc/vmstat", "numa_hint_faults") - faults0,
	       field("/proc/vmstat", "numa_pages_migrated") - migrated0,
	       field("/proc/self/sched", "numa_pages_migrated") -
	       task_migrated0,
	       pages_on_node(buf, pages, home_node));
	return 0;
}
