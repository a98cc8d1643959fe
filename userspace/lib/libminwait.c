// SPDX-License-Identifier: GPL-2.0
/*
 * libminwait.so: give every epoll instance a program creates a min-wait,
 * without changing the program.
 *
 *   MINWAIT_US=200 LD_PRELOAD=/path/to/libminwait.so PROG [ARGS...]
 *
 * Wraps epoll_create() and epoll_create1(): after a successful create,
 * issues epoll_ctl(fd, EPOLL_CTL_MIN_WAIT, -1, {.data.u64 = MINWAIT_US}).
 * MINWAIT_US unset or 0: nothing is done. A value that is not a decimal
 * integer in 0..INT_MAX, or a kernel that refuses the operation (module
 * not loaded), gets one warning on stderr per process and the program runs
 * unchanged. The create call itself always behaves as without the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "numab_uapi.h"

#define SHIM_API __attribute__((visibility("default")))

static int (*real_epoll_create)(int size);
static int (*real_epoll_create1)(int flags);
static long minwait_us;		/* 0: nothing to do */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int warned;

static void __attribute__((format(printf, 1, 2))) warn_once(const char *fmt,
							     ...)
{
	va_list ap;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	fputs("libminwait: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* MINWAIT_US: decimal digits only, 0..INT_MAX; -1 if invalid. */
static long parse_minwait(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
	}
	return v;
}

static void minwait_init(void)
{
	const char *env = getenv("MINWAIT_US");
	long v;

	real_epoll_create = (int (*)(int))dlsym(RTLD_NEXT, "epoll_create");
	real_epoll_create1 = (int (*)(int))dlsym(RTLD_NEXT, "epoll_create1");
	if (!env)
		return;
	v = parse_minwait(env);
	if (v < 0) {
		warn_once("ignoring MINWAIT_US=\"%s\": not an integer in 0..%d",
			  env, INT_MAX);
		return;
	}
	minwait_us = v;
}

static void apply_minwait(int epfd)
{
	struct epoll_event ev = { .data.u64 = (unsigned long)minwait_us };
	int saved = errno;

	if (minwait_us &&
	    epoll_ctl(epfd, EPOLL_CTL_MIN_WAIT, -1, &ev) < 0)
		warn_once("EPOLL_CTL_MIN_WAIT refused (%s): is the %s module loaded? Running without a min-wait.",
			  strerror(errno), NUMAB_MODULE_NAME);
	errno = saved;
}

SHIM_API int epoll_create1(int flags)
{
	int fd;

	pthread_once(&init_once, minwait_init);
	if (!real_epoll_create1) {
		errno = ENOSYS;
		return -1;
	}
	fd = real_epoll_create1(flags);
	if (fd >= 0)
		apply_minwait(fd);
	return fd;
}

SHIM_API int epoll_create(int size)
{
	int fd;

	pthread_once(&init_once, minwait_init);
	if (!real_epoll_create) {
		errno = ENOSYS;
		return -1;
	}
	fd = real_epoll_create(size);
	if (fd >= 0)
		apply_minwait(fd);
	return fd;
}
