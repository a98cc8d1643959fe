// SPDX-License-Identifier: GPL-2.0
/*
 * EPOLL_MIN_WAIT_ADAPTIVE: the value, what fdinfo shows, the bound, and
 * how the wait the module chooses follows synthetic loads: idle, paced
 * light and heavy, a closed loop of clients (also after a steady stream
 * took the wait to its ceiling), bursts, a load that stops batching.
 * Convergence is checked by counts (events per call) and the wait fdinfo
 * shows, not by wall time; the one time bound is the ceiling M, with the
 * margin of the other min-wait tests.
 *
 * The loads are scaled to the guest (TCG): M is 100 ms, a heavy load is
 * an event every 2 ms, a light one every 60 ms.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <time.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define ADAPTIVE	EPOLL_MIN_WAIT_ADAPTIVE
#define M_US		100000
#define SLACK_MS	250
#define NR_EFD		16

static long fdinfo_current(int epfd)
{
	return numab_fdinfo_long(epfd, "min_wait_current_us:");
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/*
 * A writer thread: @nr events (0: until stopped) @gap_us apart (@gaps_us:
 * the i-th after the i-th gap of @nr), @burst eventfds at a time, in turn
 * over @items of them (0: NR_EFD).
 */
struct pacer {
	pthread_t th;
	const int *efd;
	int items;
	int nr;
	int burst;
	long gap_us;
	const long *gaps_us;
	volatile bool stop;
};

static void *pacer_fn(void *arg)
{
	struct pacer *p = arg;
	int items = p->items ?: NR_EFD;
	int i, j, next = 0;

	for (i = 0; (!p->nr || i < p->nr) && !p->stop; i++) {
		sleep_us(p->gaps_us ? p->gaps_us[i] : p->gap_us);
		for (j = 0; j < p->burst; j++, next = (next + 1) % items)
			efd_signal(p->efd[next]);
	}
	return NULL;
}

FIXTURE(adapt) {
	int epfd;
	int efd[NR_EFD];
	struct pacer pacer;
	bool pacing;
};

FIXTURE_SETUP(adapt)
{
	int i;

	ASSERT_MODULE();
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	for (i = 0; i < NR_EFD; i++) {
		self->efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, self->efd[i]);
		ASSERT_EQ(0, add_fd(self->epfd, self->efd[i], EPOLLIN));
	}
	self->pacing = false;
}

FIXTURE_TEARDOWN(adapt)
{
	int i;

	if (self->pacing) {
		self->pacer.stop = true;
		pthread_join(self->pacer.th, NULL);
	}
	close(self->epfd);
	for (i = 0; i < NR_EFD; i++)
		close(self->efd[i]);
}

/* Start the writer (@gaps_us: see struct pacer), stopping the last one. */
static int pace_gaps(FIXTURE_DATA(adapt) *self, int nr, int burst,
		     long gap_us, const long *gaps_us)
{
	if (self->pacing) {
		self->pacer.stop = true;
		pthread_join(self->pacer.th, NULL);
	}
	self->pacer = (struct pacer){
		.efd = self->efd, .nr = nr, .burst = burst, .gap_us = gap_us,
		.gaps_us = gaps_us,
	};
	self->pacing = !pthread_create(&self->pacer.th, NULL, pacer_fn,
				       &self->pacer);
	return self->pacing ? 0 : -1;
}

static int pace(FIXTURE_DATA(adapt) *self, int nr, int burst, long gap_us)
{
	return pace_gaps(self, nr, burst, gap_us, NULL);
}

/* Stats of @calls blocking calls (timeout @ms), each drained after. */
struct run {
	int calls;		/* that returned events */
	int events;
	int max_current;	/* the largest wait fdinfo showed */
	int64_t longest_ms;	/* the longest call */
};

static struct run run_calls(int epfd, int calls, int ms)
{
	struct epoll_event ev[64];
	struct run r = { 0 };
	int i, j, n;

	for (i = 0; i < calls; i++) {
		int64_t t0 = now_ns(), dt;
		long cur;

		n = epoll_wait(epfd, ev, 64, ms);
		dt = (now_ns() - t0) / 1000000;
		if (dt > r.longest_ms)
			r.longest_ms = dt;
		for (j = 0; j < n; j++)
			efd_drain(ev[j].data.fd);
		if (n > 0) {
			r.calls++;
			r.events += n;
		}
		cur = fdinfo_current(epfd);
		if (cur > r.max_current)
			r.max_current = cur;
	}
	return r;
}

/* The value: accepted with AFTER_FIRST, shown with the wait it chose. */
TEST_F(adapt, value_and_fdinfo)
{
	EXPECT_EQ(-ENOENT, fdinfo_current(self->epfd));
	ASSERT_EQ(0, set_min_wait(self->epfd, 300 | ADAPTIVE));
	EXPECT_EQ(300, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(2, numab_fdinfo_long(self->epfd, "min_wait_flags:"));
	EXPECT_EQ(0, fdinfo_current(self->epfd));

	ASSERT_EQ(300, set_min_wait(self->epfd, 400 | ADAPTIVE |
				    EPOLL_MIN_WAIT_AFTER_FIRST));
	EXPECT_EQ(3, numab_fdinfo_long(self->epfd, "min_wait_flags:"));
	EXPECT_EQ(0, fdinfo_current(self->epfd));

	/* A bad value changes nothing. */
	EXPECT_EQ(-EINVAL, set_min_wait(self->epfd, 5 | ADAPTIVE | 1ULL << 34));
	EXPECT_EQ(-EINVAL, set_min_wait(self->epfd, ADAPTIVE |
					((uint64_t)INT_MAX + 1)));
	EXPECT_EQ(400, numab_fdinfo_min_wait(self->epfd));
	EXPECT_EQ(3, numab_fdinfo_long(self->epfd, "min_wait_flags:"));

	/* A fixed wait shows no current wait. */
	ASSERT_EQ(400, set_min_wait(self->epfd, 400));
	EXPECT_EQ(-ENOENT, fdinfo_current(self->epfd));
	ASSERT_EQ(400, set_min_wait(self->epfd, 0));
	EXPECT_EQ(-ENOENT, numab_fdinfo_min_wait(self->epfd));
}

/* At w = 0 the instance is a plain one: ready events return at once. */
TEST_F(adapt, starts_at_zero_returns_at_once)
{
	struct epoll_event ev[4];
	int64_t t0;

	ASSERT_EQ(0, set_min_wait(self->epfd, 2000000 | ADAPTIVE));
	efd_signal(self->efd[0]);
	t0 = now_ns();
	EXPECT_EQ(1, epoll_wait(self->epfd, ev, 4, 5000));
	EXPECT_GT(1000, (now_ns() - t0) / 1000000) TH_LOG("held at w = 0");
	EXPECT_EQ(0, fdinfo_current(self->epfd));
}

/* Idle and a light load (a gap of 60 ms against M = 100 ms): no wait. */
TEST_F(adapt, light_load_stays_at_zero)
{
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	r = run_calls(self->epfd, 5, 20);
	EXPECT_EQ(0, r.calls);
	ASSERT_EQ(0, pace(self, 24, 1, 60000));
	r = run_calls(self->epfd, 24, 2000);
	EXPECT_EQ(24, r.calls);
	EXPECT_EQ(0, r.max_current) TH_LOG("waited at a light load");
}

/*
 * Where a thread sleeps, from /proc: its wchan names the module's
 * functions in its wait, and others (epoll's, or a timer function found
 * on its stack) in epoll's own; "0" while it runs.
 */
struct wchan_sampler {
	pthread_t th;
	pid_t tid;
	int in_module;		/* samples in the module's wait */
	int asleep_else;	/* asleep elsewhere: epoll's own wait */
	bool no_wchan;		/* a kernel without CONFIG_KALLSYMS */
	volatile bool stop;
};

static void *wchan_fn(void *arg)
{
	struct wchan_sampler *ws = arg;
	char path[64], name[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", ws->tid);
	while (!ws->stop) {
		sleep_us(5000);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ws->no_wchan = true;
			break;
		}
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n <= 0)
			continue;
		name[n] = '\0';
		if (!strncmp(name, "min_wait", 8))
			ws->in_module++;
		else if (strcmp(name, "0"))
			ws->asleep_else++;
	}
	return NULL;
}

/* One of the module's counters, or -1. */
static long module_counter(const char *name)
{
	long n = -1;

	if (proc_field_long(NUMAB_DEBUGFS_COUNTERS, name, &n))
		return -1;
	return n;
}

/* Blocking calls that entered the module's wait so far. */
static long module_waits(void)
{
	return module_counter("min_wait_waits");
}

/*
 * Where no wait would batch, sleeping calls are plain ones: only one in
 * several enters the module's wait to measure its gap; epoll makes the
 * others plain calls that never enter the module, so the light load pays
 * about what a plain epoll_wait() does.
 */
TEST_F(adapt, light_load_sleeps_as_plain)
{
	struct wchan_sampler ws = { .tid = gettid() };
	long waits0, waits;
	int sleeping;
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 32, 1, 60000));
	ASSERT_EQ(0, pthread_create(&ws.th, NULL, wchan_fn, &ws));
	waits0 = module_waits();
	r = run_calls(self->epfd, 32, 2000);
	waits = module_waits() - waits0;
	ws.stop = true;
	pthread_join(ws.th, NULL);
	ASSERT_LE(0, waits0) TH_LOG("no min_wait_waits in the module's counters");
	TH_LOG("%d calls, %ld entered the module", r.calls, waits);
	EXPECT_EQ(32, r.calls);
	/* One call in 8 measures, then fewer; a third is a wide margin. */
	EXPECT_GT(r.calls, 3 * waits);
	EXPECT_LT(0, waits) TH_LOG("no call measured");
	if (ws.no_wchan)
		SKIP(return, "no /proc/TID/wchan (CONFIG_KALLSYMS)");
	sleeping = ws.in_module + ws.asleep_else;
	TH_LOG("samples asleep: %d in the module's wait, %d elsewhere",
	       ws.in_module, ws.asleep_else);
	EXPECT_EQ(0, r.max_current);
	ASSERT_LE(100, sleeping) TH_LOG("wchan shows no sleep");
	/* One call in 8 measures, then fewer; a third is a wide margin. */
	EXPECT_GT(sleeping, 3 * ws.in_module);
	EXPECT_LT(0, ws.in_module) TH_LOG("no call measured");
}

/* Bursts that arrive together batch without waiting. */
TEST_F(adapt, bursts_stay_at_zero)
{
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 12, 8, 150000));
	r = run_calls(self->epfd, 24, 400);
	EXPECT_EQ(8 * 12, r.events);
	EXPECT_EQ(0, r.max_current) TH_LOG("waited for bursts");
}

/*
 * Calls under the heavy load until the wait climbs (only calls that sleep
 * measure: a slow kernel's calls may find the next event ready for a
 * while); returns the wait fdinfo shows then.
 */
static long climb(int epfd)
{
	int i;

	for (i = 0; i < 600 && !fdinfo_current(epfd); i++)
		run_calls(epfd, 1, 2000);
	return fdinfo_current(epfd);
}

/*
 * A heavy load (an event every 2 ms): the wait climbs and batches, and no
 * call is held past M. Then the load turns light: the first wait that
 * does not batch drops it to 0.
 */
TEST_F(adapt, heavy_load_climbs_then_falls)
{
	struct run r;
	int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 1, 2000));
	ASSERT_LT(0, climb(self->epfd));
	r = run_calls(self->epfd, 40, 2000);
	TH_LOG("after the climb: %d events in %d calls, wait up to %d us",
	       r.events, r.calls, r.max_current);
	EXPECT_LT(0, r.max_current);
	EXPECT_GE(M_US, r.max_current);
	EXPECT_LE(2 * r.calls, r.events) TH_LOG("no batches");
	EXPECT_GE(M_US / 1000 + SLACK_MS, r.longest_ms);

	ASSERT_EQ(0, pace(self, 10, 1, 300000));
	run_calls(self->epfd, 1, 2000);
	/* Idle calls raise the average gap past M within a few. */
	for (i = 0; i < 8 && fdinfo_current(self->epfd); i++)
		run_calls(self->epfd, 1, 2000);
	EXPECT_EQ(0, fdinfo_current(self->epfd)) TH_LOG("still waiting");
}

/*
 * A heavy load (two events every 2 ms) lets the wait climb past 5 ms;
 * then each call's own timeout, 5 ms, ends it before its minimum wait:
 * each returns the batch that came in those 5 ms, several events. A call
 * cut short by its timeout still batched: the wait must not fall to 0
 * for it, as it does for a wait that got one event. (Two events every
 * 1 ms kept a KASAN guest so busy that no call slept, and the wait,
 * which climbs on what sleeping calls see, stayed at 0.)
 */
#define CUT_T_MS	5
#define CUT_CALLS	100

TEST_F(adapt, cut_short_by_the_timeout_counts_its_batch)
{
	struct epoll_event ev[64];
	int i, j, n, zero = 0, events = 0;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 2, 2000));
	for (i = 0; i < 600 && fdinfo_current(self->epfd) <= 2 * CUT_T_MS * 1000; i++)
		run_calls(self->epfd, 1, 2000);
	ASSERT_LT(2 * CUT_T_MS * 1000, fdinfo_current(self->epfd))
		TH_LOG("the wait did not climb past %d ms", 2 * CUT_T_MS);
	for (i = 0; i < CUT_CALLS; i++) {
		n = epoll_wait(self->epfd, ev, 64, CUT_T_MS);
		for (j = 0; j < n; j++)
			efd_drain(ev[j].data.fd);
		events += n > 0 ? n : 0;
		zero += !fdinfo_current(self->epfd);
	}
	TH_LOG("%d calls of timeout %d ms: %d events, the wait at 0 after %d of them",
	       CUT_CALLS, CUT_T_MS, events, zero);
	EXPECT_LE(2 * CUT_CALLS, events) TH_LOG("no batches");
	EXPECT_GE(CUT_CALLS / 10, zero)
		TH_LOG("calls cut short by their timeout made the wait fall");
}

/*
 * The farther calls stay from batching, the fewer measure: one in 8,
 * then one in 16, 32, up to 256. Of 124 calls with gaps of 80 ms (M/2 is
 * 50 ms), calls 1, 9, 25, 57 and 121 measure; one in 8 throughout would
 * be 16, and a late call (a gap under M/2) halves the period, adding a
 * few. The period is a count of calls: a heavy load that follows still
 * makes the wait climb.
 */
TEST_F(adapt, far_load_measures_ever_less)
{
	long waits0, waits, cur;
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 124, 1, 80000));
	waits0 = module_waits();
	ASSERT_LE(0, waits0) TH_LOG("no min_wait_waits in the module's counters");
	r = run_calls(self->epfd, 124, 2000);
	waits = module_waits() - waits0;
	TH_LOG("%d calls, %ld entered the module", r.calls, waits);
	EXPECT_EQ(124, r.calls);
	EXPECT_EQ(0, r.max_current);
	EXPECT_LE(4, waits) TH_LOG("calls stopped measuring");
	EXPECT_GE(9, waits);

	ASSERT_EQ(0, pace(self, 0, 1, 2000));
	cur = climb(self->epfd);
	EXPECT_LT(0, cur) TH_LOG("the heavy load did not make the wait climb");
}

/*
 * Past 64 the period goes on doubling, up to one call in 256: with gaps
 * of 40 ms (M/2 is 25 ms), calls 1, 9, 25, 57, 121, 249 and 505 measure,
 * and the 255 calls between the last two are all plain ones, where a
 * period capped at 64 would measure calls 313, 377 and 441.
 */
#define SPARSE_M_US	50000
#define SPARSE_GAP_US	40000

TEST_F_TIMEOUT(adapt, far_load_measures_one_call_in_256, 60)
{
	long waits0, waits;
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, SPARSE_M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 1, SPARSE_GAP_US));
	r = run_calls(self->epfd, 249, 2000);
	ASSERT_EQ(249, r.calls);
	waits0 = module_waits();
	ASSERT_LE(0, waits0) TH_LOG("no min_wait_waits in the module's counters");
	r = run_calls(self->epfd, 255, 2000);
	waits = module_waits() - waits0;
	TH_LOG("calls 250 to 504: %d returned, %ld entered the module",
	       r.calls, waits);
	EXPECT_EQ(255, r.calls);
	EXPECT_EQ(0, r.max_current);
	/*
	 * A host stall that makes one measure before the 249th see a gap
	 * under M/2 halves the period: one of its measures lands here.
	 */
	EXPECT_GE(1, waits);
}

/*
 * Arrivals at random have near gaps among far ones, and a sparse measure
 * that sees one stands for the calls it skipped: not wholly, or the
 * average would be that gap, and the wait would climb to batch a load
 * whose average gap is over M/2. Calls 1, 9, 25 and 57 measure (far gaps
 * of 80 ms, M/2 is 50 ms); the writes for calls 55 to 59 come 10 ms after
 * the one before (under M/4, where the wait climbs). A call that finds
 * its event ready does not measure, and the next one does: at least one
 * of them must have entered the module, or the test proves nothing.
 */
#define NEAR_CALLS	72
#define NEAR_FIRST	55
#define NEAR_LAST	59

TEST_F_TIMEOUT(adapt, near_gaps_among_far_ones_stay_at_zero, 60)
{
	/* The pacer may outlive this frame if a call fails: not on it. */
	static long gaps_us[NEAR_CALLS];
	struct run before, near, after;
	long waits0, waits;
	int i;

	for (i = 0; i < NEAR_CALLS; i++)
		gaps_us[i] = i + 1 >= NEAR_FIRST && i + 1 <= NEAR_LAST ?
			     10000 : 80000;
	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace_gaps(self, NEAR_CALLS, 1, 0, gaps_us));
	before = run_calls(self->epfd, NEAR_FIRST - 1, 2000);
	waits0 = module_waits();
	ASSERT_LE(0, waits0) TH_LOG("no min_wait_waits in the module's counters");
	near = run_calls(self->epfd, NEAR_LAST - NEAR_FIRST + 1, 2000);
	waits = module_waits() - waits0;
	after = run_calls(self->epfd, NEAR_CALLS - NEAR_LAST, 2000);
	TH_LOG("%d events; calls %d to %d: %ld entered the module; wait up to %d, %d, %d us",
	       before.events + near.events + after.events, NEAR_FIRST,
	       NEAR_LAST, waits, before.max_current, near.max_current,
	       after.max_current);
	if (!waits)
		SKIP(return, "no call measured a near gap: each found its event ready");
	EXPECT_EQ(NEAR_CALLS, before.events + near.events + after.events);
	EXPECT_EQ(0, before.max_current);
	EXPECT_EQ(0, near.max_current) TH_LOG("a near gap made the wait climb");
	EXPECT_EQ(0, after.max_current) TH_LOG("a near gap made the wait climb");
}

/* A new value starts again from no wait. */
TEST_F(adapt, new_value_resets)
{
	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 1, 2000));
	ASSERT_LT(0, climb(self->epfd));
	ASSERT_EQ(M_US, set_min_wait(self->epfd, 50 | ADAPTIVE));
	EXPECT_EQ(0, fdinfo_current(self->epfd));
	run_calls(self->epfd, 20, 2000);
	EXPECT_GE(50, fdinfo_current(self->epfd)) TH_LOG("above the ceiling");
}

/*
 * A fixed value after the adaptive wait left calls plain (a light load,
 * gaps of 80 ms, well over the M/2 past which only one call in 8
 * measures): every call waits the fixed M again. The event is ready when
 * each call starts; it returns after M, not at once.
 */
TEST_F(adapt, fixed_value_after_plain_calls_holds)
{
	struct epoll_event ev[64];
	int i, n;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 10, 1, 80000));
	run_calls(self->epfd, 10, 2000);
	ASSERT_EQ(0, fdinfo_current(self->epfd));
	ASSERT_EQ(M_US, set_min_wait(self->epfd, M_US));
	for (i = 0; i < 8; i++) {
		int64_t t0 = now_ns(), ms;

		efd_signal(self->efd[0]);
		n = epoll_wait(self->epfd, ev, 64, 2000);
		ms = (now_ns() - t0) / 1000000;
		efd_drain(self->efd[0]);
		EXPECT_EQ(1, n);
		EXPECT_LE(M_US / 1000 / 2, ms)
			TH_LOG("call %d returned after %lld ms, M %d ms", i,
			       (long long)ms, M_US / 1000);
	}
}

/*
 * After climbing, bursts of two 150 ms apart: each call's wait (timed
 * from its start) ends idle, before the burst. That is not a batch: the
 * gaps it measures raise the average (weight 1/8) past M and drop w to 0.
 * From an average of 2 ms that takes 9 waits with gaps of 150 ms, 11 with
 * 130 ms (a slow kernel enters each call later after its burst); 20 is
 * enough down to gaps of 108 ms.
 */
TEST_F(adapt, idle_waits_drop_it)
{
	int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 1, 2000));
	ASSERT_LT(0, climb(self->epfd));
	ASSERT_EQ(0, pace(self, 0, 2, 150000));
	for (i = 0; i < 20 && fdinfo_current(self->epfd); i++)
		run_calls(self->epfd, 1, 2000);
	EXPECT_EQ(0, fdinfo_current(self->epfd))
		TH_LOG("still waiting %ld us after %d idle waits",
		       fdinfo_current(self->epfd), i);
}

/* A call in progress when the value changes reports nothing to the new. */
struct looper {
	pthread_t th;
	int epfd;
	volatile bool stop;
};

static void *looper_fn(void *arg)
{
	struct looper *l = arg;

	while (!l->stop)
		run_calls(l->epfd, 1, 300);
	return NULL;
}

TEST_F(adapt, new_value_forgets_calls_in_progress)
{
	struct looper l = { .epfd = self->epfd };
	int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 1, 2000));
	ASSERT_EQ(0, pthread_create(&l.th, NULL, looper_fn, &l));
	for (i = 0; i < 100 && fdinfo_current(self->epfd) < 8000; i++)
		usleep(20000);
	ASSERT_LE(8000, fdinfo_current(self->epfd));
	/* Stop the load, then replace the value under a call in its wait. */
	self->pacer.stop = true;
	pthread_join(self->pacer.th, NULL);
	self->pacing = false;
	ASSERT_EQ(M_US, set_min_wait(self->epfd, (M_US - 1) | ADAPTIVE));
	usleep(3 * M_US);
	l.stop = true;
	pthread_join(l.th, NULL);
	EXPECT_EQ(0, fdinfo_current(self->epfd));
}

static int pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Sets K, a new value each time or B and back to A, until stopped. */
struct k_setter {
	pthread_t th;
	int epfd;
	int sets;
	bool and_back;
	volatile bool stop;
};

static void *k_setter_fn(void *arg)
{
	struct k_setter *t = arg;

	/* Above the waiter on its CPU: both sets come before it runs. */
	if (t->and_back) {
		struct sched_param sp = { .sched_priority = 10 };

		if (pin_to_cpu0() || sched_setscheduler(0, SCHED_FIFO, &sp))
			return NULL;
	}
	while (!t->stop) {
		usleep(1000);
		if (t->and_back) {
			if (set_min_events(t->epfd, 3) >= 0 &&
			    set_min_events(t->epfd, 2) >= 0)
				t->sets++;
		} else if (set_min_events(t->epfd, 2 + t->sets % 1000) >= 0) {
			t->sets++;
		}
	}
	return NULL;
}

/* 40 calls of 20 ms on an idle instance while @t sets K. */
static struct run run_calls_with_k_setter(struct k_setter *t)
{
	struct run r = { 0 };

	if (pthread_create(&t->th, NULL, k_setter_fn, t))
		return r;
	r = run_calls(t->epfd, 40, 20);
	t->stop = true;
	pthread_join(t->th, NULL);
	return r;
}

/*
 * A new K wakes a call at a wait of 0 to read the values again, but no
 * event came: it is no gap to measure, and the wait never climbs.
 */
TEST_F(adapt, new_min_events_is_no_event)
{
	struct k_setter t = { .epfd = self->epfd };
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	r = run_calls_with_k_setter(&t);
	ASSERT_LT(40, t.sets);
	EXPECT_EQ(0, r.events);
	EXPECT_EQ(0, r.max_current)
		TH_LOG("climbed to %d us on %d new K values, no event",
		       r.max_current, t.sets);
}

/*
 * K set to B and back to A before the woken call runs: the values it
 * reads again are those it slept with, and still no event came.
 */
TEST_F(adapt, min_events_set_and_back_is_no_event)
{
	struct k_setter t = { .epfd = self->epfd, .and_back = true };
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_LE(0, set_min_events(self->epfd, 2));
	ASSERT_EQ(0, pin_to_cpu0());
	r = run_calls_with_k_setter(&t);
	ASSERT_LT(40, t.sets);
	EXPECT_EQ(0, r.events);
	EXPECT_EQ(0, r.max_current)
		TH_LOG("climbed to %d us on %d K set and back, no event",
		       r.max_current, t.sets);
}

/*
 * A new K is nothing to a call sleeping to its first event at a wait of
 * 0: it is not woken for it.
 */
TEST_F(adapt, new_min_events_wakes_no_call_at_zero)
{
	struct timed t = { .epfd = self->epfd, .maxevents = 8,
			   .timeout = 400 };

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, wait_through_new_min_events(&t));
	EXPECT_EQ(0, t.ret);
	EXPECT_GE(2, t.nvcsw) TH_LOG("%ld voluntary context switches on 50 new K values",
				     t.nvcsw);
}

/* Polls the instance in a loop until stopped: scans with nothing ready. */
struct poller {
	pthread_t th;
	int epfd;
	long polls;
	volatile bool stop;
};

static void *poller_fn(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->epfd, .events = POLLIN };

	while (!p->stop) {
		if (poll(&pfd, 1, 0) < 0)
			break;
		p->polls++;
	}
	return NULL;
}

/*
 * Other threads' poll() of the instance scan an empty ready list: to a
 * call at a wait of 0, events look available while a scan runs, but none
 * came, and the wait never climbs. Many short calls, each of which
 * enters the module, meet many scans.
 */
TEST_F(adapt, poll_of_the_instance_is_no_event)
{
	struct poller p[2] = { { .epfd = self->epfd },
			       { .epfd = self->epfd } };
	struct run r;
	int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&p[i].th, NULL, poller_fn, &p[i]));
	r = run_calls(self->epfd, 400, 1);
	for (i = 0; i < 2; i++) {
		p[i].stop = true;
		pthread_join(p[i].th, NULL);
	}
	ASSERT_LT(1000, p[0].polls + p[1].polls);
	EXPECT_EQ(0, r.events);
	EXPECT_EQ(0, r.max_current)
		TH_LOG("climbed to %d us on %ld polls, no event",
		       r.max_current, p[0].polls + p[1].polls);
}

/* A closed loop of clients, each waiting for its reply. */
#define NR_CLIENTS	4

struct client {
	pthread_t th;
	int req;		/* eventfd the server watches */
	int reply;		/* blocking eventfd the client reads */
	int rounds;
	int parts;		/* writes per request */
	uint64_t pending;	/* parts the server has read */
};

static void *client_fn(void *arg)
{
	struct client *c = arg;
	uint64_t v;
	int i, j;

	for (i = 0; i < c->rounds; i++) {
		for (j = 0; j < c->parts; j++)
			efd_signal(c->req);
		if (read(c->reply, &v, sizeof(v)) != sizeof(v))
			break;
	}
	return NULL;
}

/*
 * Serve until every client is done: events per call, elapsed ms, and the
 * largest wait fdinfo showed (every 16 calls).
 */
static double serve(int epfd, int rounds, int64_t *ms, long *current)
{
	struct epoll_event ev[64];
	long served = 0, calls = 0;
	int64_t t0 = now_ns();
	int i, n;

	*current = 0;
	while (served < (long)NR_CLIENTS * rounds) {
		n = epoll_wait(epfd, ev, 64, 5000);
		if (n <= 0)
			break;
		if (!(++calls % 16)) {
			long cur = fdinfo_current(epfd);

			if (cur > *current)
				*current = cur;
		}
		for (i = 0; i < n; i++) {
			struct client *c = ev[i].data.ptr;
			uint64_t v;

			/* A request is served once all its parts are in. */
			if (read(c->req, &v, sizeof(v)) != sizeof(v))
				continue;
			for (c->pending += v; c->pending >= (uint64_t)c->parts;
			     c->pending -= c->parts) {
				efd_signal(c->reply);
				served++;
			}
		}
	}
	*ms = (now_ns() - t0) / 1000000;
	return calls ? (double)served / calls : 0;
}

/*
 * @rounds of the closed loop on @epfd, each request written in @parts;
 * events per call as serve().
 */
static double closed_loop_parts(struct __test_metadata *_metadata, int epfd,
				int rounds, int parts, int64_t *ms,
				long *current)
{
	struct client cl[NR_CLIENTS];
	double per_call;
	int i;

	for (i = 0; i < NR_CLIENTS; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = &cl[i] };

		cl[i].req = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		cl[i].reply = eventfd(0, EFD_CLOEXEC);
		cl[i].rounds = rounds;
		cl[i].parts = parts;
		cl[i].pending = 0;
		EXPECT_EQ(0, epoll_ctl(epfd, EPOLL_CTL_ADD, cl[i].req, &e));
	}
	for (i = 0; i < NR_CLIENTS; i++)
		EXPECT_EQ(0, pthread_create(&cl[i].th, NULL, client_fn, &cl[i]));
	per_call = serve(epfd, rounds, ms, current);
	for (i = 0; i < NR_CLIENTS; i++) {
		pthread_join(cl[i].th, NULL);
		close(cl[i].req);
		close(cl[i].reply);
	}
	return per_call;
}

static double closed_loop_on(struct __test_metadata *_metadata, int epfd,
			     int rounds, int64_t *ms, long *current)
{
	return closed_loop_parts(_metadata, epfd, rounds, 1, ms, current);
}

static double closed_loop(struct __test_metadata *_metadata, uint64_t value,
			  int rounds, int parts, int64_t *ms, long *current)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	double per_call;

	EXPECT_LE(0, epfd);
	EXPECT_EQ(0, set_min_wait(epfd, value));
	per_call = closed_loop_parts(_metadata, epfd, rounds, parts, ms,
				     current);
	close(epfd);
	return per_call;
}

/*
 * Under TCG the guest's threads stall now and then (the host runs several
 * vCPUs per core, and RCU frees what an earlier test closed): a stall in
 * the clients' replies ends a wait with one event, the wait falls to 0
 * and backs off, and a run of 400 rounds can end before it climbs again.
 * That is the policy at work; these tests ask whether it learns a batch
 * at all, so a closed loop gets up to LEARN_TRIES runs, each on a fresh
 * instance and against plain epoll_wait() in the run just before it.
 */
#define LEARN_TRIES	3
#define LEARN_ROUNDS	400
#define LEARN_M_US	20000
/* Half of what waiting out M on every round takes. */
#define LEARN_HALF_MS	(LEARN_ROUNDS * (LEARN_M_US / 1000) / 2)

/*
 * A fixed M would hold every round for M (a closed loop has nothing more
 * to send); the adaptive wait learns to end at the clients' number: it
 * waits, batches more than plain epoll_wait(), and the rounds take less
 * than half of M each.
 */
static void learns_the_batch(struct __test_metadata *_metadata, int parts)
{
	int64_t plain_ms, adapt_ms = 0;
	double plain = 0, adapt = 0;
	long cur = 0;
	int try;

	for (try = 1; try <= LEARN_TRIES; try++) {
		plain = closed_loop(_metadata, 0, LEARN_ROUNDS, parts,
				    &plain_ms, &cur);
		adapt = closed_loop(_metadata, LEARN_M_US | ADAPTIVE,
				    LEARN_ROUNDS, parts, &adapt_ms, &cur);
		TH_LOG("try %d: plain: %.2f events/call, %lld ms for %d rounds; adaptive (M = %d ms): %.2f, %lld ms, waits up to %ld us",
		       try, plain, (long long)plain_ms, LEARN_ROUNDS,
		       LEARN_M_US / 1000, adapt, (long long)adapt_ms, cur);
		if (cur > 0 && adapt > 1.1 * plain && adapt_ms < LEARN_HALF_MS)
			return;
	}
	EXPECT_LT(0, cur) TH_LOG("it never waited");
	EXPECT_LT(1.1 * plain, adapt) TH_LOG("it batched no more than plain");
	EXPECT_GT(LEARN_HALF_MS, adapt_ms) TH_LOG("M was waited out");
}

/* A failure takes LEARN_TRIES runs that wait out M: over 24 s. */
TEST_F_TIMEOUT(adapt, closed_loop_learns_the_batch, 90)
{
	learns_the_batch(_metadata, 1);
}

/*
 * Clients that write each request in two parts wake their items again
 * while they are ready, in every batch: no more comes in a wait that
 * runs out than in one that ends at the batch, per unit of time, and the
 * loop is no stream to the adaptive wait, which still learns its batch.
 */
TEST_F_TIMEOUT(adapt, closed_loop_in_parts_learns_the_batch, 90)
{
	learns_the_batch(_metadata, 2);
}

/*
 * A steady stream (an event every 3 ms against M = 20 ms) takes the wait
 * to the ceiling, where it ends by time alone. A closed loop on the same
 * instance then still learns its batch: after the tries of an earlier end
 * (at most every 64 waits, two of them: the first at the stream's batch)
 * it no longer waits out M each round, as it did for good when a wait
 * that ran out at M ended every later one by time.
 */
#define CEIL_M_US	20000
#define CEIL_WARM	300
#define CEIL_ROUNDS	200
/*
 * Some 20 calls take the stream to M; on a KASAN guest of a loaded host
 * its waits once fell, and tired, often enough to take over 200.
 */
#define CEIL_CLIMB_CALLS	1000

TEST_F_TIMEOUT(adapt, closed_loop_leaves_the_ceiling, 90)
{
	int64_t ms;
	double per_call;
	struct run r;
	long cur;
	int i;

	ASSERT_EQ(0, set_min_wait(self->epfd, CEIL_M_US | ADAPTIVE));
	ASSERT_EQ(0, pace(self, 0, 1, 3000));
	for (i = 0; i < CEIL_CLIMB_CALLS &&
	     fdinfo_current(self->epfd) < CEIL_M_US; i++)
		run_calls(self->epfd, 1, 2000);
	ASSERT_EQ(CEIL_M_US, fdinfo_current(self->epfd))
		TH_LOG("the stream did not take the wait to M in %d calls", i);
	TH_LOG("the stream took the wait to M in %d calls", i);
	/*
	 * On at M, past the tries of an earlier end that it fails, it
	 * batches what M holds (6 to 7 events), not an early end's. A
	 * pacer late on a loaded host thins a run: up to LEARN_TRIES runs.
	 */
	for (i = 1; i <= LEARN_TRIES; i++) {
		r = run_calls(self->epfd, 40, 2000);
		ASSERT_LT(0, r.calls);
		TH_LOG("stream at M: %.2f events/call",
		       (double)r.events / r.calls);
		if (4 * r.calls <= r.events)
			break;
	}
	EXPECT_LE(4 * r.calls, r.events);
	self->pacer.stop = true;
	pthread_join(self->pacer.th, NULL);
	self->pacing = false;
	run_calls(self->epfd, 1, 0);

	per_call = closed_loop_on(_metadata, self->epfd, CEIL_WARM, &ms, &cur);
	TH_LOG("closed loop of %d, first %d rounds: %.2f events/call, %lld ms",
	       NR_CLIENTS, CEIL_WARM, per_call, (long long)ms);
	/*
	 * Stalls, as in learns_the_batch(): up to LEARN_TRIES runs, on the
	 * same instance, so each adds to what the wait learnt before.
	 */
	for (i = 1; i <= LEARN_TRIES; i++) {
		per_call = closed_loop_on(_metadata, self->epfd, CEIL_ROUNDS,
					  &ms, &cur);
		TH_LOG("then %d rounds: %.2f events/call, %lld ms (M = %d ms)",
		       CEIL_ROUNDS, per_call, (long long)ms, CEIL_M_US / 1000);
		if (per_call >= 2.0 &&
		    (int64_t)CEIL_ROUNDS * CEIL_M_US / 1000 / 2 > ms)
			break;
	}
	EXPECT_LE(2.0, per_call) TH_LOG("no batches");
	/* Under half of M a round: the rounds are not timed by M. */
	EXPECT_GT((int64_t)CEIL_ROUNDS * CEIL_M_US / 1000 / 2, ms);
}

/*
 * A closed loop whose batch the wait has learnt: every so many batches
 * that came early it tries one more (a new client would show), and a try
 * that runs out holds every client for its wait. Each that fails doubles
 * the period, up to 256 early batches; here, 4 clients under TCG, that
 * is 11 to 31 probes in some 4,000 calls that sleep, most of them while
 * the period grows, and again after a stall makes the wait fall and
 * learn the batch anew. The bound, one in PROBE_WAITS, fails a period
 * capped at 16 (one in 40 to 54 here).
 */
#define PROBE_ROUNDS	4096
#define PROBE_WAITS	64

/* Should every round wait out M: 4096 rounds of 20 ms, 82 s. */
TEST_F_TIMEOUT(adapt, closed_loop_probes_seldom, 150)
{
	long waits0, out0, waits, out, cur;
	double per_call;
	int64_t ms;

	ASSERT_EQ(0, set_min_wait(self->epfd, LEARN_M_US | ADAPTIVE));
	waits0 = module_waits();
	out0 = module_counter("min_wait_probes_out");
	ASSERT_LE(0, waits0) TH_LOG("no min_wait_waits in the module's counters");
	ASSERT_LE(0, out0) TH_LOG("no min_wait_probes_out in the module's counters");
	per_call = closed_loop_on(_metadata, self->epfd, PROBE_ROUNDS, &ms,
				  &cur);
	waits = module_waits();
	out = module_counter("min_wait_probes_out");
	ASSERT_LE(waits0, waits);
	ASSERT_LE(out0, out);
	waits -= waits0;
	out -= out0;
	TH_LOG("%d rounds of %d clients: %.2f events/call, %lld ms, %ld calls slept, %ld probes ran out",
	       PROBE_ROUNDS, NR_CLIENTS, per_call, (long long)ms, waits, out);
	EXPECT_LT(1.5, per_call) TH_LOG("it did not learn the batch");
	/* The period starts at 4: the first probes come within 28 batches. */
	EXPECT_LT(0, out) TH_LOG("no probe ran out, or none was counted");
	EXPECT_GE(waits, PROBE_WAITS * out)
		TH_LOG("a probe ran out more often than once in %d waits",
		       PROBE_WAITS);
}

/*
 * A stream on few items: 4 eventfds written in turn every 3 ms against
 * M = 30 ms. All 4 are ready at 0.4 M, as a closed loop of 4 clients
 * would be, but a wait that runs out at M takes about 10 writes, the
 * later ones to items already ready. The wait learns to end by time, not
 * at the fourth item: more writes per call. The module before epoll
 * counted ready wakes ended it at the fourth (4 writes per call).
 */
#define FEW_ITEMS	4
#define FEW_GAP_US	3000
#define FEW_M_US	30000

/*
 * Writes (eventfd counts) per call over @calls blocking calls, and the
 * writes that came per M meanwhile.
 */
static double writes_per_call(int epfd, int calls, double *per_m)
{
	struct epoll_event ev[64];
	long writes = 0, got = 0;
	int64_t t0 = now_ns();
	int i, j, n;

	for (i = 0; i < calls; i++) {
		n = epoll_wait(epfd, ev, 64, 2000);
		for (j = 0; j < n; j++) {
			uint64_t v;

			if (read(ev[j].data.fd, &v, sizeof(v)) == sizeof(v))
				writes += v;
		}
		got += n > 0;
	}
	*per_m = (double)writes * FEW_M_US * 1000 / (now_ns() - t0);
	return got ? (double)writes / got : 0;
}

TEST(stream_on_few_items_waits_out_m)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC), efd[FEW_ITEMS], i;
	struct pacer p = {
		.efd = efd, .items = FEW_ITEMS, .burst = 1,
		.gap_us = FEW_GAP_US,
	};
	double warm, per_call, per_m;

	ASSERT_MODULE();
	ASSERT_LE(0, epfd);
	for (i = 0; i < FEW_ITEMS; i++) {
		efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, efd[i]);
		ASSERT_EQ(0, add_fd(epfd, efd[i], EPOLLIN));
	}
	ASSERT_EQ(0, set_min_wait(epfd, FEW_M_US | ADAPTIVE));
	ASSERT_EQ(0, pthread_create(&p.th, NULL, pacer_fn, &p));
	/* Past the climb and the tries of a fifth item (every 4 to 64). */
	warm = writes_per_call(epfd, 200, &per_m);
	per_call = writes_per_call(epfd, 100, &per_m);
	p.stop = true;
	pthread_join(p.th, NULL);
	TH_LOG("writes per call: %.2f warming up, then %.2f; %.2f per M; wait %ld us",
	       warm, per_call, per_m, fdinfo_current(epfd));
	/*
	 * Timed by M: what came per M (10), or more; ended at the fourth
	 * item: 4. A writer too slow for 6 per M has its fourth come late,
	 * near 4M/5, when any module may wait out M: no test.
	 */
	if (per_m < 6) {
		close(epfd);
		for (i = 0; i < FEW_ITEMS; i++)
			close(efd[i]);
		SKIP(return, "the writer managed %.2f writes per M", per_m);
	}
	EXPECT_LE(4 + 0.6 * (per_m - 4), per_call);
	close(epfd);
	for (i = 0; i < FEW_ITEMS; i++)
		close(efd[i]);
}

/* K ends the adaptive wait early, as it ends a fixed one. */
TEST_F(adapt, min_events_ends_it)
{
	struct run r;

	ASSERT_EQ(0, set_min_wait(self->epfd, M_US | ADAPTIVE));
	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	ASSERT_EQ(0, pace(self, 0, 1, 2000));
	ASSERT_LT(0, climb(self->epfd));
	r = run_calls(self->epfd, 40, 2000);
	EXPECT_LT(0, r.max_current) TH_LOG("never waited");
	EXPECT_GE(r.calls * 3, r.events) TH_LOG("K = 2 did not end the wait");
}

TEST_HARNESS_MAIN
