// SPDX-License-Identifier: GPL-2.0
/*
 * libminwait.so: give every epoll instance a program creates a min-wait,
 * without changing the program.
 *
 *   MINWAIT_US=200 [MINWAIT_FLAGS=after-first,adaptive] [MINWAIT_EVENTS=K] \
 *	LD_PRELOAD=/path/to/libminwait.so PROG [ARGS...]
 *
 * Wraps epoll_create() and epoll_create1(): after a successful create,
 * issues epoll_ctl(fd, EPOLL_CTL_MIN_EVENTS, -1, {.data.u64 = K}) when K is
 * set, then epoll_ctl(fd, EPOLL_CTL_MIN_WAIT, -1, {.data.u64 = MINWAIT_US |
 * flags}). MINWAIT_US unset or 0: nothing is done. A value that is not
 * valid (MINWAIT_US and MINWAIT_EVENTS: a decimal integer in 0..INT_MAX;
 * MINWAIT_FLAGS: a comma list of "after-first" and "adaptive"), or a
 * kernel that refuses an operation
 * (module not loaded, or one without these ops), gets one warning on
 * stderr per process and the program runs unchanged: no partial setting
 * is left on the instance. The create call itself always behaves as
 * without the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "numab_uapi.h"

#define SHIM_API __attribute__((visibility("default")))

static int (*real_epoll_create)(int size);
static int (*real_epoll_create1)(int flags);
static uint64_t minwait_value;	/* usecs | flags; 0: nothing to do */
static long minwait_events;	/* the batch target K; 0: not set */
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

/* MINWAIT_US, MINWAIT_EVENTS: decimal digits, 0..INT_MAX; -1 if invalid. */
static long parse_count(const char *s)
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

/* An unset variable is 0; -1 (after one warning) if it is not valid. */
static long env_count(const char *name)
{
	const char *env = getenv(name);
	long v;

	if (!env)
		return 0;
	v = parse_count(env);
	if (v < 0)
		warn_once("ignoring MINWAIT_US, MINWAIT_FLAGS and MINWAIT_EVENTS: %s=\"%s\" is not an integer in 0..%d",
			  name, env, INT_MAX);
	return v;
}

/*
 * MINWAIT_FLAGS: unset, or a comma list of "after-first" and "adaptive";
 * -1 (after one warning) if not.
 */
static int64_t env_flags(void)
{
	const char *env = getenv("MINWAIT_FLAGS");
	int64_t flags = 0;
	const char *s, *end;
	size_t len;

	if (!env)
		return 0;
	for (s = env; ; s = end + 1) {
		end = strchrnul(s, ',');
		len = (size_t)(end - s);
		if (len == strlen("after-first") && !strncmp(s, "after-first", len))
			flags |= (int64_t)EPOLL_MIN_WAIT_AFTER_FIRST;
		else if (len == strlen("adaptive") && !strncmp(s, "adaptive", len))
			flags |= (int64_t)EPOLL_MIN_WAIT_ADAPTIVE;
		else
			break;
		if (!*end)
			return flags;
	}
	warn_once("ignoring MINWAIT_US, MINWAIT_FLAGS and MINWAIT_EVENTS: MINWAIT_FLAGS=\"%s\" is not a comma list of \"after-first\" and \"adaptive\"",
		  env);
	return -1;
}

static void minwait_init(void)
{
	long usecs, events;
	int64_t flags;

	real_epoll_create = (int (*)(int))dlsym(RTLD_NEXT, "epoll_create");
	real_epoll_create1 = (int (*)(int))dlsym(RTLD_NEXT, "epoll_create1");
	usecs = env_count("MINWAIT_US");
	flags = env_flags();
	events = env_count("MINWAIT_EVENTS");
	if (usecs <= 0 || flags < 0 || events < 0)
		return;
	minwait_value = (uint64_t)usecs | (uint64_t)flags;
	minwait_events = events;
}

/*
 * Why: a kernel without the hooks checks the fd argument (-1) before the
 * op (EBADF); a patched one without the module knows no such op (EINVAL).
 */
static void warn_refused(const char *op)
{
	if (errno == EBADF)
		warn_once("%s refused (%s): this kernel lacks the epoll min-wait hooks. Running without a min-wait.",
			  op, strerror(errno));
	else if (errno == EINVAL)
		warn_once("%s refused (%s): is the %s module loaded (modprobe %s)? Running without a min-wait.",
			  op, strerror(errno), NUMAB_MODULE_NAME,
			  NUMAB_MODULE_NAME);
	else
		warn_once("%s refused (%s). Running without a min-wait.", op,
			  strerror(errno));
}

/* K first, so that a kernel without it leaves no min-wait behind. */
static void apply_minwait(int epfd)
{
	struct epoll_event ev = { .data.u64 = (uint64_t)minwait_events };
	int saved = errno;

	if (!minwait_value)
		return;
	if (minwait_events &&
	    epoll_ctl(epfd, EPOLL_CTL_MIN_EVENTS, -1, &ev) < 0) {
		warn_refused("EPOLL_CTL_MIN_EVENTS");
	} else {
		ev.data.u64 = minwait_value;
		if (epoll_ctl(epfd, EPOLL_CTL_MIN_WAIT, -1, &ev) < 0) {
			warn_refused("EPOLL_CTL_MIN_WAIT");
			ev.data.u64 = 0;
			if (minwait_events)
				epoll_ctl(epfd, EPOLL_CTL_MIN_EVENTS, -1, &ev);
		}
	}
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
