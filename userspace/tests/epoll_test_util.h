/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the epoll min-wait tests: the two epoll_ctl() ops, eventfds,
 * epoll_wait() timed in a thread, writes and signals after a delay.
 * Include after numab_test_util.h.
 */
#ifndef EPOLL_TEST_UTIL_H
#define EPOLL_TEST_UTIL_H

#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>

/* One epoll_ctl() op with ev.data.u64 = @value: its result or -errno. */
static inline long epoll_ctl_value(int epfd, int op, uint64_t value)
{
	struct epoll_event ev = { .data.u64 = value };
	int ret = epoll_ctl(epfd, op, -1, &ev);

	return ret < 0 ? -errno : ret;
}

/* Set the min-wait (usecs | flags); returns the previous usecs or -errno. */
static inline long set_min_wait(int epfd, uint64_t value)
{
	return epoll_ctl_value(epfd, EPOLL_CTL_MIN_WAIT, value);
}

/* Set the batch target K; returns the previous K or -errno. */
static inline long set_min_events(int epfd, uint64_t k)
{
	return epoll_ctl_value(epfd, EPOLL_CTL_MIN_EVENTS, k);
}

static inline int add_fd(int epfd, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static inline void efd_signal(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) != sizeof(one))
		abort();
}

/* Reset a non-blocking eventfd to 0 (not readable). */
static inline void efd_drain(int efd)
{
	uint64_t v;

	if (read(efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		abort();
}

static inline pid_t numab_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Context switches of thread @tid of this process (it ran), or -1. */
static inline long thread_switches(pid_t tid)
{
	char path[64], line[128];
	long n, sum = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &n) == 1) {
			sum += n;
			found++;
		}
	fclose(f);
	return found == 2 ? sum : -1;
}

/*
 * Wait until the task of stat file @path sleeps (state S), for up to @ms
 * milliseconds. True once it does.
 */
static inline bool stat_sleeps(const char *path, int ms)
{
	char buf[512], *p;
	ssize_t n;
	int fd;

	for (; ms > 0; ms -= 2) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				return true;
		}
		usleep(2000);
	}
	return false;
}

/* stat_sleeps() of thread @tid of this process. */
static inline bool thread_sleeps(pid_t tid, int ms)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	return stat_sleeps(path, ms);
}

/* stat_sleeps() of process @pid. */
static inline bool process_sleeps(pid_t pid, int ms)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return stat_sleeps(path, ms);
}

/* --- timed waits ---------------------------------------------------------- */

struct timed {
	int epfd;
	int maxevents;
	int timeout;		/* ms, for epoll_wait() */
	int ret;
	int err;
	pid_t tid;		/* the thread that waits, once started */
	int64_t start_ns;
	int64_t end_ns;
	int64_t ms;
	long nvcsw;		/* voluntary context switches in the call */
	struct epoll_event ev[8];
};

static inline void *timed_wait_fn(void *arg)
{
	struct timed *t = arg;
	struct rusage before, after;

	__atomic_store_n(&t->tid, numab_gettid(), __ATOMIC_RELEASE);
	getrusage(RUSAGE_THREAD, &before);
	t->start_ns = numab_now_ns();
	t->ret = epoll_wait(t->epfd, t->ev, t->maxevents, t->timeout);
	t->err = errno;
	t->end_ns = numab_now_ns();
	getrusage(RUSAGE_THREAD, &after);
	t->nvcsw = after.ru_nvcsw - before.ru_nvcsw;
	t->ms = (t->end_ns - t->start_ns) / 1000000;
	return NULL;
}

static inline struct timed timed_wait(int epfd, int maxevents, int timeout)
{
	struct timed t = {
		.epfd = epfd,
		.maxevents = maxevents,
		.timeout = timeout,
	};

	timed_wait_fn(&t);
	return t;
}

/* Start @t in a thread and return once it sleeps (in its epoll_wait()). */
static inline int timed_wait_start(pthread_t *th, struct timed *t)
{
	pid_t tid;
	int ms;

	t->tid = 0;
	if (pthread_create(th, NULL, timed_wait_fn, t))
		return -1;
	for (ms = 0; ms < 5000; ms++) {
		tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
		if (tid)
			return thread_sleeps(tid, 5000) ? 0 : -1;
		usleep(1000);
	}
	return -1;
}

/*
 * A call of @t->timeout ms on an idle instance while K changes 50 times
 * (2, 3, 2, ...), 2 ms apart: @t has its result. 0, or -1 if it could
 * not start or a set failed.
 */
static inline int wait_through_new_min_events(struct timed *t)
{
	pthread_t th;
	int i, ret = 0;

	if (timed_wait_start(&th, t))
		return -1;
	for (i = 0; i < 50 && !ret; i++) {
		if (set_min_events(t->epfd, 2 + i % 2) < 0)
			ret = -1;
		usleep(2000);
	}
	pthread_join(th, NULL);
	return ret;
}

/* Milliseconds from @from_ns to the end of the wait @t. */
static inline int64_t ms_after(const struct timed *t, int64_t from_ns)
{
	return (t->end_ns - from_ns) / 1000000;
}

/* An eventfd write from another thread after a delay. */
struct delayed_write {
	pthread_t th;
	int fd;
	int delay_ms;
	int64_t at_ns;
};

static inline void *delayed_write_fn(void *arg)
{
	struct delayed_write *w = arg;

	numab_sleep_ms(w->delay_ms);
	w->at_ns = numab_now_ns();
	efd_signal(w->fd);
	return NULL;
}

static inline int delayed_write_start(struct delayed_write *w, int fd, int ms)
{
	w->fd = fd;
	w->delay_ms = ms;
	return pthread_create(&w->th, NULL, delayed_write_fn, w);
}

/* --- signals -------------------------------------------------------------- */

static inline void sigusr1_handler(int sig)
{
	(void)sig;
}

/* SIGUSR1 interrupts, without SA_RESTART: 0 or -1. */
static inline int sigusr1_interrupts(void)
{
	struct sigaction sa = { .sa_handler = sigusr1_handler };

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGUSR1, &sa, NULL);
}

struct signaller {
	pthread_t th;
	pthread_t target;
	int delay_ms;
};

static inline void *signaller_fn(void *arg)
{
	struct signaller *s = arg;

	numab_sleep_ms(s->delay_ms);
	pthread_kill(s->target, SIGUSR1);
	return NULL;
}

/* A blocking epoll_wait() on @epfd, signalled by @s after its delay. */
static inline struct timed signalled_wait(int epfd, struct signaller *s)
{
	struct timed t;

	if (pthread_create(&s->th, NULL, signaller_fn, s))
		abort();
	t = timed_wait(epfd, 8, -1);
	pthread_join(s->th, NULL);
	return t;
}

#endif /* EPOLL_TEST_UTIL_H */
