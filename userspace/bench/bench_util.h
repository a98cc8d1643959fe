/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the bench programs: CPU pinning, clocks, getrusage
 * deltas, another process's CPU time and context switches, a perf counter
 * when the guest has one, and the one-line
 * "key=value" result format that report.py reads.
 * Include it after defining _GNU_SOURCE.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "proc_field.h"

static inline void __attribute__((noreturn, format(printf, 1, 2)))
bench_die(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(1);
}

static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity(%d)", cpu);
}

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * CPU time of the calling thread: the scheduler's runtime in ns (getrusage
 * reports it in us, split into user and system time by tick samples).
 */
static inline uint64_t bench_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint64_t bench_tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + tv->tv_usec * 1000ull;
}

/* What getrusage() says, as numbers that subtract. */
struct bench_usage {
	uint64_t cpu_ns;	/* user + system */
	uint64_t sys_ns;
	long nvcsw;
	long nivcsw;
	long minflt;
};

static inline void bench_usage_read(int who, struct bench_usage *u)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		bench_die("getrusage");
	u->sys_ns = bench_tv_ns(&ru.ru_stime);
	u->cpu_ns = bench_tv_ns(&ru.ru_utime) + u->sys_ns;
	u->nvcsw = ru.ru_nvcsw;
	u->nivcsw = ru.ru_nivcsw;
	u->minflt = ru.ru_minflt;
}

static inline void bench_usage_sub(struct bench_usage *d,
				   const struct bench_usage *a,
				   const struct bench_usage *b)
{
	d->cpu_ns = a->cpu_ns - b->cpu_ns;
	d->sys_ns = a->sys_ns - b->sys_ns;
	d->nvcsw = a->nvcsw - b->nvcsw;
	d->nivcsw = a->nivcsw - b->nivcsw;
	d->minflt = a->minflt - b->minflt;
}

/* What another process (all of its threads) has used so far. */
struct bench_proc_usage {
	uint64_t cpu_ns;	/* its process CPU clock */
	long nvcsw;
	long nivcsw;
};

static inline void bench_proc_usage_read(pid_t pid,
					 struct bench_proc_usage *u)
{
	char path[320];
	struct timespec ts;
	struct dirent *d;
	clockid_t clk;
	DIR *dir;

	memset(u, 0, sizeof(*u));
	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		bench_die("CPU clock of pid %d", pid);
	u->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		bench_die("opendir %s", path);
	while ((d = readdir(dir))) {
		long v;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid,
			 d->d_name);
		if (!proc_field_long(path, "voluntary_ctxt_switches", &v))
			u->nvcsw += v;
		if (!proc_field_long(path, "nonvoluntary_ctxt_switches", &v))
			u->nivcsw += v;
	}
	closedir(dir);
}

/*
 * A counter of this thread and its future children: hardware instructions
 * when the (virtual) CPU has a PMU, else -1 (the caller reports "n/a").
 */
static inline int bench_instr_open(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_INSTRUCTIONS,
		.disabled = 1,
		.inherit = 1,
		.exclude_hv = 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static inline void bench_instr_start(int fd)
{
	if (fd >= 0) {
		ioctl(fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
}

/* Instructions since bench_instr_start(), or -1 without a counter. */
static inline long long bench_instr_stop(int fd)
{
	long long v;

	if (fd < 0)
		return -1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

/*
 * A paced client, in one thread: request k goes out @send_at(k) ns after
 * the start while the replies are read from the ready items of @ep, until
 * all @requests came back. @send(k) and @receive(event) return how many
 * replies they read (@send reads them while the socket is full). Returns
 * the start, in bench_now_ns() time.
 */
static inline uint64_t bench_paced_client(int ep, long requests,
					  uint64_t (*send_at)(long k),
					  long (*send)(long k),
					  long (*receive)(const struct epoll_event *ev))
{
	uint64_t start = bench_now_ns(), next = start + send_at(0);
	long sent = 0, received = 0;
	struct epoll_event ev[64];

	while (received < requests) {
		uint64_t now = bench_now_ns();
		struct timespec to, *top = NULL;
		int n;

		if (sent < requests && now >= next) {
			received += send(sent++);
			if (sent < requests)
				next = start + send_at(sent);
			continue;
		}
		if (sent < requests) {
			to.tv_sec = (next - now) / 1000000000ull;
			to.tv_nsec = (next - now) % 1000000000ull;
			top = &to;
		}
		n = epoll_pwait2(ep, ev, sizeof(ev) / sizeof(ev[0]), top, NULL);
		if (n < 0 && errno != EINTR)
			bench_die("client epoll_pwait2");
		for (int i = 0; i < n; i++)
			received += receive(&ev[i]);
	}
	return start;
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The p-th quantile (0..1) of n sorted values. */
static inline uint64_t bench_quantile(const uint64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);

	return n ? v[i < n ? i : n - 1] : 0;
}

#endif /* BENCH_UTIL_H */
