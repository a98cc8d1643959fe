// SPDX-License-Identifier: GPL-2.0
/*
 * The batch target, epoll_ctl(EPOLL_CTL_MIN_EVENTS), and the minimum wait
 * timed from the first ready event, EPOLL_MIN_WAIT_AFTER_FIRST: the table
 * of SPEC section 2 "Batch target and timer base", fdinfo, the instance
 * counter, unload, and the wait semantics with either timer base.
 *
 * Timing margins are wide on purpose: the guest runs under TCG. Lower
 * bounds are exact (a minimum wait never ends early); upper bounds allow
 * SLACK_MS.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define SLACK_MS	250
#define NR_EFD		4
#define AFTER_FIRST	EPOLL_MIN_WAIT_AFTER_FIRST

static long fdinfo_flags(int epfd)
{
	return numab_fdinfo_long(epfd, NUMAB_FDINFO_FLAGS_KEY);
}

static long fdinfo_min_events(int epfd)
{
	return numab_fdinfo_long(epfd, NUMAB_FDINFO_EVENTS_KEY);
}

/* One instance watching NR_EFD non-blocking eventfds, level-triggered. */
static int instance_setup(int *epfd, int *efd)
{
	int i;

	*epfd = epoll_create1(EPOLL_CLOEXEC);
	if (*epfd < 0)
		return -1;
	for (i = 0; i < NR_EFD; i++) {
		efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd[i] < 0 || add_fd(*epfd, efd[i], EPOLLIN))
			return -1;
	}
	return 0;
}

static void instance_teardown(int epfd, const int *efd)
{
	int i;

	close(epfd);
	for (i = 0; i < NR_EFD; i++)
		close(efd[i]);
}

/* --- the epoll_ctl table -------------------------------------------------- */

FIXTURE(mw) {
	int epfd;
	int efd[NR_EFD];
};

FIXTURE_SETUP(mw)
{
	ASSERT_MODULE();
	ASSERT_EQ(0, instance_setup(&self->epfd, self->efd));
}

FIXTURE_TEARDOWN(mw)
{
	instance_teardown(self->epfd, self->efd);
}

/*
 * The table both ops share (value range, event pointer, epoll fd, the
 * ignored fd) is epoll_min_wait_test.c's ctl fixture, one variant an op.
 */

/* The op sets the (usecs, flags) pair and returns the previous usecs. */
TEST_F(mw, after_first_set_and_cleared)
{
	EXPECT_EQ(0, set_min_wait(self->epfd, 5000 | AFTER_FIRST));
	EXPECT_EQ(5000, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(1, fdinfo_flags(self->epfd));

	/* a later call without the flag clears it */
	EXPECT_EQ(5000, set_min_wait(self->epfd, 6000));
	EXPECT_EQ(6000, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd));

	/* the flag alone: 0 us from the first event */
	EXPECT_EQ(6000, set_min_wait(self->epfd, AFTER_FIRST));
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(1, fdinfo_flags(self->epfd));

	EXPECT_EQ(0, set_min_wait(self->epfd, INT_MAX | AFTER_FIRST));
	EXPECT_EQ(INT_MAX, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(INT_MAX, set_min_wait(self->epfd, 0));
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd));
}

/* Each line is there exactly when its value is non-zero. */
TEST_F(mw, fdinfo_lines)
{
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_min_events(self->epfd));

	ASSERT_EQ(0, set_min_events(self->epfd, 4));
	EXPECT_EQ(4, fdinfo_min_events(self->epfd));
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd));

	ASSERT_EQ(0, set_min_wait(self->epfd, 250 | AFTER_FIRST));
	EXPECT_EQ(250, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(1, fdinfo_flags(self->epfd));
	EXPECT_EQ(4, fdinfo_min_events(self->epfd));

	ASSERT_EQ(4, set_min_events(self->epfd, 0));
	EXPECT_EQ(-ENOENT, fdinfo_min_events(self->epfd));
	EXPECT_EQ(1, fdinfo_flags(self->epfd));
	ASSERT_EQ(250, set_min_wait(self->epfd, 0));
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd));
}

/*
 * Any bit of 32..63 but AFTER_FIRST and ADAPTIVE, or usecs > INT_MAX:
 * nothing changes.
 */
TEST_F(mw, unknown_flag_bits_einval)
{
	static const uint64_t bad[] = {
		1ULL << 34, 1ULL << 35, 1ULL << 40, 1ULL << 62, 1ULL << 63,
		AFTER_FIRST | 1ULL << 34, 5000 | 1ULL << 34,
		EPOLL_MIN_WAIT_ADAPTIVE | 1ULL << 34,
		EPOLL_MIN_WAIT_ADAPTIVE | ((uint64_t)INT_MAX + 1),
		AFTER_FIRST | 1ULL << 63, 0xffffffff00000000ULL, UINT64_MAX,
		AFTER_FIRST | ((uint64_t)INT_MAX + 1), AFTER_FIRST | UINT_MAX,
		(uint64_t)INT_MAX + 1,
	};
	size_t i;

	ASSERT_EQ(0, set_min_wait(self->epfd, 5000 | AFTER_FIRST));
	ASSERT_EQ(0, set_min_events(self->epfd, 3));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, set_min_wait(self->epfd, bad[i]))
			TH_LOG("value %#llx accepted",
			       (unsigned long long)bad[i]);
		EXPECT_EQ(5000, numab_fdinfo_min_wait(self->epfd));
		EXPECT_EQ(1, fdinfo_flags(self->epfd))
			TH_LOG("flags changed by %#llx",
			       (unsigned long long)bad[i]);
		EXPECT_EQ(3, fdinfo_min_events(self->epfd));
	}
	EXPECT_EQ(3, set_min_events(self->epfd, 0));
	EXPECT_EQ(5000, set_min_wait(self->epfd, 0)) TH_LOG("value changed");
}

/*
 * ev.events is ignored by both ops: programs reuse an epoll_event that
 * still holds EPOLLIN. It neither sets a flag nor changes the timer base:
 * with the minimum wait timed from the call's start, an event after M
 * ends the call at once.
 */
TEST_F(mw, events_field_ignored)
{
	static const uint32_t events[] = {
		EPOLLIN, EPOLLIN | EPOLLET, EPOLLEXCLUSIVE | EPOLLONESHOT,
		UINT32_MAX,
	};
	struct epoll_event ev;
	struct delayed_write w;
	struct timed t;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(events); i++) {
		ev = (struct epoll_event){
			.events = events[i], .data.u64 = 300000,
		};
		EXPECT_EQ(i ? 300000 : 0, epoll_ctl(self->epfd,
						    EPOLL_CTL_MIN_WAIT, -1,
						    &ev));
		EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd))
			TH_LOG("events %#x set a flag", events[i]);
		ev.data.u64 = 2;
		EXPECT_EQ(i ? 2 : 0, epoll_ctl(self->epfd,
					       EPOLL_CTL_MIN_EVENTS, -1, &ev));
	}
	EXPECT_EQ(300000, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(2, fdinfo_min_events(self->epfd));

	ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 400));
	t = timed_wait(self->epfd, 8, -1);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, ms_after(&t, w.at_ns))
		TH_LOG("returned %lld ms after the event: timed from it?",
		       (long long)ms_after(&t, w.at_ns));
}

/* min_wait_instances counts instances with usecs, flags or K non-zero. */
TEST_F(mw, instance_counter)
{
	struct numab_counters base = { 0 }, c = { 0 };
	int other;

	ASSERT_EQ(0, numab_read_counters(&base))
		TH_LOG("cannot read %s", NUMAB_DEBUGFS_COUNTERS);
	other = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, other);

	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 1, c.min_wait_instances)
		TH_LOG("K alone not counted");
	ASSERT_EQ(0, set_min_wait(other, AFTER_FIRST));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 2, c.min_wait_instances)
		TH_LOG("the flag alone not counted");

	ASSERT_EQ(0, set_min_wait(self->epfd, 100));
	ASSERT_EQ(2, set_min_events(self->epfd, 0));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 2, c.min_wait_instances);
	ASSERT_EQ(100, set_min_wait(self->epfd, 0));
	ASSERT_EQ(0, numab_read_counters(&c));
	EXPECT_EQ(base.min_wait_instances + 1, c.min_wait_instances);

	/* closed with only the flag set */
	close(other);
	EXPECT_TRUE(numab_counters_settle(&base, &c, 2000))
		TH_LOG("min_wait_instances %ld after close, want %ld",
		       c.min_wait_instances, base.min_wait_instances);
}

/* --- the minimum wait timed from the first event -------------------------- */

/*
 * An idle instance, M = 300 ms, one event at 400 ms: the call returns at
 * 700 ms, not at 400 (the event) nor at 300 (the call's start + M). The
 * waiter sleeps twice: the first event wakes it to start the module's
 * timer, which ends the second sleep.
 */
TEST_F(mw, after_first_timed_from_the_event)
{
	struct delayed_write w;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 300000 | AFTER_FIRST));
	ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 400));
	t = timed_wait(self->epfd, 8, -1);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(300, ms_after(&t, w.at_ns))
		TH_LOG("returned %lld ms after the event",
		       (long long)ms_after(&t, w.at_ns));
	EXPECT_GT(300 + SLACK_MS, ms_after(&t, w.at_ns))
		TH_LOG("returned %lld ms after the event",
		       (long long)ms_after(&t, w.at_ns));
	/*
	 * Not at the call's start + M: the writer's 400 ms count from its
	 * own start, a little before the call's, so no exact 700 here.
	 */
	EXPECT_LE(300 + 300, t.ms);
	EXPECT_EQ(2, t.nvcsw) TH_LOG("%ld voluntary context switches",
				     t.nvcsw);
}

/* Two events M/2 apart come back together, M after the first. */
TEST_F(mw, after_first_batches)
{
	struct delayed_write w0, w1;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 400000 | AFTER_FIRST));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 100));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 300));
	t = timed_wait(self->epfd, 8, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_LE(400, ms_after(&t, w0.at_ns));
	EXPECT_GT(400 + SLACK_MS, ms_after(&t, w0.at_ns))
		TH_LOG("returned %lld ms after the first event",
		       (long long)ms_after(&t, w0.at_ns));
	/* One wakeup to start the wait, one to end it: not one an event. */
	EXPECT_EQ(2, t.nvcsw) TH_LOG("%ld voluntary context switches",
				     t.nvcsw);
}

/*
 * A new K is nothing to a call waiting for its first event: it is not
 * woken for it, however often K changes.
 */
TEST_F(mw, after_first_new_min_events_wakes_no_waiter)
{
	struct timed t = { .epfd = self->epfd, .maxevents = 8,
			   .timeout = 400 };

	ASSERT_EQ(0, set_min_wait(self->epfd, 100000 | AFTER_FIRST));
	ASSERT_EQ(0, wait_through_new_min_events(&t));
	EXPECT_EQ(0, t.ret);
	EXPECT_GE(2, t.nvcsw) TH_LOG("%ld voluntary context switches on 50 new K values",
				     t.nvcsw);
}

/* An event already ready at the call's start starts the timer there. */
TEST_F(mw, after_first_ready_at_call_start)
{
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 300000 | AFTER_FIRST));
	efd_signal(self->efd[0]);
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(300, t.ms);
	EXPECT_GT(300 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);
}

/* maxevents items ready during the batch end it. */
TEST_F(mw, after_first_maxevents_ends_it)
{
	struct delayed_write w0, w1;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000 | AFTER_FIRST));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 100));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 200));
	t = timed_wait(self->epfd, 2, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, ms_after(&t, w1.at_ns))
		TH_LOG("returned %lld ms after the second event",
		       (long long)ms_after(&t, w1.at_ns));

	/* and both ready at the call's start: at once */
	t = timed_wait(self->epfd, 2, -1);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);
}

/* --- both timer bases ----------------------------------------------------- */

FIXTURE(base) {
	int epfd;
	int efd[NR_EFD];
};

FIXTURE_VARIANT(base) {
	uint64_t flags;
};

FIXTURE_VARIANT_ADD(base, from_call_start) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(base, after_first) {
	.flags = AFTER_FIRST,
};

FIXTURE_SETUP(base)
{
	ASSERT_MODULE();
	ASSERT_EQ(0, instance_setup(&self->epfd, self->efd));
}

FIXTURE_TEARDOWN(base)
{
	instance_teardown(self->epfd, self->efd);
}

/* K items ready end the minimum wait, at the K-th event or at the start. */
TEST_F(base, min_events_ends_it)
{
	struct delayed_write w0, w1;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 100));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 200));
	t = timed_wait(self->epfd, 8, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, ms_after(&t, w1.at_ns))
		TH_LOG("returned %lld ms after the second event",
		       (long long)ms_after(&t, w1.at_ns));
	/* from the first event: two sleeps, however many events in them */
	if (variant->flags)
		EXPECT_EQ(2, t.nvcsw) TH_LOG("%ld voluntary context switches",
					     t.nvcsw);

	/* ready at the call's start; a third one is not waited for */
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, t.ms);

	/* below K: the full minimum wait */
	efd_drain(self->efd[1]);
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(1000, t.ms);
	EXPECT_GT(1000 + SLACK_MS, t.ms);
}

/* K larger than maxevents: maxevents ends the wait. */
TEST_F(base, min_events_above_maxevents)
{
	struct delayed_write w0, w1;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(self->epfd, 8));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 100));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 200));
	t = timed_wait(self->epfd, 2, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, ms_after(&t, w1.at_ns))
		TH_LOG("returned %lld ms after the second event",
		       (long long)ms_after(&t, w1.at_ns));

	efd_signal(self->efd[2]);
	t = timed_wait(self->epfd, 2, -1);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, t.ms) TH_LOG("3 ready, maxevents 2: %lld ms",
					 (long long)t.ms);
}

/*
 * A batch target of 1 (maxevents 1, or K 1) makes the minimum wait moot:
 * the call returns as soon as one event is ready, as a plain epoll_wait().
 */
TEST_F(base, batch_target_one_is_plain)
{
	const struct { int maxevents, k; } cases[] = { { 1, 0 }, { 8, 1 } };
	struct delayed_write w;
	struct timed t;
	size_t i;

	ASSERT_EQ(0, set_min_wait(self->epfd, 2000000 | variant->flags));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_LE(0, set_min_events(self->epfd, cases[i].k));

		ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 100));
		t = timed_wait(self->epfd, cases[i].maxevents, -1);
		pthread_join(w.th, NULL);
		EXPECT_EQ(1, t.ret);
		EXPECT_GT(SLACK_MS, ms_after(&t, w.at_ns))
			TH_LOG("maxevents %d K %d: %lld ms after the event",
			       cases[i].maxevents, cases[i].k,
			       (long long)ms_after(&t, w.at_ns));
		EXPECT_EQ(1, t.nvcsw) TH_LOG("%ld voluntary context switches",
					     t.nvcsw);

		/* ready at the call's start: at once */
		t = timed_wait(self->epfd, cases[i].maxevents, -1);
		EXPECT_EQ(1, t.ret);
		EXPECT_GT(SLACK_MS, t.ms) TH_LOG("maxevents %d K %d: %lld ms",
						 cases[i].maxevents,
						 cases[i].k, (long long)t.ms);
		efd_drain(self->efd[0]);
	}
}

/* A timeout shorter than the rest of the minimum wait: it returns at T. */
TEST_F(base, timeout_within_min_wait)
{
	struct delayed_write w;
	struct timed t;

	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 200));
	t = timed_wait(self->epfd, 8, 500);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_LE(500, t.ms);
	EXPECT_GT(500 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);

	/* nothing at all: at T with nothing */
	efd_drain(self->efd[0]);
	t = timed_wait(self->epfd, 8, 300);
	EXPECT_EQ(0, t.ret);
	EXPECT_LE(300, t.ms);
	EXPECT_GT(300 + SLACK_MS, t.ms);
}

TEST_F(base, signal_interrupts)
{
	struct signaller s = { .delay_ms = 150 };
	struct delayed_write w;
	struct timed t;

	ASSERT_EQ(0, sigusr1_interrupts());
	ASSERT_EQ(0, set_min_wait(self->epfd, 2000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(self->epfd, 3));
	s.target = pthread_self();

	/* nothing ready: EINTR */
	t = signalled_wait(self->epfd, &s);
	EXPECT_EQ(-1, t.ret);
	EXPECT_EQ(EINTR, t.err);
	EXPECT_GT(150 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);

	/* an event came first: the event or EINTR, promptly either way */
	ASSERT_EQ(0, delayed_write_start(&w, self->efd[0], 50));
	t = signalled_wait(self->epfd, &s);
	pthread_join(w.th, NULL);
	EXPECT_TRUE(t.ret == 1 || (t.ret == -1 && t.err == EINTR))
		TH_LOG("ret %d (%s)", t.ret, strerror(t.err));
	EXPECT_GT(150 + SLACK_MS, t.ms) TH_LOG("returned after %lld ms",
					       (long long)t.ms);
}

TEST_F(base, sigkill_ends_it)
{
	int64_t killed;
	int status, i;
	pid_t pid;

	ASSERT_EQ(0, set_min_wait(self->epfd, 10000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(self->epfd, 3));
	for (i = 0; i < 2; i++) {
		/* once without an event, once with one ready */
		if (i)
			efd_signal(self->efd[0]);
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct epoll_event ev[8];

			epoll_wait(self->epfd, ev, 8, -1);
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

/*
 * A waiter that entered epoll_wait() before the instance got its minimum
 * wait is held back by at most M.
 */
TEST_F(base, set_while_waiting)
{
	struct timed t = { .epfd = self->epfd, .maxevents = 8, .timeout = -1 };
	int64_t wrote;
	pthread_t th;

	ASSERT_EQ(0, timed_wait_start(&th, &t));
	ASSERT_EQ(0, set_min_wait(self->epfd, 300000 | variant->flags));
	wrote = numab_now_ns();
	efd_signal(self->efd[0]);
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(300 + SLACK_MS, ms_after(&t, wrote))
		TH_LOG("returned %lld ms after the event",
		       (long long)ms_after(&t, wrote));
}

/*
 * The batch target with EPOLLEXCLUSIVE: NR_EXCL instances (K = 2) watch two
 * eventfds exclusively, in the same order. One instance takes both
 * wakeups and returns both events as soon as the second one is ready; the
 * others are not woken.
 */
#define NR_EXCL		4

TEST_F(base, min_events_with_epollexclusive)
{
	const int timeout = 1000 + 2 * SLACK_MS;
	int epfd[NR_EXCL], i, woken = 0, events = 0;
	struct timed t[NR_EXCL];
	pthread_t th[NR_EXCL];
	int64_t wrote;

	for (i = 0; i < NR_EXCL; i++) {
		epfd[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, epfd[i]);
		ASSERT_EQ(0, set_min_wait(epfd[i], 1000000 | variant->flags));
		ASSERT_EQ(0, set_min_events(epfd[i], 2));
		ASSERT_EQ(0, add_fd(epfd[i], self->efd[0],
				    EPOLLIN | EPOLLEXCLUSIVE));
		ASSERT_EQ(0, add_fd(epfd[i], self->efd[1],
				    EPOLLIN | EPOLLEXCLUSIVE));
	}
	for (i = 0; i < NR_EXCL; i++) {
		t[i] = (struct timed){
			.epfd = epfd[i], .maxevents = 8, .timeout = timeout,
		};
		ASSERT_EQ(0, timed_wait_start(&th[i], &t[i]))
			TH_LOG("waiter %d did not go to sleep", i);
	}
	efd_signal(self->efd[0]);
	numab_sleep_ms(50);
	wrote = numab_now_ns();
	efd_signal(self->efd[1]);
	for (i = 0; i < NR_EXCL; i++)
		pthread_join(th[i], NULL);

	for (i = 0; i < NR_EXCL; i++) {
		EXPECT_LE(0, t[i].ret) TH_LOG("waiter %d: %s", i,
					      strerror(t[i].err));
		if (t[i].ret <= 0)
			continue;
		woken++;
		events += t[i].ret;
		EXPECT_GT(SLACK_MS, ms_after(&t[i], wrote))
			TH_LOG("waiter %d returned %lld ms after the second event",
			       i, (long long)ms_after(&t[i], wrote));
	}
	EXPECT_EQ(1, woken) TH_LOG("%d of %d instances woken", woken, NR_EXCL);
	EXPECT_EQ(2, events);
	for (i = 0; i < NR_EXCL; i++)
		close(epfd[i]);
}

/*
 * Nesting: an instance with a batch target counts the inner instances it
 * watches as items (it returns once both are ready); an instance with one,
 * watched by another, tells the outer one at its first event as usual.
 */
TEST_F(base, min_events_nested)
{
	int inner[2], outer, plain_outer, i;
	struct delayed_write w0, w1;
	struct timed t;

	outer = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, outer);
	for (i = 0; i < 2; i++) {
		inner[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, inner[i]);
		ASSERT_EQ(0, add_fd(inner[i], self->efd[i], EPOLLIN));
		ASSERT_EQ(0, add_fd(outer, inner[i], EPOLLIN));
	}
	ASSERT_EQ(0, set_min_wait(outer, 1000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(outer, 2));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[0], 100));
	ASSERT_EQ(0, delayed_write_start(&w1, self->efd[1], 200));
	t = timed_wait(outer, 8, -1);
	pthread_join(w0.th, NULL);
	pthread_join(w1.th, NULL);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, ms_after(&t, w1.at_ns))
		TH_LOG("outer returned %lld ms after the second event",
		       (long long)ms_after(&t, w1.at_ns));
	efd_drain(self->efd[0]);
	efd_drain(self->efd[1]);

	/* the fixture's instance, with K, watched by a plain one */
	plain_outer = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, plain_outer);
	ASSERT_EQ(0, add_fd(plain_outer, self->epfd, EPOLLIN));
	ASSERT_EQ(0, set_min_wait(self->epfd, 1000000 | variant->flags));
	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	ASSERT_EQ(0, delayed_write_start(&w0, self->efd[2], 100));
	t = timed_wait(plain_outer, 8, 2000);
	pthread_join(w0.th, NULL);
	EXPECT_EQ(1, t.ret);
	EXPECT_GT(SLACK_MS, ms_after(&t, w0.at_ns))
		TH_LOG("plain outer woke %lld ms after the event",
		       (long long)ms_after(&t, w0.at_ns));
	efd_signal(self->efd[3]);
	t = timed_wait(self->epfd, 8, -1);
	EXPECT_EQ(2, t.ret);
	EXPECT_GT(SLACK_MS, t.ms) TH_LOG("inner with K ready: %lld ms",
					 (long long)t.ms);

	close(plain_outer);
	close(outer);
	close(inner[0]);
	close(inner[1]);
}

/* --- without the module, and unloading it --------------------------------- */

FIXTURE(module) {
	int epfd;
	int efd[NR_EFD];
};

FIXTURE_SETUP(module)
{
	ASSERT_MODULE();
	ASSERT_EQ(0, instance_setup(&self->epfd, self->efd));
}

FIXTURE_TEARDOWN(module)
{
	instance_teardown(self->epfd, self->efd);
	if (!numab_module_loaded())
		numab_modprobe();
}

TEST_F(module, without_module_einval)
{
	struct epoll_event ev = { .data.u64 = 3 };
	int p[2], fds[4], i;

	ASSERT_EQ(0, numab_rmmod()) TH_LOG("cannot unload the module");
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	fds[0] = -1;
	fds[1] = p[0];
	fds[2] = self->epfd;
	fds[3] = 4242;
	for (i = 0; i < 4; i++) {
		errno = 0;
		ev.data.u64 = 3;
		EXPECT_EQ(-1, epoll_ctl(self->epfd, EPOLL_CTL_MIN_EVENTS,
					fds[i], &ev));
		EXPECT_EQ(EINVAL, errno) TH_LOG("K, fd %d: %s", fds[i],
						strerror(errno));
		errno = 0;
		ev.data.u64 = 1000 | AFTER_FIRST;
		EXPECT_EQ(-1, epoll_ctl(self->epfd, EPOLL_CTL_MIN_WAIT,
					fds[i], &ev));
		EXPECT_EQ(EINVAL, errno) TH_LOG("AFTER_FIRST, fd %d: %s",
						fds[i], strerror(errno));
	}
	EXPECT_EQ(-ENOENT, fdinfo_min_events(self->epfd));
	EXPECT_EQ(-ENOENT, fdinfo_flags(self->epfd));
	ASSERT_EQ(0, numab_modprobe());
	EXPECT_EQ(0, set_min_events(self->epfd, 3));
	EXPECT_EQ(3, set_min_events(self->epfd, 0));
	close(p[0]);
	close(p[1]);
}

/* K alone, or the flag alone, is min-wait state: it pins the module. */
TEST_F(module, unload_refused_with_k_or_flag)
{
	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	numab_expect_unload_refused(_metadata, "an instance has a K");
	EXPECT_EQ(2, set_min_events(self->epfd, 0));
	EXPECT_TRUE(numab_unload_settles(2000))
		TH_LOG("unload refused with no state left");
	ASSERT_EQ(0, numab_modprobe());

	ASSERT_EQ(0, set_min_wait(self->epfd, AFTER_FIRST));
	numab_expect_unload_refused(_metadata, "an instance has a flag");
	EXPECT_EQ(0, set_min_wait(self->epfd, 0));
	EXPECT_TRUE(numab_unload_settles(2000))
		TH_LOG("unload refused with no state left");
	EXPECT_EQ(0, numab_modprobe());
}

TEST_HARNESS_MAIN
