// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_ctl(EPOLL_CTL_MIN_WAIT) timed from the start of the call: the tables
 * of SPEC section 2, the wait semantics, the wakeup corner cases
 * (EPOLLEXCLUSIVE, nested epoll), io_uring's IORING_OP_EPOLL_CTL, and
 * module unload around sleeping waiters. The batch target and the timer
 * from the first event are in epoll_min_events_test.c, the cost of a
 * wakeup in epoll_dup_storm_test.c.
 *
 * Timing margins are wide on purpose: the guest runs under TCG. Lower
 * bounds are exact (a min-wait never ends early); upper bounds allow
 * SLACK_MS.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <linux/io_uring.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define SLACK_MS	250

/* --- the common fixture: one instance watching two eventfds -------------- */

FIXTURE(ep) {
	int epfd;
	int efd[2];
};

FIXTURE_SETUP(ep)
{
	ASSERT_MODULE();
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	self->efd[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	self->efd[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd[0]);
	ASSERT_LE(0, self->efd[1]);
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[1], EPOLLIN));
}

FIXTURE_TEARDOWN(ep)
{
	close(self->epfd);
	close(self->efd[0]);
	close(self->efd[1]);
}

/* --- the epoll_ctl table -------------------------------------------------- */

/*
 * Both ops, one table (SPEC section 2): the value's range, the event
 * pointer, the epoll fd, the ignored fd argument. Bit 32 of a min-wait is
 * EPOLL_MIN_WAIT_AFTER_FIRST, not part of the usecs: its own table is in
 * epoll_min_events_test.c.
 */
FIXTURE(ctl) {
	int epfd;
	int efd;
};

FIXTURE_VARIANT(ctl) {
	int op;
	const uint64_t *bad;	/* values refused with EINVAL, 0-ended */
};

static const uint64_t bad_usecs[] = {
	(uint64_t)INT_MAX + 1, UINT_MAX, 1ULL << 34, 1ULL << 63, UINT64_MAX, 0,
};

static const uint64_t bad_events[] = {
	(uint64_t)INT_MAX + 1, UINT_MAX, 1ULL << 32, (1ULL << 32) | 5,
	1ULL << 63, UINT64_MAX, 0,
};

FIXTURE_VARIANT_ADD(ctl, min_wait) {
	.op = EPOLL_CTL_MIN_WAIT,
	.bad = bad_usecs,
};

FIXTURE_VARIANT_ADD(ctl, min_events) {
	.op = EPOLL_CTL_MIN_EVENTS,
	.bad = bad_events,
};

/* One instance watching one eventfd: the ctl and module fixtures. */
static int one_instance(int *epfd, int *efd)
{
	*epfd = epoll_create1(EPOLL_CLOEXEC);
	*efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (*epfd < 0 || *efd < 0)
		return -1;
	return add_fd(*epfd, *efd, EPOLLIN);
}

FIXTURE_SETUP(ctl)
{
	ASSERT_MODULE();
	ASSERT_EQ(0, one_instance(&self->epfd, &self->efd));
}

FIXTURE_TEARDOWN(ctl)
{
	close(self->epfd);
	close(self->efd);
}

TEST_F(ctl, returns_previous_value)
{
	static const uint64_t seq[] = { 1000, 2000, 2000, INT_MAX, 1, 0, 0 };
	long prev = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		EXPECT_EQ(prev, epoll_ctl_value(self->epfd, variant->op,
						seq[i]));
		prev = seq[i];
	}
}

TEST_F(ctl, above_int_max_einval)
{
	const uint64_t *bad;

	ASSERT_EQ(0, epoll_ctl_value(self->epfd, variant->op, 5000));
	for (bad = variant->bad; *bad; bad++)
		EXPECT_EQ(-EINVAL, epoll_ctl_value(self->epfd, variant->op,
						   *bad))
			TH_LOG("value %#llx accepted",
			       (unsigned long long)*bad);
	EXPECT_EQ(5000, epoll_ctl_value(self->epfd, variant->op, 0))
		TH_LOG("value changed");
}

TEST_F(ctl, bad_event_pointer_efault)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *bad[] = { NULL, (void *)8, (void *)0xffff888000000000UL, NULL };
	size_t i;

	bad[3] = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad[3]);
	ASSERT_EQ(0, munmap(bad[3], pg));
	ASSERT_EQ(0, epoll_ctl_value(self->epfd, variant->op, 7000));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		EXPECT_EQ(-1, epoll_ctl(self->epfd, variant->op, -1, bad[i]));
		EXPECT_EQ(EFAULT, errno) TH_LOG("pointer %zu", i);
	}
	EXPECT_EQ(7000, epoll_ctl_value(self->epfd, variant->op, 0))
		TH_LOG("value changed");
}

TEST_F(ctl, not_an_epoll_fd_einval)
{
	int p[2], devnull;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, devnull);
	EXPECT_EQ(-EINVAL, epoll_ctl_value(p[0], variant->op, 1000));
	EXPECT_EQ(-EINVAL, epoll_ctl_value(devnull, variant->op, 1000));
	EXPECT_EQ(-EINVAL, epoll_ctl_value(self->efd, variant->op, 1000));
	close(p[0]);
	close(p[1]);
	close(devnull);
}

TEST_F(ctl, bad_epfd_ebadf)
{
	int fd = dup(self->efd);

	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-EBADF, epoll_ctl_value(-1, variant->op, 1000));
	EXPECT_EQ(-EBADF, epoll_ctl_value(fd, variant->op, 1000));
	EXPECT_EQ(-EBADF, epoll_ctl_value(INT_MAX, variant->op, 1000));
}

TEST_F(ctl, fd_argument_ignored)
{
	struct epoll_event ev = { 0 };
	int closed = dup(self->efd), p[2], prev = 0, i;
	int fds[6];

	ASSERT_LE(0, closed);
	close(closed);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	fds[0] = -1;
	fds[1] = closed;
	fds[2] = p[0];
	fds[3] = self->epfd;	/* itself: EINVAL for ADD, fine here */
	fds[4] = self->efd;	/* already watched */
	fds[5] = INT_MAX;
	for (i = 0; i < 6; i++) {
		ev.data.u64 = 100 + i;
		EXPECT_EQ(prev, epoll_ctl(self->epfd, variant->op, fds[i], &ev))
			TH_LOG("fd %d: %s", fds[i], strerror(errno));
		prev = 100 + i;
	}
	EXPECT_EQ(prev, epoll_ctl_value(self->epfd, variant->op, 0));
	close(p[0]);
	close(p[1]);
}

TEST_F(ep, fdinfo_line_iff_nonzero)
{
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
	ASSERT_EQ(0, set_min_wait(self->epfd, 1234));
	EXPECT_EQ(1234, numab_fdinfo_min_wait(self->epfd));
	ASSERT_EQ(1234, set_min_wait(self->epfd, INT_MAX));
	EXPECT_EQ(INT_MAX, numab_fdinfo_min_wait(self->epfd));
	ASSERT_EQ(INT_MAX, set_min_wait(self->epfd, 0));
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd))
		TH_LOG("min_wait_us line shown for 0");
}

TEST_F(ep, instance_counter)
{
	struct numab_counters base = { 0 }, c = { 0 };
	int other, status;
	pid_t pid;

	ASSERT_EQ(0, numab_read_counters(&base))
		TH_LOG("cannot read %s", NUMAB_DEBUGFS_COUNTERS);
	ASSERT_EQ(0, set_min_wait(self->epfd, 500));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 1, c.min_wait_instances);
	ASSERT_EQ(500, set_min_wait(self->epfd, 600));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 1, c.min_wait_instances);
	ASSERT_EQ(600, set_min_wait(self->epfd, 0));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances, c.min_wait_instances);

	/* Closing the last reference of an instance with a min-wait. */
	other = epoll_create1(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, set_min_wait(other, 500));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 1, c.min_wait_instances);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(other);	/* the parent still holds the file */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 1, c.min_wait_instances);
	close(other);
	EXPECT_TRUE(numab_counters_settle(&base, &c, 2000))
		TH_LOG("min_wait_instances %ld after close, want %ld",
		       c.min_wait_instances, base.min_wait_instances);
}

/* --- wait semantics ------------------------------------------------------- */

TEST_F(ep, timeout_shorter_than_min_wait)
{
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 800000));
	t = timed_wait(self->epfd, 8, 100);
	EXPECT_EQ(0, t.ret);
	EXPECT_LE(100, t.ms);
	EXPECT_GT(100 + SLACK_MS, t.ms) TH_LOG("returned at %lld ms",
					       (long long)t.ms);

	/* with an event ready: still returns at T, with the event */
	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 8, 100);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(100, t.ms);
	EXPECT_GT(100 + SLACK_MS, t.ms) TH_LOG("returned at %lld ms",
					       (long long)t.ms);
}

TEST_F(ep, timeout_zero_never_blocks)
{
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000));
	t = timed_wait(self->epfd, 8, 0);
	EXPECT_EQ(0, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);
	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 8, 0);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);
}

TEST_F(ep, ready_events_still_wait_min)
{
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 200000));
	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(200, t.ms) TH_LOG("returned after %lld ms", (long long)t.ms);
	EXPECT_GT(200 + SLACK_MS, t.ms);

	/* finite timeout longer than the min-wait */
	t = timed_wait(self->epfd, 8, 2000);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(200, t.ms);
	EXPECT_GT(200 + SLACK_MS, t.ms);
}

TEST_F(ep, maxevents_reached_returns_early)
{
	struct delayed_write w0, w1;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 500000));

	/* ready before the call */
	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 1, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, t.ms) TH_LOG("waited %lld ms", (long long)t.ms);
	efd_signal(self->efd[1]);
	t = timed_wait(self->epfd, 2, -1);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, t.ms) TH_LOG("waited %lld ms", (long long)t.ms);

	/* arriving during the min-wait (the seed's test) */
	close(self->efd[0]);
	close(self->efd[1]);
	close(self->epfd);
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	self->efd[0] = eventfd(0, EFD_CLOEXEC);
	self->efd[1] = eventfd(0, EFD_CLOEXEC);
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[1], EPOLLIN));
	ASSERT_EQ(0, set_min_wait(self->epfd, 500000));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 10));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 20));
	t = timed_wait(self->epfd, 2, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(20 + SLACK_MS, t.ms) TH_LOG("waited %lld ms",
					      (long long)t.ms);
}

TEST_F(ep, events_during_min_wait_are_batched)
{
	struct delayed_write w0, w1;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 300000));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 10));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 20));
	t = timed_wait(self->epfd, 8, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_LE(300, t.ms) TH_LOG("returned after %lld ms", (long long)t.ms);
	EXPECT_GT(300 + SLACK_MS, t.ms);
}

TEST_F(ep, after_min_wait_usual_wait)
{
	struct delayed_write w;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 100000));

	/* nothing by M: the first event ends the wait */
	ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 400));
	t = timed_wait(self->epfd, 8, -1);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(0, (t.end_ns - w.at_ns) / 1000000);
	EXPECT_GT(SLACK_MS, (t.end_ns - w.at_ns) / 1000000)
		TH_LOG("returned %lld ms after the event",
		       (long long)((t.end_ns - w.at_ns) / 1000000));

	/* nothing at all: the timeout ends it */
	ASSERT_EQ(8, read(self->efd[0], &(uint64_t){ 0 }, 8));
	t = timed_wait(self->epfd, 8, 300);
	EXPECT_EQ(0, t.ret);
	EXPECT_LE(300, t.ms);
	EXPECT_GT(300 + SLACK_MS, t.ms);
}

/*
 * Nothing ready when M has passed: the waiter sleeps on to the first event
 * rather than waking up to find nothing, so the call costs one voluntary
 * context switch, as a plain epoll_wait() does, not the two of sleeping in
 * userspace before epoll_wait().
 */
TEST_F(ep, idle_min_wait_sleeps_through)
{
	const int timeouts[] = { -1, 5000 };	/* none, and one beyond it */
	struct delayed_write w;
	struct timed t;
	unsigned int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, 50000));
	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 300));
		t = timed_wait(self->epfd, 8, timeouts[i]);
		pthread_join(w.th, NULL);
		EXPECT_EQ(1, t.ret);
		EXPECT_EQ(1, t.nvcsw)
			TH_LOG("timeout %d: %ld voluntary context switches",
			       timeouts[i], t.nvcsw);
		EXPECT_GT(SLACK_MS, (t.end_ns - w.at_ns) / 1000000);
		ASSERT_EQ(8, read(self->efd[0], &(uint64_t){ 0 }, 8));
	}
}

/*
 * A level-triggered item stays on the ready list after it is reported,
 * until a scan finds it no longer ready: it must not count towards
 * maxevents once drained.
 */
TEST_F(ep, stale_level_triggered_not_counted)
{
	struct delayed_write w;
	struct timed t;

	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 8, 0);
	ASSERT_EQ(1, t.ret);
	ASSERT_EQ(8, read(self->efd[0], &(uint64_t){ 0 }, 8));

	ASSERT_EQ(0, set_min_wait(self->epfd, 300000));
	ASSERT_EQ(0, delayed_write_start(&w, self->efd[1], 10));
	t = timed_wait(self->epfd, 2, -1);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_EQ(self->efd[1], t.ev[0].data.fd);
	EXPECT_LE(300, t.ms) TH_LOG("returned after %lld ms", (long long)t.ms);
	EXPECT_GT(300 + SLACK_MS, t.ms);
}

TEST_F(ep, no_min_wait_unchanged)
{
	struct delayed_write w;
	struct timed t;

	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);
	ASSERT_EQ(8, read(self->efd[0], &(uint64_t){ 0 }, 8));

	ASSERT_EQ(0, delayed_write_start(&w, self->efd[1], 50));
	t = timed_wait(self->epfd, 8, 2000);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(50 + SLACK_MS, t.ms);

	/* set then cleared: back to normal */
	ASSERT_EQ(0, set_min_wait(self->epfd, 500000));
	ASSERT_EQ(500000, set_min_wait(self->epfd, 0));
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);
}

/* --- signals and kill ----------------------------------------------------- */

TEST_F(ep, signal_interrupts_min_wait)
{
	struct signaller s = { .delay_ms = 100 };
	struct timed t;

	ASSERT_EQ(0, sigusr1_interrupts());
	ASSERT_EQ(0, set_min_wait(self->epfd, 2000000));
	s.target = pthread_self();

	/* nothing ready: EINTR */
	t = signalled_wait(self->epfd, &s);
	EXPECT_EQ(-1, t.ret);
	EXPECT_EQ(EINTR, t.err);
	EXPECT_GT(100 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);

	/* something ready: the event or EINTR, promptly either way */
	efd_signal(self->efd[0]);
	t = signalled_wait(self->epfd, &s);
	EXPECT_TRUE(t.ret == 1 || (t.ret == -1 && t.err == EINTR))
		TH_LOG("ret %d (%s)", t.ret, strerror(t.err));
	EXPECT_GT(100 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);

	/* nothing ready, min-wait over, still asleep in it: EINTR */
	ASSERT_EQ(8, read(self->efd[0], &(uint64_t){ 0 }, 8));
	ASSERT_EQ(2000000, set_min_wait(self->epfd, 20000));
	t = signalled_wait(self->epfd, &s);
	EXPECT_EQ(-1, t.ret);
	EXPECT_EQ(EINTR, t.err);
	EXPECT_GT(100 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);
}

TEST_F(ep, sigkill_ends_min_wait)
{
	int64_t killed;
	int status, i;
	pid_t pid;

	ASSERT_EQ(0, set_min_wait(self->epfd, 10000000));
	for (i = 0; i < 2; i++) {
		/* once with an event ready, once without */
		if (i)
			efd_signal(self->efd[0]);
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct epoll_event ev;

			epoll_wait(self->epfd, &ev, 1 + i, -1);
			_exit(1);
		}
		numab_sleep_ms(200);
		killed = numab_now_ns();
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			TH_LOG("child was not in the wait when killed");
		EXPECT_GT(1000, numab_ms_since(killed))
			TH_LOG("SIGKILL took %lld ms",
			       (long long)numab_ms_since(killed));
	}
}

/* --- epoll_pwait / epoll_pwait2 ------------------------------------------- */

static int sys_epoll_pwait2(int epfd, struct epoll_event *ev, int maxevents,
			    const struct timespec *ts, const sigset_t *mask)
{
	return syscall(SYS_epoll_pwait2, epfd, ev, maxevents, ts, mask,
		       mask ? _NSIG / 8 : 0);
}

TEST_F(ep, epoll_pwait2_timespec)
{
	struct timespec ts = { .tv_nsec = 150 * 1000000L };
	struct epoll_event ev[4];
	int64_t t0, ms;
	sigset_t mask;
	int ret;

	ASSERT_EQ(0, set_min_wait(self->epfd, 500000));
	t0 = numab_now_ns();
	ret = sys_epoll_pwait2(self->epfd, ev, 4, &ts, NULL);
	ms = numab_ms_since(t0);
	if (ret < 0 && errno == ENOSYS)
		SKIP(return, "epoll_pwait2 not available");
	EXPECT_EQ(0, ret);
	EXPECT_LE(150, ms);
	EXPECT_GT(150 + SLACK_MS, ms) TH_LOG("returned after %lld ms",
					     (long long)ms);

	/* zero timespec: never blocks */
	ts.tv_nsec = 0;
	efd_signal(self->efd[0]);
	t0 = numab_now_ns();
	EXPECT_EQ(1, sys_epoll_pwait2(self->epfd, ev, 4, &ts, NULL));
	EXPECT_GT(SLACK_MS, numab_ms_since(t0));

	/* long timespec, event ready, with a signal mask: waits M */
	ts.tv_sec = 2;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	t0 = numab_now_ns();
	EXPECT_EQ(1, sys_epoll_pwait2(self->epfd, ev, 4, &ts, &mask));
	ms = numab_ms_since(t0);
	EXPECT_LE(500, ms);
	EXPECT_GT(500 + SLACK_MS, ms);

	/* epoll_pwait, same thing */
	t0 = numab_now_ns();
	EXPECT_EQ(1, epoll_pwait(self->epfd, ev, 4, 2000, &mask));
	ms = numab_ms_since(t0);
	EXPECT_LE(500, ms);
	EXPECT_GT(500 + SLACK_MS, ms);
}

/* --- several waiters ------------------------------------------------------ */

#define NR_WAITERS 3

TEST_F(ep, threads_share_min_wait)
{
	struct timed t[NR_WAITERS];
	pthread_t th[NR_WAITERS];
	struct delayed_write w;
	int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, 300000));
	for (i = 0; i < NR_WAITERS; i++) {
		t[i] = (struct timed){
			.epfd = self->epfd, .maxevents = 8, .timeout = 3000,
		};
		ASSERT_EQ(0, pthread_create(&th[i], NULL, timed_wait_fn,
					    &t[i]));
	}
	ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 50));
	for (i = 0; i < NR_WAITERS; i++)
		pthread_join(th[i], NULL);
	pthread_join(w.th, NULL);
	for (i = 0; i < NR_WAITERS; i++) {
		/* the eventfd stays readable: each waiter gets it ... */
		EXPECT_EQ(1, t[i].ret) TH_LOG("waiter %d", i);
		/* ... and none before its own min-wait */
		EXPECT_LE(300, t[i].ms) TH_LOG("waiter %d after %lld ms", i,
					       (long long)t[i].ms);
		EXPECT_GT(300 + 2 * SLACK_MS, t[i].ms)
			TH_LOG("waiter %d after %lld ms", i,
			       (long long)t[i].ms);
	}
}

/*
 * EPOLLEXCLUSIVE keeps its meaning: of NR_EXCL instances, each with a
 * waiter inside its minimum wait (or, timed from the first event, waiting
 * for it) and each watching one eventfd with EPOLLEXCLUSIVE, exactly one
 * takes a write's wakeup and delivers the event within M; the others are
 * not woken for it and time out with nothing.
 */
#define NR_EXCL		4
#define EXCL_MIN_WAIT_MS 300

FIXTURE(excl) {
	int epfd[NR_EXCL];
	int efd;
};

FIXTURE_VARIANT(excl) {
	uint64_t flags;
};

FIXTURE_VARIANT_ADD(excl, from_call_start) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(excl, after_first) {
	.flags = EPOLL_MIN_WAIT_AFTER_FIRST,
};

FIXTURE_SETUP(excl)
{
	int i;

	ASSERT_MODULE();
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
	for (i = 0; i < NR_EXCL; i++) {
		self->epfd[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, self->epfd[i]);
		ASSERT_EQ(0, set_min_wait(self->epfd[i],
					  EXCL_MIN_WAIT_MS * 1000 |
					  variant->flags));
		ASSERT_EQ(0, add_fd(self->epfd[i], self->efd,
				    EPOLLIN | EPOLLEXCLUSIVE));
	}
}

FIXTURE_TEARDOWN(excl)
{
	int i;

	for (i = 0; i < NR_EXCL; i++)
		close(self->epfd[i]);
	close(self->efd);
}

TEST_F(excl, one_instance_takes_the_wakeup)
{
	const int timeout = EXCL_MIN_WAIT_MS + 4 * SLACK_MS;
	struct timed t[NR_EXCL];
	pthread_t th[NR_EXCL];
	int i, woken = 0;
	int64_t wrote;

	for (i = 0; i < NR_EXCL; i++) {
		t[i] = (struct timed){
			.epfd = self->epfd[i], .maxevents = 4,
			.timeout = timeout,
		};
		ASSERT_EQ(0, timed_wait_start(&th[i], &t[i]))
			TH_LOG("waiter %d did not go to sleep", i);
	}
	wrote = numab_now_ns();
	efd_signal(self->efd);
	for (i = 0; i < NR_EXCL; i++)
		pthread_join(th[i], NULL);

	for (i = 0; i < NR_EXCL; i++) {
		if (t[i].ret == 0) {
			EXPECT_LE(timeout, t[i].ms) TH_LOG("waiter %d", i);
			continue;
		}
		woken++;
		EXPECT_EQ(1, t[i].ret) TH_LOG("waiter %d: %s", i,
					      strerror(t[i].err));
		/* the minimum wait still applies to the one woken */
		EXPECT_LE(EXCL_MIN_WAIT_MS, variant->flags ?
			  ms_after(&t[i], wrote) : t[i].ms);
		EXPECT_GT(EXCL_MIN_WAIT_MS + SLACK_MS, ms_after(&t[i], wrote))
			TH_LOG("waiter %d returned %lld ms after the write", i,
			       (long long)ms_after(&t[i], wrote));
	}
	EXPECT_EQ(1, woken) TH_LOG("%d of %d instances woken", woken, NR_EXCL);
}

/* An instance with a min-wait, watched by another: the outer one is told. */
TEST(nested_epoll_outer_notified)
{
	struct delayed_write w;
	int inner, outer, efd;
	struct timed to, ti;

	ASSERT_MODULE();
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	inner = epoll_create1(EPOLL_CLOEXEC);
	outer = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, efd);
	ASSERT_LE(0, inner);
	ASSERT_LE(0, outer);
	ASSERT_EQ(0, add_fd(inner, efd, EPOLLIN));
	ASSERT_EQ(0, set_min_wait(inner, 300000));
	ASSERT_EQ(0, add_fd(outer, inner, EPOLLIN));

	ASSERT_EQ(0, delayed_write_start(&w, efd, 100));
	to = timed_wait(outer, 4, 2000);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, to.ret);
	EXPECT_EQ(inner, to.ev[0].data.fd);
	EXPECT_GT(SLACK_MS, (to.end_ns - w.at_ns) / 1000000)
		TH_LOG("outer woke %lld ms after the write",
		       (long long)((to.end_ns - w.at_ns) / 1000000));

	/* the inner one still applies its own min-wait */
	ti = timed_wait(inner, 4, -1);
	EXPECT_EQ(1, ti.ret);
	EXPECT_LE(300, ti.ms);
	EXPECT_GT(300 + SLACK_MS, ti.ms);
	close(outer);
	close(inner);
	close(efd);
}

/* --- io_uring: IORING_OP_EPOLL_CTL ---------------------------------------- */

struct uring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	void *sq_ring, *cq_ring;
	size_t sq_len, cq_len, sqes_len;
};

static int uring_setup(struct uring *r)
{
	struct io_uring_params p = { 0 };
	char *sq, *cq;

	r->fd = syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq_ring = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq_ring = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq_ring == MAP_FAILED || r->cq_ring == MAP_FAILED ||
	    r->sqes == MAP_FAILED)
		return -ENOMEM;
	sq = r->sq_ring;
	cq = r->cq_ring;
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

static void uring_close(struct uring *r)
{
	munmap(r->sqes, r->sqes_len);
	munmap(r->cq_ring, r->cq_len);
	munmap(r->sq_ring, r->sq_len);
	close(r->fd);
}

/* One IORING_OP_EPOLL_CTL, submitted and reaped: its cqe->res. */
static int uring_epoll_ctl(struct uring *r, int epfd, int op, int fd,
			   const void *event)
{
	unsigned int tail = *r->sq_tail, head, idx;
	struct io_uring_sqe *sqe;
	int res;

	idx = tail & *r->sq_mask;
	sqe = &r->sqes[idx];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_EPOLL_CTL;
	sqe->fd = epfd;
	sqe->len = op;
	sqe->off = fd;
	sqe->addr = (unsigned long)event;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);

	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return -10000 - errno;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -20000;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

TEST_F(ep, io_uring_epoll_ctl)
{
	struct epoll_event ev = { 0 };
	struct uring r;
	int ret;

	ret = uring_setup(&r);
	if (ret == -ENOSYS)
		SKIP(return, "io_uring_setup: ENOSYS");
	ASSERT_EQ(0, ret) TH_LOG("io_uring_setup: %s", strerror(-ret));

	ev.data.u64 = 1500;
	EXPECT_EQ(0, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_WAIT, -1,
				     &ev));
	ev.data.u64 = 2500;
	EXPECT_EQ(1500, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_WAIT,
					12345, &ev));
	EXPECT_EQ(2500, numab_fdinfo_min_wait(self->epfd));

	/* a bad pointer in sqe->addr, a value above INT_MAX, not epoll */
	EXPECT_EQ(-EFAULT, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_WAIT,
					   -1, (void *)8));
	ev.data.u64 = (uint64_t)INT_MAX + 1;
	EXPECT_EQ(-EINVAL, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_WAIT,
					   -1, &ev));
	ev.data.u64 = 10;
	EXPECT_EQ(-EINVAL, uring_epoll_ctl(&r, self->efd[0],
					   EPOLL_CTL_MIN_WAIT, -1, &ev));
	EXPECT_EQ(2500, set_min_wait(self->epfd, 0)) TH_LOG("value changed");
	uring_close(&r);
}

/* Both new values through io_uring too: op 5, and bit 32 of op 4. */
TEST_F(ep, io_uring_min_events_after_first)
{
	struct epoll_event ev = { 0 };
	struct uring r;
	int ret;

	ret = uring_setup(&r);
	if (ret == -ENOSYS)
		SKIP(return, "io_uring_setup: ENOSYS");
	ASSERT_EQ(0, ret) TH_LOG("io_uring_setup: %s", strerror(-ret));

	ev.data.u64 = 3;
	EXPECT_EQ(0, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_EVENTS, -1,
				     &ev));
	ev.data.u64 = (uint64_t)INT_MAX + 1;
	EXPECT_EQ(-EINVAL, uring_epoll_ctl(&r, self->epfd,
					   EPOLL_CTL_MIN_EVENTS, -1, &ev));
	EXPECT_EQ(3, numab_fdinfo_long(self->epfd, NUMAB_FDINFO_EVENTS_KEY));

	ev.data.u64 = 700 | EPOLL_MIN_WAIT_AFTER_FIRST;
	EXPECT_EQ(0, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_WAIT, -1,
				     &ev));
	ev.data.u64 = 700 | 1ULL << 34;
	EXPECT_EQ(-EINVAL, uring_epoll_ctl(&r, self->epfd, EPOLL_CTL_MIN_WAIT,
					   -1, &ev));
	EXPECT_EQ(700, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(1, numab_fdinfo_long(self->epfd, NUMAB_FDINFO_FLAGS_KEY));

	EXPECT_EQ(3, set_min_events(self->epfd, 0));
	EXPECT_EQ(700, set_min_wait(self->epfd, 0));
	uring_close(&r);
}

/* --- without the module, and unloading it --------------------------------- */

FIXTURE(module) {
	int epfd;
	int efd;
};

FIXTURE_SETUP(module)
{
	ASSERT_MODULE();
	ASSERT_EQ(0, one_instance(&self->epfd, &self->efd));
}

FIXTURE_TEARDOWN(module)
{
	close(self->epfd);
	close(self->efd);
	if (!numab_module_loaded())
		numab_modprobe();
}

TEST_F(module, without_module_einval)
{
	struct epoll_event ev = { .data.u64 = 1000 };
	int p[2], fds[5], i;
	struct timed t;

	ASSERT_EQ(0, numab_rmmod()) TH_LOG("cannot unload the module");
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	fds[0] = -1;
	fds[1] = p[0];
	fds[2] = self->epfd;
	fds[3] = self->efd;
	fds[4] = 4242;
	for (i = 0; i < 5; i++) {
		errno = 0;
		EXPECT_EQ(-1, epoll_ctl(self->epfd, EPOLL_CTL_MIN_WAIT,
					fds[i], &ev));
		EXPECT_EQ(EINVAL, errno) TH_LOG("fd %d: %s", fds[i],
						strerror(errno));
	}
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));

	/* plain epoll is untouched */
	efd_signal(self->efd);
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);

	ASSERT_EQ(0, numab_modprobe());
	EXPECT_EQ(0, set_min_wait(self->epfd, 1000));
	EXPECT_EQ(1000, set_min_wait(self->epfd, 0));
	close(p[0]);
	close(p[1]);
}

TEST_F(module, unload_refused_while_waiting)
{
	struct timed t = {
		.epfd = self->epfd, .maxevents = 8, .timeout = -1,
	};
	pthread_t th;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1500000));
	efd_signal(self->efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, timed_wait_fn, &t));
	numab_sleep_ms(200);
	numab_expect_unload_refused(_metadata, "a waiter sleeps in a min-wait");
	pthread_join(th, NULL);

	/* the waiter was not disturbed */
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(1500, t.ms);
	EXPECT_GT(1500 + SLACK_MS, t.ms) TH_LOG("waiter after %lld ms",
						(long long)t.ms);

	numab_expect_unload_refused(_metadata, "an instance has a min-wait");
	EXPECT_EQ(1500000, set_min_wait(self->epfd, 0));
	EXPECT_TRUE(numab_unload_settles(2000))
		TH_LOG("unload refused with no min-wait left");
	EXPECT_EQ(0, numab_modprobe());
}

/*
 * Clear the min-wait while a waiter sleeps in it and try to unload at
 * once and repeatedly: refused or not while the waiter is inside, it must
 * return normally, and the unload must succeed once it has.
 */
TEST_F(module, unload_race_clear_while_waiting)
{
	struct timed t = {
		.epfd = self->epfd, .maxevents = 8, .timeout = -1,
	};
	bool unloaded;
	pthread_t th;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000));
	efd_signal(self->efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, timed_wait_fn, &t));
	numab_sleep_ms(200);
	EXPECT_EQ(1000000, set_min_wait(self->epfd, 0));
	unloaded = numab_unload_settles(1000 + 2 * SLACK_MS);
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(1000 + SLACK_MS, t.ms) TH_LOG("waiter after %lld ms",
						(long long)t.ms);
	if (!unloaded)
		unloaded = numab_unload_settles(2000);
	EXPECT_TRUE(unloaded) TH_LOG("unload refused after the waiter left");
	EXPECT_EQ(0, numab_modprobe());
}

/*
 * An adaptive wait of 0 sleeps in the module to its first event, and a
 * new K alone leaves it asleep there. Its values cleared, M and then K,
 * the waiter goes on as a plain one outside the module, which can be
 * unloaded before any event comes.
 */
TEST_F(module, unload_after_clear_of_an_adaptive_wait)
{
	struct timed t = {
		.epfd = self->epfd, .maxevents = 8, .timeout = -1,
	};
	pthread_t th;

	ASSERT_EQ(0, set_min_wait(self->epfd,
				  5000000 | EPOLL_MIN_WAIT_ADAPTIVE));
	ASSERT_EQ(0, set_min_events(self->epfd, 3));
	ASSERT_EQ(0, timed_wait_start(&th, &t));
	numab_sleep_ms(200);
	EXPECT_EQ(3, set_min_events(self->epfd, 4));
	numab_sleep_ms(200);
	EXPECT_EQ(5000000, set_min_wait(self->epfd, 0));
	EXPECT_EQ(4, set_min_events(self->epfd, 0));
	EXPECT_TRUE(numab_unload_settles(2000)) TH_LOG("unload refused: the waiter is inside");
	efd_signal(self->efd);
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.ret);
	if (!numab_module_loaded())
		ASSERT_EQ(0, numab_modprobe());
}

/*
 * A waiter past its minimum wait with nothing ready, and one waiting for
 * the first event to time its wait from, sleep in the module; neither is
 * woken by a new value, as they wait for an event whatever the values.
 * Cleared, the values let both leave the module, which can be unloaded
 * before any event comes.
 */
static void unload_after_clear_while(struct __test_metadata *_metadata,
				     FIXTURE_DATA(module) *self,
				     uint64_t value, const char *what)
{
	struct timed t = {
		.epfd = self->epfd, .maxevents = 8, .timeout = -1,
	};
	pthread_t th;

	ASSERT_EQ(0, set_min_wait(self->epfd, value));
	ASSERT_EQ(0, timed_wait_start(&th, &t));
	numab_sleep_ms(100);
	EXPECT_EQ(value & INT_MAX, set_min_wait(self->epfd, 0));
	EXPECT_TRUE(numab_unload_settles(2000))
		TH_LOG("unload refused: %s is inside", what);
	efd_signal(self->efd);
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.ret) TH_LOG("%s", what);
	efd_drain(self->efd);
	if (!numab_module_loaded())
		ASSERT_EQ(0, numab_modprobe());
}

TEST_F(module, unload_after_clear_of_a_wait_that_is_over)
{
	unload_after_clear_while(_metadata, self, 1000,
				 "a waiter past its minimum wait");
}

TEST_F(module, unload_after_clear_of_a_wait_for_a_first_event)
{
	unload_after_clear_while(_metadata, self,
				 5000000 | EPOLL_MIN_WAIT_AFTER_FIRST,
				 "a waiter for its first event");
}

/* Write @val to a sysctl file, its previous value to @old; 0 or -1. */
static int sysctl_swap(const char *path, const char *val, char *old, int len)
{
	FILE *f = fopen(path, "r+");

	if (!f)
		return -1;
	if (!fgets(old, len, f) || fseek(f, 0, SEEK_SET) < 0 ||
	    fputs(val, f) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

/*
 * A waiter at an adaptive wait of 0 that did not run while the value
 * changed 65,536 times, the last change clearing it, finds the same
 * generation of the adaptive state as it began with (a u16), but the
 * state is cleared: it leaves the module, which can be unloaded before
 * any event comes. The changes run SCHED_FIFO on the waiter's CPU; if
 * the waiter ran all the same (6.12's fair server), the test skips.
 */
TEST_F(module, clear_after_the_generation_wrapped)
{
	struct timed t = {
		.epfd = self->epfd, .maxevents = 8, .timeout = -1,
	};
	struct sched_param fifo = { .sched_priority = 10 }, other = { 0 };
	static const char rt_runtime[] = "/proc/sys/kernel/sched_rt_runtime_us";
	char old_runtime[32], scratch[32];
	long runs_before, runs_after;
	bool fifo_set;
	cpu_set_t cpus, one;
	pthread_t th;
	int i, cpu;

	/* The waiter inherits the CPU: the first this test may use. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	for (cpu = 0; !CPU_ISSET(cpu, &cpus); cpu++)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, set_min_wait(self->epfd,
				  5000000 | EPOLL_MIN_WAIT_ADAPTIVE));
	ASSERT_EQ(0, timed_wait_start(&th, &t));
	/* No RT throttling: the waiter must not run before the clear. */
	ASSERT_EQ(0, sysctl_swap(rt_runtime, "-1", old_runtime,
				 sizeof(old_runtime)));
	runs_before = thread_switches(t.tid);
	fifo_set = !sched_setscheduler(0, SCHED_FIFO, &fifo);
	for (i = 0; fifo_set && i < 65535; i++)
		if (set_min_wait(self->epfd, (5000000 + (i & 1 ? 0 : 1)) |
				 EPOLL_MIN_WAIT_ADAPTIVE) < 0)
			break;
	if (fifo_set && i == 65535 && set_min_wait(self->epfd, 0) < 0)
		i = -1;
	runs_after = thread_switches(t.tid);
	if (fifo_set)
		sched_setscheduler(0, SCHED_OTHER, &other);
	EXPECT_EQ(0, sysctl_swap(rt_runtime, old_runtime, scratch,
				 sizeof(scratch)));
	ASSERT_TRUE(fifo_set);
	ASSERT_EQ(65535, i);
	ASSERT_LE(0, runs_before);
	if (runs_after != runs_before) {
		efd_signal(self->efd);
		pthread_join(th, NULL);
		SKIP(return, "the waiter ran during the changes");
	}
	EXPECT_TRUE(numab_unload_settles(2000)) TH_LOG("unload refused: the waiter is inside");
	efd_signal(self->efd);
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.ret);
	if (!numab_module_loaded())
		ASSERT_EQ(0, numab_modprobe());
}

/*
 * The module's text and timer while a waiter is in its wait: over rounds,
 * waiters sleep in a minimum wait (one holding its batch with its timer
 * queued, one timed from the first event waiting for it), their instance
 * loses its values (cleared, or its last epoll fd closed first with the
 * values cleared through a dup), and the module is unloaded as soon as
 * it lets go, then loaded back. The waiters return the ready event at
 * once as plain waiters; a debug kernel (make check-debug) reports any
 * use of freed module text or a timer left queued.
 */
#define UNLOAD_ROUNDS 12

TEST_F(module, unload_loop_clear_while_waiting)
{
	int round;

	for (round = 0; round < UNLOAD_ROUNDS; round++) {
		struct timed hold = {
			.maxevents = 8, .timeout = -1,
		}, first = {
			.maxevents = 8, .timeout = -1,
		};
		int ep2 = epoll_create1(EPOLL_CLOEXEC), dup_fd = -1;
		int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_t th_hold, th_first;
		bool unloaded;
		int64_t t0;

		ASSERT_LE(0, ep2);
		ASSERT_LE(0, efd2);
		ASSERT_EQ(0, add_fd(ep2, efd2, EPOLLIN));
		hold.epfd = self->epfd;
		first.epfd = ep2;
		ASSERT_EQ(0, set_min_wait(self->epfd, 5000000));
		ASSERT_EQ(0, set_min_wait(ep2, 5000000 | EPOLL_MIN_WAIT_AFTER_FIRST));
		efd_signal(self->efd);
		ASSERT_EQ(0, timed_wait_start(&th_hold, &hold));
		ASSERT_EQ(0, timed_wait_start(&th_first, &first));

		/* Odd rounds: the last epoll fd of ep2 goes first. */
		if (round & 1) {
			dup_fd = dup(ep2);
			ASSERT_LE(0, dup_fd);
			close(ep2);
			ep2 = dup_fd;
		}
		t0 = numab_now_ns();
		EXPECT_EQ(5000000, set_min_wait(self->epfd, 0));
		EXPECT_EQ(5000000, set_min_wait(ep2, 0));
		unloaded = numab_unload_settles(2000);
		EXPECT_TRUE(unloaded) TH_LOG("round %d: unload refused", round);
		efd_signal(efd2);
		pthread_join(th_hold, NULL);
		pthread_join(th_first, NULL);
		EXPECT_EQ(1, hold.ret);
		EXPECT_EQ(1, first.ret);
		EXPECT_GT(2000, ms_after(&hold, t0))
			TH_LOG("round %d: holder returned %lld ms after the clear",
			       round, (long long)ms_after(&hold, t0));
		efd_drain(self->efd);
		close(ep2);
		close(efd2);
		if (!numab_module_loaded())
			ASSERT_EQ(0, numab_modprobe());
	}
}

TEST_HARNESS_MAIN
