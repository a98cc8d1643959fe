// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of waking a waiter inside its minimum wait (SPEC section 2,
 * "Cost and fairness"): each wakeup is O(1), so making N items ready costs
 * O(N) with a minimum wait as without one. The worst case: one eventfd
 * dup()ed N times, every dup registered in one epoll instance, waiter
 * threads asleep in epoll_wait() with maxevents > N; one write() to the
 * eventfd runs N wakeup callbacks with the eventfd's lock held and
 * interrupts off. That write() with a 1 s minimum wait must cost at most
 * RATIO_MAX times the same write() without one: a ratio in one run (the
 * fastest of ROUNDS interleaved rounds each), never an absolute time.
 *
 * NUMAB_DUP_STORM_N sets N (default 8192); make check-debug also runs it
 * at 65536, where a walk per wakeup would hold interrupts off for minutes
 * (a soft lockup or an RCU stall report).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define DEFAULT_N	8192
#define MIN_WAIT_US	1000000
#define ROUNDS		3
#define RATIO_MAX	3
#define MAX_WAITERS	4
#define WAIT_TIMEOUT_MS	10000

struct storm_waiter {
	pthread_t th;
	pid_t tid;
	int epfd;
	int maxevents;
	struct epoll_event *ev;
	int ret;
	int err;
	int64_t start_ns;
	int64_t end_ns;
};

static void *storm_wait_fn(void *arg)
{
	struct storm_waiter *w = arg;

	__atomic_store_n(&w->tid, numab_gettid(), __ATOMIC_RELEASE);
	w->start_ns = numab_now_ns();
	w->ret = epoll_wait(w->epfd, w->ev, w->maxevents, WAIT_TIMEOUT_MS);
	w->err = errno;
	w->end_ns = numab_now_ns();
	return NULL;
}

FIXTURE(storm) {
	int n;
	int epfd;
	int efd;
	int *dups;
	int ndups;
	struct storm_waiter w[MAX_WAITERS];
};

FIXTURE_VARIANT(storm) {
	int waiters;
};

FIXTURE_VARIANT_ADD(storm, one_waiter) {
	.waiters = 1,
};

FIXTURE_VARIANT_ADD(storm, four_waiters) {
	.waiters = 4,
};

FIXTURE_SETUP(storm)
{
	const char *env = getenv("NUMAB_DUP_STORM_N");
	struct rlimit rl;
	int i;

	ASSERT_MODULE();
	self->n = env && *env ? atoi(env) : DEFAULT_N;
	ASSERT_LT(0, self->n) TH_LOG("NUMAB_DUP_STORM_N=%s", env);
	rl.rlim_cur = rl.rlim_max = self->n + 64;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl))
		TH_LOG("RLIMIT_NOFILE %d: %s", self->n + 64, strerror(errno));

	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->epfd);
	ASSERT_LE(0, self->efd);
	self->dups = calloc(self->n, sizeof(*self->dups));
	ASSERT_NE(NULL, self->dups);
	for (i = 0; i < self->n; i++) {
		self->dups[i] = fcntl(self->efd, F_DUPFD_CLOEXEC, 0);
		ASSERT_LE(0, self->dups[i]) TH_LOG("dup %d: %s", i,
						   strerror(errno));
		self->ndups++;
		ASSERT_EQ(0, add_fd(self->epfd, self->dups[i], EPOLLIN))
			TH_LOG("EPOLL_CTL_ADD of dup %d: %s", i,
			       strerror(errno));
	}
	for (i = 0; i < variant->waiters; i++) {
		self->w[i].epfd = self->epfd;
		self->w[i].maxevents = self->n + 1;
		self->w[i].ev = calloc(self->n + 1, sizeof(*self->w[i].ev));
		ASSERT_NE(NULL, self->w[i].ev);
	}
}

FIXTURE_TEARDOWN(storm)
{
	int i;

	for (i = 0; i < MAX_WAITERS; i++)
		free(self->w[i].ev);
	for (i = 0; i < self->ndups; i++)
		close(self->dups[i]);
	free(self->dups);
	close(self->epfd);
	close(self->efd);
}

/*
 * One round: the waiters asleep in epoll_wait() with @min_wait_us, one
 * write(); returns how long the write() took, in ns (-1 on a setup
 * failure, reported).
 */
static int64_t storm_round(struct __test_metadata *_metadata,
			   FIXTURE_DATA(storm) *self, int waiters,
			   long min_wait_us)
{
	struct epoll_event none;
	int64_t t0, t1, first_start = INT64_MAX;
	int i;

	if (set_min_wait(self->epfd, min_wait_us) < 0)
		return -1;
	/* no readiness left from the last round: not readable, none queued */
	efd_drain(self->efd);
	if (epoll_wait(self->epfd, &none, 1, 0) != 0)
		return -1;

	for (i = 0; i < waiters; i++) {
		self->w[i].tid = 0;
		if (pthread_create(&self->w[i].th, NULL, storm_wait_fn,
				   &self->w[i]))
			return -1;
	}
	for (i = 0; i < waiters; i++) {
		while (!__atomic_load_n(&self->w[i].tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		if (!thread_sleeps(self->w[i].tid, 5000))
			TH_LOG("waiter %d did not go to sleep", i);
		if (self->w[i].start_ns < first_start)
			first_start = self->w[i].start_ns;
	}

	t0 = numab_now_ns();
	efd_signal(self->efd);
	t1 = numab_now_ns();

	for (i = 0; i < waiters; i++)
		pthread_join(self->w[i].th, NULL);
	/* the write came while every waiter was inside its minimum wait */
	if (min_wait_us)
		EXPECT_GT(first_start + min_wait_us * 1000, t0)
			TH_LOG("the waiters' minimum wait was over before the write: setup too slow");
	for (i = 0; i < waiters; i++) {
		EXPECT_LT(0, self->w[i].ret) TH_LOG("waiter %d: %d (%s)", i,
						    self->w[i].ret,
						    strerror(self->w[i].err));
		if (min_wait_us)
			EXPECT_LE(min_wait_us * 1000,
				  self->w[i].end_ns - self->w[i].start_ns)
				TH_LOG("waiter %d left its minimum wait early",
				       i);
	}
	return t1 - t0;
}

TEST_F_TIMEOUT(storm, write_cost_with_min_wait, 900)
{
	int64_t plain = INT64_MAX, with = INT64_MAX, ns;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		ns = storm_round(_metadata, self, variant->waiters, 0);
		ASSERT_LT(0, ns) TH_LOG("round %d without a min-wait", r);
		if (ns < plain)
			plain = ns;
		ns = storm_round(_metadata, self, variant->waiters,
				 MIN_WAIT_US);
		ASSERT_LT(0, ns) TH_LOG("round %d with a min-wait", r);
		if (ns < with)
			with = ns;
	}
	ksft_print_msg("N=%d, %d waiter(s): write() %.2f ms without a min-wait, %.2f ms with %d ms (fastest of %d): %.1fx\n",
		       self->n, variant->waiters, plain / 1e6, with / 1e6,
		       MIN_WAIT_US / 1000, ROUNDS, (double)with / plain);
	fflush(stdout);
	EXPECT_GE(RATIO_MAX * plain, with)
		TH_LOG("one write() costs %.1fx with a min-wait (at most %dx)",
		       (double)with / plain, RATIO_MAX);
}

TEST_HARNESS_MAIN
