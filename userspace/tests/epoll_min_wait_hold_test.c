// SPDX-License-Identifier: GPL-2.0
/*
 * What may and may not hold a blocking epoll_wait() back in its minimum
 * wait: items linked on the ready list that are not ready (stale) neither
 * count towards the batch nor start a wait timed from the first event; a
 * waiter whose batch is complete (maxevents 1, or one that entered before
 * the instance had a minimum wait) is not held by another waiter's; of
 * two waiters holding batches, the smaller batch is served first, whatever
 * the order in which they went to sleep; a cleared minimum wait or a
 * lowered batch target applies to the waiters already asleep, and a value
 * that would hold them longer only from their next call; a holder killed
 * while it holds, or a waiter past its minimum wait, does not leave an
 * event to another's batch; an event that
 * comes while the call scans the ready list counts; a fault in the copy
 * to the caller returns what was copied, as plain epoll does; a call that
 * returns 0 leaves the caller's buffer as it was; the minimum wait is
 * timed from the call's entry, not from the end of its first scan; an
 * event wakes one of many waiters for their first event, not each in
 * turn; 64 waiters inside their minimum wait do not make an event
 * dearer; and thousands waiting for their first event make neither a
 * short batch nor a new K dearer.
 * EPOLLEXCLUSIVE is in epoll_min_wait_test.c.
 *
 * Every check is a count, an order, or a time compared with the minimum
 * wait M (or with a cost measured in the same run) with wide margins: the
 * guest runs under TCG on a busy host. M is hundreds of milliseconds.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define AFTER_FIRST	EPOLL_MIN_WAIT_AFTER_FIRST
#define NS_PER_MS	1000000LL
#define WIDE		64	/* maxevents of a waiter that wants a batch */
#define NR_HOLD_WAITERS	2

/* --- helpers -------------------------------------------------------------- */

/* Whether the instances take EPOLL_CTL_MIN_WAIT: EINVAL without the module. */
static bool min_wait_supported(void)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	long ret;

	if (epfd < 0)
		return false;
	ret = set_min_wait(epfd, 0);
	close(epfd);
	return ret == 0;
}

#define SKIP_WITHOUT_MIN_WAIT() do {					\
	if (!min_wait_supported())					\
		SKIP(return, "EPOLL_CTL_MIN_WAIT: EINVAL: %s",		\
		     NUMAB_MSG_NO_MODULE);				\
} while (0)

static void sleep_until_ns(int64_t at_ns)
{
	struct timespec ts = {
		.tv_sec = at_ns / 1000000000LL,
		.tv_nsec = at_ns % 1000000000LL,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static double ms_of(int64_t ns)
{
	return ns / 1e6;
}

/*
 * A blocking epoll_wait() in a thread, with room for WIDE events (struct
 * timed of epoll_test_util.h has room for 8).
 */
struct wide {
	pthread_t th;
	bool started;
	int epfd;
	int maxevents;
	int timeout;
	pid_t tid;
	int ret;
	int err;
	int64_t start_ns;
	int64_t end_ns;
	struct epoll_event ev[WIDE];
};

static void *wide_fn(void *arg)
{
	struct wide *w = arg;

	w->start_ns = numab_now_ns();
	__atomic_store_n(&w->tid, numab_gettid(), __ATOMIC_RELEASE);
	w->ret = epoll_wait(w->epfd, w->ev, w->maxevents, w->timeout);
	w->err = errno;
	w->end_ns = numab_now_ns();
	return NULL;
}

/* Start the wait; w->ev is left as the caller filled it. 0 or -1. */
static int wide_spawn(struct wide *w, int epfd, int maxevents, int timeout)
{
	w->epfd = epfd;
	w->maxevents = maxevents;
	w->timeout = timeout;
	w->tid = 0;
	w->ret = -1;
	w->err = 0;
	w->start_ns = 0;
	w->end_ns = 0;
	if (pthread_create(&w->th, NULL, wide_fn, w))
		return -1;
	w->started = true;
	return 0;
}

/* Once the thread sleeps (in its epoll_wait()): 0, or -1 after 5 s. */
static int wide_asleep(struct wide *w)
{
	pid_t tid;
	int ms;

	for (ms = 0; ms < 5000; ms++) {
		tid = __atomic_load_n(&w->tid, __ATOMIC_ACQUIRE);
		if (tid)
			return thread_sleeps(tid, 5000) ? 0 : -1;
		usleep(1000);
	}
	return -1;
}

static int wide_start(struct wide *w, int epfd, int maxevents, int timeout)
{
	return wide_spawn(w, epfd, maxevents, timeout) ?: wide_asleep(w);
}

/* Every wait has a finite timeout: this returns. */
static void wide_join(struct wide *w)
{
	if (!w->started)
		return;
	pthread_join(w->th, NULL);
	w->started = false;
}

static int64_t wide_ms(const struct wide *w)
{
	return (w->end_ns - w->start_ns) / NS_PER_MS;
}

static int64_t wide_ms_after(const struct wide *w, int64_t from_ns)
{
	return (w->end_ns - from_ns) / NS_PER_MS;
}

/*
 * One eventfd dup()ed @n times, each dup registered level-triggered: one
 * write() links @n items on the ready list; read back after a scan has
 * reported some, all @n stay linked and none is ready (stale) until a
 * scan polls them.
 */
struct dups {
	int efd;
	int *fd;
	int nr;
	int cap;
};

/* Up to @n dups registered, in all: 0, or -1 with errno. */
static int dups_add(struct dups *d, int epfd, int n)
{
	if (n > d->cap) {
		errno = ENOSPC;
		return -1;
	}
	for (; d->nr < n; d->nr++) {
		d->fd[d->nr] = fcntl(d->efd, F_DUPFD_CLOEXEC, 0);
		if (d->fd[d->nr] < 0)
			return -1;
		if (add_fd(epfd, d->fd[d->nr], EPOLLIN)) {
			close(d->fd[d->nr]);
			return -1;
		}
	}
	return 0;
}

/*
 * At most @want items, and fewer than fs.epoll.max_user_watches allows
 * (ENOSPC past it: about 440,000 in a 2 GB guest), with room to spare for
 * the user's other instances.
 */
static int watches_cap(int want)
{
	long max = 0;

	if (numab_read_long("/proc/sys/fs/epoll/max_user_watches", &max))
		return want;
	max -= 4096;
	return max < want ? (int)(max > 0 ? max : 0) : want;
}

/* @n dups registered, room (and RLIMIT_NOFILE) for @cap. */
static int dups_open(struct dups *d, int epfd, int n, int cap)
{
	struct rlimit rl;

	cap = watches_cap(cap);
	if (n > cap)
		n = cap;
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->efd < 0)
		return -1;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur < (rlim_t)cap + 256) {
		rl.rlim_cur = cap + 256;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return -1;
	}
	d->fd = calloc(cap, sizeof(*d->fd));
	if (!d->fd)
		return -1;
	d->cap = cap;
	return dups_add(d, epfd, n);
}

/*
 * Make every dup's item linked and stale: write, let a non-blocking call
 * report a few (the level-triggered ones go back on the list), read back.
 * Returns what that call returned (64 expected).
 */
static int dups_make_stale(struct dups *d, int epfd)
{
	struct epoll_event ev[WIDE];
	int ret;

	efd_signal(d->efd);
	ret = epoll_wait(epfd, ev, WIDE, 0);
	efd_drain(d->efd);
	return ret;
}

/*
 * Close the dups once their instance is closed: its release drops the
 * items with cond_resched() between them, while the last close of the
 * eventfd would drop them all in one loop that never reschedules
 * (eventpoll_release_file()), a soft lockup under a debug kernel with
 * the scan fixture's hundreds of thousands of items.
 */
static void dups_close(struct dups *d)
{
	int i;

	for (i = 0; i < d->nr; i++)
		close(d->fd[i]);
	free(d->fd);
	d->fd = NULL;
	d->nr = 0;
	d->cap = 0;
	if (d->efd >= 0)
		close(d->efd);
	d->efd = -1;
}

/* --- one instance, four eventfds, two waiters ----------------------------- */

FIXTURE(hold) {
	int epfd;
	int efd[4];
	struct wide w[NR_HOLD_WAITERS];
	void *map;
	size_t map_len;
};

FIXTURE_SETUP(hold)
{
	int i;

	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	for (i = 0; i < 4; i++) {
		self->efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, self->efd[i]);
	}
}

FIXTURE_TEARDOWN(hold)
{
	int i;

	for (i = 0; i < NR_HOLD_WAITERS; i++)
		wide_join(&self->w[i]);
	if (self->map)
		munmap(self->map, self->map_len);
	if (self->epfd >= 0) {
		set_min_events(self->epfd, 0);
		set_min_wait(self->epfd, 0);
		close(self->epfd);
	}
	for (i = 0; i < 4; i++)
		close(self->efd[i]);
}

/*
 * An edge-triggered item written and read back before the call is still
 * linked on the ready list, and not ready. With K = 2 it must not make one
 * real event a complete batch: the call returns that one event at M, not
 * when it comes.
 */
TEST_F(hold, stale_et_item_does_not_count)
{
	const int m_ms = 200;
	struct wide *w = &self->w[0];
	int a = self->efd[0], b = self->efd[1];
	int64_t wrote;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, a, EPOLLIN | EPOLLET));
	ASSERT_EQ(0, add_fd(self->epfd, b, EPOLLIN | EPOLLET));
	efd_signal(a);
	efd_drain(a);
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
	ASSERT_EQ(0, set_min_events(self->epfd, 2));

	ASSERT_EQ(0, wide_start(w, self->epfd, 8, 3000))
		TH_LOG("the waiter did not go to sleep");
	sleep_until_ns(w->start_ns + 10 * NS_PER_MS);
	wrote = numab_now_ns();
	efd_signal(b);
	wide_join(w);

	ksft_print_msg("stale ET item, K 2, M %d ms: %d event(s) after %lld ms (B written at %lld ms)\n",
		       m_ms, w->ret, (long long)wide_ms(w),
		       (long long)((wrote - w->start_ns) / NS_PER_MS));
	EXPECT_EQ(1, w->ret) TH_LOG("%s", w->ret < 0 ? strerror(w->err) : "");
	if (w->ret == 1)
		EXPECT_EQ(b, w->ev[0].data.fd);
	EXPECT_LE(m_ms * 8 / 10, wide_ms(w))
		TH_LOG("returned after %lld ms, before 0.8 M: the stale item completed the batch of 2",
		       (long long)wide_ms(w));
}

/*
 * With the minimum wait timed from the first event, a stale item on the
 * ready list at the call's start is no event: the timer starts at B
 * (300 ms into the call), and C (at 350 ms) comes back with it, M after B.
 */
TEST_F(hold, stale_item_does_not_start_after_first)
{
	const int m_ms = 200;
	struct wide *w = &self->w[0];
	int a = self->efd[0], b = self->efd[1], c = self->efd[2];
	int64_t wrote_b, wrote_c;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, a, EPOLLIN | EPOLLET));
	ASSERT_EQ(0, add_fd(self->epfd, b, EPOLLIN));
	ASSERT_EQ(0, add_fd(self->epfd, c, EPOLLIN));
	efd_signal(a);
	efd_drain(a);
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000 | AFTER_FIRST));

	ASSERT_EQ(0, wide_start(w, self->epfd, 8, 3000))
		TH_LOG("the waiter did not go to sleep");
	sleep_until_ns(w->start_ns + 300 * NS_PER_MS);
	wrote_b = numab_now_ns();
	efd_signal(b);
	sleep_until_ns(w->start_ns + 350 * NS_PER_MS);
	wrote_c = numab_now_ns();
	efd_signal(c);
	wide_join(w);

	ksft_print_msg("stale item, AFTER_FIRST M %d ms: %d event(s) after %lld ms, %lld ms after B (B at %lld ms, C at %lld ms)\n",
		       m_ms, w->ret, (long long)wide_ms(w),
		       (long long)wide_ms_after(w, wrote_b),
		       (long long)((wrote_b - w->start_ns) / NS_PER_MS),
		       (long long)((wrote_c - w->start_ns) / NS_PER_MS));
	EXPECT_EQ(2, w->ret)
		TH_LOG("B and C not returned together: the stale item started the timer");
	EXPECT_LE(m_ms * 8 / 10, wide_ms_after(w, wrote_b))
		TH_LOG("returned %lld ms after B, before 0.8 M",
		       (long long)wide_ms_after(w, wrote_b));
}

/*
 * W1 (maxevents 64) holds its batch for M = 1 s. W2 sleeps on the same
 * instance with a batch that one event completes: maxevents 1, or a wait
 * that began before the instance had a minimum wait. One write: W2 must
 * have it well before M / 2, not when W1's minimum wait ends.
 */
static void other_waiter_case(struct __test_metadata *_metadata,
			      FIXTURE_DATA(hold) *self, int w2_maxevents,
			      bool w2_before_min_wait)
{
	const int m_ms = 1000;
	struct wide *w1 = &self->w[0], *w2 = &self->w[1];
	int64_t wrote;

	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	if (w2_before_min_wait) {
		ASSERT_EQ(0, wide_start(w2, self->epfd, w2_maxevents, 3000))
			TH_LOG("W2 did not go to sleep");
		ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
		ASSERT_EQ(0, wide_start(w1, self->epfd, WIDE, 3000))
			TH_LOG("W1 did not go to sleep");
	} else {
		ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
		ASSERT_EQ(0, wide_start(w1, self->epfd, WIDE, 3000))
			TH_LOG("W1 did not go to sleep");
		ASSERT_EQ(0, wide_start(w2, self->epfd, w2_maxevents, 3000))
			TH_LOG("W2 did not go to sleep");
	}
	wrote = numab_now_ns();
	efd_signal(self->efd[0]);
	wide_join(w2);
	wide_join(w1);

	ksft_print_msg("W2 (maxevents %d%s): %d event(s) %lld ms after the write; W1 (maxevents %d, M %d ms): %d after %lld ms; write %lld ms into W1's wait\n",
		       w2_maxevents,
		       w2_before_min_wait ? ", entered before M was set" : "",
		       w2->ret, (long long)wide_ms_after(w2, wrote), WIDE,
		       m_ms, w1->ret, (long long)wide_ms(w1),
		       (long long)((wrote - w1->start_ns) / NS_PER_MS));
	/* else W1's minimum wait ends too soon for this to show anything */
	EXPECT_GT(w1->start_ns + m_ms / 4 * NS_PER_MS, wrote)
		TH_LOG("setup too slow: the write came %lld ms into W1's wait",
		       (long long)((wrote - w1->start_ns) / NS_PER_MS));
	EXPECT_EQ(1, w2->ret) TH_LOG("%s", w2->ret < 0 ? strerror(w2->err) : "");
	EXPECT_GT(m_ms / 2, wide_ms_after(w2, wrote))
		TH_LOG("W2 returned %lld ms after the write: held by W1's minimum wait",
		       (long long)wide_ms_after(w2, wrote));
	EXPECT_EQ(1, w1->ret) TH_LOG("%s", w1->ret < 0 ? strerror(w1->err) : "");
}

TEST_F(hold, batch_of_one_not_held_by_other_waiter)
{
	SKIP_WITHOUT_MIN_WAIT();
	other_waiter_case(_metadata, self, 1, false);
}

TEST_F(hold, waiter_from_before_min_wait_not_held)
{
	SKIP_WITHOUT_MIN_WAIT();
	other_waiter_case(_metadata, self, WIDE, true);
}

/*
 * Two waiters hold their batches in a minimum wait of M = 1 s: BIG needs
 * 4 events (maxevents 4), SMALL needs 2 (maxevents 2). Two writes complete
 * SMALL's batch, whichever of them went to sleep first: SMALL returns both
 * well before M; BIG, whose batch they do not complete, is not woken for
 * them and returns nothing, at its timeout.
 */
static void smaller_batch_case(struct __test_metadata *_metadata,
			       FIXTURE_DATA(hold) *self, bool small_first)
{
	const int m_ms = 1000, big_timeout_ms = 1500;
	struct wide *big = &self->w[0], *small = &self->w[1];
	struct wide *first = small_first ? small : big;
	int64_t wrote;

	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN | EPOLLET));
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[1], EPOLLIN | EPOLLET));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
	if (small_first)
		ASSERT_EQ(0, wide_start(small, self->epfd, 2, 3000))
			TH_LOG("SMALL did not go to sleep");
	ASSERT_EQ(0, wide_start(big, self->epfd, 4, big_timeout_ms))
		TH_LOG("BIG did not go to sleep");
	if (!small_first)
		ASSERT_EQ(0, wide_start(small, self->epfd, 2, 3000))
			TH_LOG("SMALL did not go to sleep");
	wrote = numab_now_ns();
	efd_signal(self->efd[0]);
	efd_signal(self->efd[1]);
	wide_join(small);
	wide_join(big);

	ksft_print_msg("%s asleep first: SMALL (maxevents 2) %d event(s) %lld ms after the writes; BIG (maxevents 4) %d after %lld ms; M %d ms, writes %lld ms into the first wait\n",
		       small_first ? "SMALL" : "BIG", small->ret,
		       (long long)wide_ms_after(small, wrote), big->ret,
		       (long long)wide_ms(big), m_ms,
		       (long long)((wrote - first->start_ns) / NS_PER_MS));
	/* else the first minimum wait ends too soon for this to show anything */
	EXPECT_GT(first->start_ns + m_ms / 4 * NS_PER_MS, wrote)
		TH_LOG("setup too slow: the writes came %lld ms into the first wait",
		       (long long)((wrote - first->start_ns) / NS_PER_MS));
	EXPECT_EQ(2, small->ret)
		TH_LOG("%s", small->ret < 0 ? strerror(small->err) : "");
	EXPECT_GT(m_ms / 2, wide_ms_after(small, wrote))
		TH_LOG("SMALL returned %lld ms after its batch was complete: the holder that needs the fewest events was not woken",
		       (long long)wide_ms_after(small, wrote));
	EXPECT_EQ(0, big->ret)
		TH_LOG("BIG returned %d: %s", big->ret,
		       big->ret < 0 ? strerror(big->err) :
		       "it took events of SMALL's batch, or had one twice");
}

TEST_F(hold, smaller_batch_served_first_small_asleep_first)
{
	SKIP_WITHOUT_MIN_WAIT();
	smaller_batch_case(_metadata, self, true);
}

TEST_F(hold, smaller_batch_served_first_big_asleep_first)
{
	SKIP_WITHOUT_MIN_WAIT();
	smaller_batch_case(_metadata, self, false);
}

/*
 * B waits in a 3 s minimum wait; the minimum wait is cleared; C starts a
 * plain wait; one write. Nobody has a minimum wait any more: the first of
 * them returns with the event well under 1 s after it.
 */
TEST_F(hold, clearing_min_wait_applies_to_waiters)
{
	const int m_ms = 3000;
	struct wide *b = &self->w[0], *c = &self->w[1];
	int64_t wrote, first;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
	ASSERT_EQ(0, wide_start(b, self->epfd, WIDE, 5000))
		TH_LOG("B did not go to sleep");
	ASSERT_EQ(m_ms * 1000, set_min_wait(self->epfd, 0));
	ASSERT_EQ(0, wide_start(c, self->epfd, WIDE, 5000))
		TH_LOG("C did not go to sleep");
	numab_sleep_ms(30);
	wrote = numab_now_ns();
	efd_signal(self->efd[0]);
	wide_join(b);
	wide_join(c);

	first = b->end_ns < c->end_ns ? b->end_ns : c->end_ns;
	ksft_print_msg("M %d ms cleared: B %d event(s) %lld ms after the write, C %d %lld ms after it\n",
		       m_ms, b->ret, (long long)wide_ms_after(b, wrote), c->ret,
		       (long long)wide_ms_after(c, wrote));
	EXPECT_EQ(1, b->ret) TH_LOG("%s", b->ret < 0 ? strerror(b->err) : "");
	EXPECT_EQ(1, c->ret) TH_LOG("%s", c->ret < 0 ? strerror(c->err) : "");
	EXPECT_GT(1000, (first - wrote) / NS_PER_MS)
		TH_LOG("first return %lld ms after the write: the cleared minimum wait still held it",
		       (long long)((first - wrote) / NS_PER_MS));
}

/*
 * B waits for a batch of 64 in a 3 s minimum wait with one item ready; K
 * is lowered to 1: that item is a complete batch, and B returns it.
 */
TEST_F(hold, lowering_min_events_applies_to_waiters)
{
	const int m_ms = 3000;
	struct wide *b = &self->w[0];
	int64_t changed;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
	efd_signal(self->efd[0]);
	ASSERT_EQ(0, wide_start(b, self->epfd, WIDE, 5000))
		TH_LOG("B did not go to sleep");
	numab_sleep_ms(30);
	changed = numab_now_ns();
	ASSERT_EQ(0, set_min_events(self->epfd, 1));
	wide_join(b);

	ksft_print_msg("K lowered to 1 under M %d ms: B %d event(s) %lld ms after the change\n",
		       m_ms, b->ret, (long long)wide_ms_after(b, changed));
	EXPECT_EQ(1, b->ret) TH_LOG("%s", b->ret < 0 ? strerror(b->err) : "");
	EXPECT_GT(1000, wide_ms_after(b, changed))
		TH_LOG("B returned %lld ms after K became 1",
		       (long long)wide_ms_after(b, changed));
}

/*
 * D waits for its first event (M = 300 ms from it, maxevents 8); then a
 * child process A does the same on the same instance. One write: A,
 * queued last, is woken first and holds the event for its batch; D, whose
 * batch it completes no more, sleeps on. A is killed while it holds: D
 * must be told of the event A left, and return it about M later, not at
 * its timeout.
 */
TEST_F(hold, killed_holder_hands_its_event_on)
{
	const int m_ms = 300, timeout_ms = 3000;
	struct wide *d = &self->w[0];
	struct epoll_event ev[8];
	int64_t killed;
	pid_t a;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN | EPOLLET));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000 | AFTER_FIRST));
	ASSERT_EQ(0, wide_start(d, self->epfd, 8, timeout_ms))
		TH_LOG("D did not go to sleep");
	a = fork();
	ASSERT_LE(0, a);
	if (!a) {
		epoll_wait(self->epfd, ev, 8, 10 * timeout_ms);
		_exit(0);
	}
	ASSERT_TRUE(process_sleeps(a, 5000)) TH_LOG("A did not go to sleep");
	efd_signal(self->efd[0]);
	/* A holds the event: well within its minimum wait */
	numab_sleep_ms(m_ms / 3);
	killed = numab_now_ns();
	ASSERT_EQ(0, kill(a, SIGKILL));
	ASSERT_EQ(a, waitpid(a, NULL, 0));
	wide_join(d);

	ksft_print_msg("A killed while it held the event (M %d ms from it): D %d event(s) %lld ms after the kill\n",
		       m_ms, d->ret, (long long)wide_ms_after(d, killed));
	EXPECT_EQ(1, d->ret) TH_LOG("%s", d->ret < 0 ? strerror(d->err) : "");
	EXPECT_GT(timeout_ms / 2, wide_ms_after(d, killed))
		TH_LOG("D returned %lld ms after the kill: not told of the event A left",
		       (long long)wide_ms_after(d, killed));
}

/*
 * B waits for its first event (M = 300 ms from it, maxevents 8). E1
 * starts B's wait; a call with maxevents 1 takes E1 away; at M B's wait
 * ends with nothing ready, and B sleeps on, as a plain waiter, to the next
 * event. Then D waits for its first event, queued after B. E2: D, woken
 * first, holds it for its batch; B, whose minimum wait is over, must
 * have it at once all the same.
 */
TEST_F(hold, waiter_past_its_wait_gets_an_event_another_holds)
{
	const int m_ms = 300;
	struct wide *b = &self->w[0], *d = &self->w[1];
	struct epoll_event ev;
	int64_t wrote;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN | EPOLLET));
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[1], EPOLLIN | EPOLLET));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000 | AFTER_FIRST));
	ASSERT_EQ(0, wide_start(b, self->epfd, 8, 5000))
		TH_LOG("B did not go to sleep");
	efd_signal(self->efd[0]);
	numab_sleep_ms(m_ms / 6);
	ASSERT_EQ(1, epoll_wait(self->epfd, &ev, 1, 0));
	efd_drain(self->efd[0]);
	numab_sleep_ms(m_ms * 2);
	ASSERT_EQ(0, wide_start(d, self->epfd, 8, 1500))
		TH_LOG("D did not go to sleep");
	wrote = numab_now_ns();
	efd_signal(self->efd[1]);
	wide_join(b);
	wide_join(d);

	ksft_print_msg("B past its minimum wait: %d event(s) %lld ms after E2; D (holding it) %d\n",
		       b->ret, (long long)wide_ms_after(b, wrote), d->ret);
	EXPECT_EQ(1, b->ret) TH_LOG("%s", b->ret < 0 ? strerror(b->err) : "");
	EXPECT_GT(m_ms, wide_ms_after(b, wrote))
		TH_LOG("B returned %lld ms after E2: held by D's batch",
		       (long long)wide_ms_after(b, wrote));
}

/*
 * B holds one ready item in a minimum wait timed from its start; while it
 * holds, the value changes to one that would hold it longer: a higher M,
 * or the same M timed from the first event (which, for a call that holds
 * an event already, would start now). Either applies from the next call:
 * B returns its event at about M, not later.
 */
static void longer_value_case(struct __test_metadata *_metadata,
			      FIXTURE_DATA(hold) *self, uint64_t longer,
			      int change_ms, const char *what)
{
	const int m_ms = 500;
	struct wide *b = &self->w[0];
	int64_t changed;

	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
	efd_signal(self->efd[0]);
	ASSERT_EQ(0, wide_start(b, self->epfd, WIDE, 10000))
		TH_LOG("B did not go to sleep");
	sleep_until_ns(b->start_ns + change_ms * NS_PER_MS);
	changed = numab_now_ns();
	ASSERT_EQ(m_ms * 1000, set_min_wait(self->epfd, longer));
	wide_join(b);

	ksft_print_msg("M %d ms, then %s %lld ms into the call: B %d event(s) after %lld ms\n",
		       m_ms, what, (long long)((changed - b->start_ns) / NS_PER_MS),
		       b->ret, (long long)wide_ms(b));
	EXPECT_EQ(1, b->ret) TH_LOG("%s", b->ret < 0 ? strerror(b->err) : "");
	EXPECT_GT(m_ms * 3 / 2, wide_ms(b))
		TH_LOG("B returned after %lld ms: the new value held it past its M of %d ms",
		       (long long)wide_ms(b), m_ms);
	EXPECT_LE(m_ms * 8 / 10, wide_ms(b))
		TH_LOG("B returned after %lld ms, before 0.8 M",
		       (long long)wide_ms(b));
}

TEST_F(hold, raised_min_wait_applies_from_the_next_call)
{
	SKIP_WITHOUT_MIN_WAIT();
	longer_value_case(_metadata, self, 5000 * 1000, 50, "M 5000 ms");
}

TEST_F(hold, timing_from_the_first_event_applies_from_the_next_call)
{
	SKIP_WITHOUT_MIN_WAIT();
	longer_value_case(_metadata, self, 500 * 1000 | AFTER_FIRST, 400,
			  "the same M timed from the first event");
}

/*
 * B holds one of a batch of K = 2 in a 3 s minimum wait; K is raised to
 * 64, which would hold it longer, so it applies from the next call. A
 * second item completes B's batch of 2: B returns both at once, not at M.
 */
TEST_F(hold, raised_min_events_applies_from_the_next_call)
{
	const int m_ms = 3000;
	struct wide *b = &self->w[0];
	int64_t wrote;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[0], EPOLLIN));
	ASSERT_EQ(0, add_fd(self->epfd, self->efd[1], EPOLLIN));
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000));
	ASSERT_EQ(0, set_min_events(self->epfd, 2));
	efd_signal(self->efd[0]);
	ASSERT_EQ(0, wide_start(b, self->epfd, WIDE, 10000))
		TH_LOG("B did not go to sleep");
	numab_sleep_ms(30);
	ASSERT_EQ(2, set_min_events(self->epfd, 64));
	numab_sleep_ms(30);
	wrote = numab_now_ns();
	efd_signal(self->efd[1]);
	wide_join(b);

	ksft_print_msg("K 2 raised to 64 under M %d ms: B %d event(s) %lld ms after its second item\n",
		       m_ms, b->ret, (long long)wide_ms_after(b, wrote));
	EXPECT_EQ(2, b->ret) TH_LOG("%s", b->ret < 0 ? strerror(b->err) : "");
	EXPECT_GT(1000, wide_ms_after(b, wrote))
		TH_LOG("B returned %lld ms after its batch of 2 was complete: the raised K held it",
		       (long long)wide_ms_after(b, wrote));
}

/*
 * Four items ready, an events buffer with room for two before an
 * inaccessible page. Plain epoll returns the two it copied (the fault is
 * reported only when nothing was); with a minimum wait the call must
 * return the same, whether the batch is complete at the start (K 3,
 * maxevents 4) or not (K 0, maxevents 8).
 */
TEST_F(hold, fault_mid_copy_returns_copied)
{
	static const struct { int maxevents, k; } runs[] = {
		{ 4, 3 }, { 8, 0 },
	};
	long pg = sysconf(_SC_PAGESIZE);
	struct epoll_event *ev;
	int plain, ret, err, i;
	void *map;
	size_t c;

	SKIP_WITHOUT_MIN_WAIT();
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	self->map = map;
	self->map_len = 2 * pg;
	ASSERT_EQ(0, mprotect((char *)self->map + pg, pg, PROT_NONE));
	ev = (struct epoll_event *)((char *)self->map + pg - 2 * sizeof(*ev));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, add_fd(self->epfd, self->efd[i], EPOLLIN));
		efd_signal(self->efd[i]);
	}

	for (c = 0; c < ARRAY_SIZE(runs); c++) {
		ASSERT_LE(0, set_min_wait(self->epfd, 0));
		ASSERT_LE(0, set_min_events(self->epfd, 0));
		plain = epoll_wait(self->epfd, ev, runs[c].maxevents, 1000);
		err = errno;
		EXPECT_LT(0, plain) TH_LOG("plain epoll, maxevents %d: %d (%s)",
					   runs[c].maxevents, plain,
					   plain < 0 ? strerror(err) : "");

		ASSERT_EQ(0, set_min_wait(self->epfd, 500000));
		ASSERT_EQ(0, set_min_events(self->epfd, runs[c].k));
		ret = epoll_wait(self->epfd, ev, runs[c].maxevents, 3000);
		err = errno;
		ksft_print_msg("fault after 2 events, maxevents %d, K %d: plain epoll %d, with M 500 ms %d%s%s\n",
			       runs[c].maxevents, runs[c].k, plain, ret,
			       ret < 0 ? " " : "",
			       ret < 0 ? strerror(err) : "");
		EXPECT_EQ(plain, ret)
			TH_LOG("maxevents %d, K %d: %d (%s), plain epoll %d",
			       runs[c].maxevents, runs[c].k, ret,
			       ret < 0 ? strerror(err) : "", plain);
	}
}

/* Bytes of @buf that are no longer the 0xa5 pattern. */
static size_t changed_bytes(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += p[i] != 0xa5;
	return n;
}

/*
 * A call that returns 0 owns nothing in the caller's buffer. T (1 s) is
 * shorter than M (3 s). First with only stale level-triggered items on
 * the ready list (a scan drops them); then with one item A ready when the
 * call starts and read back while it sleeps, so that nothing is ready at
 * T: the buffer must still hold its 0xa5 pattern.
 */
TEST_F(hold, zero_return_leaves_buffer)
{
	struct epoll_event buf[8], one[8];
	int s = self->efd[0], a = self->efd[1];
	struct wide *w = &self->w[0];
	size_t n;
	int ret;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, add_fd(self->epfd, s, EPOLLIN));
	ASSERT_EQ(0, add_fd(self->epfd, a, EPOLLIN));

	/* S reported once (it goes back on the list), then read back */
	efd_signal(s);
	ASSERT_EQ(1, epoll_wait(self->epfd, one, 8, 0));
	efd_drain(s);
	ASSERT_EQ(0, set_min_wait(self->epfd, 3000000));
	memset(buf, 0xa5, sizeof(buf));
	ret = epoll_wait(self->epfd, buf, 8, 1000);
	n = changed_bytes(buf, sizeof(buf));
	ksft_print_msg("stale items only: returned %d, %zu byte(s) of the buffer changed\n",
		       ret, n);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, n) TH_LOG("a call with only stale items wrote %zu bytes",
			       n);

	/* S stale again, A ready at the start, read back during the call */
	efd_signal(s);
	ASSERT_EQ(1, epoll_wait(self->epfd, one, 8, 0));
	efd_drain(s);
	efd_signal(a);
	memset(w->ev, 0xa5, sizeof(w->ev));
	ASSERT_EQ(0, wide_start(w, self->epfd, 8, 1000))
		TH_LOG("the waiter did not go to sleep");
	efd_drain(a);
	wide_join(w);
	n = changed_bytes(w->ev, sizeof(w->ev));
	ksft_print_msg("item ready at the start, gone at T: returned %d after %lld ms, %zu byte(s) of the buffer changed\n",
		       w->ret, (long long)wide_ms(w), n);
	EXPECT_EQ(0, w->ret) TH_LOG("%s", w->ret < 0 ? strerror(w->err) : "");
	EXPECT_EQ(0, n)
		TH_LOG("a call that returned %d wrote %zu bytes of the buffer",
		       w->ret, n);
}

/* --- many stale items: a scan that takes time ----------------------------- */

/*
 * How long a plain non-blocking call takes to scan @d's stale items (and
 * drop them): the fastest of @rounds, in ns, or -1 if one reported any.
 */
static int64_t stale_scan_ns(struct dups *d, int epfd, int rounds)
{
	int64_t best = INT64_MAX, t0, ns;
	struct epoll_event ev[WIDE];
	int i;

	for (i = 0; i < rounds; i++) {
		if (dups_make_stale(d, epfd) != WIDE)
			return -1;
		t0 = numab_now_ns();
		if (epoll_wait(epfd, ev, WIDE, 0) != 0)
			return -1;
		ns = numab_now_ns() - t0;
		if (ns < best)
			best = ns;
	}
	return best;
}

/*
 * Add dups (doubling, up to d->cap) until a scan of them takes at least
 * @want_ms: the guest may be fast. Returns the last scan's cost in ns,
 * or -1 on a failure (errno set by a dup or an add).
 */
static int64_t stale_scan_grow(struct dups *d, int epfd, int want_ms)
{
	int64_t scan;

	for (;;) {
		scan = stale_scan_ns(d, epfd, 3);
		if (scan < 0 || scan >= want_ms * NS_PER_MS || d->nr >= d->cap)
			return scan;
		if (dups_add(d, epfd, d->nr * 2 < d->cap ? d->nr * 2 : d->cap))
			return -1;
	}
}

/* The first two CPUs this thread may run on; false with fewer than two. */
static bool two_cpus(int *a, int *b)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (cpu = 0; cpu < CPU_SETSIZE && n < 2; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (n++)
			*b = cpu;
		else
			*a = cpu;
	}
	return n == 2;
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * An event written while the call scans many stale items (0.2 ms or 1 ms
 * into it) counts: with the minimum wait timed from the first event
 * (20 ms) and K = 4, the call returns that one event about 20 ms after
 * it, not at T (3 s) as if nothing had come. SCAN_N stale items to start
 * with, more (up to SCAN_N_MAX) until a scan takes SCAN_WANT_MS, so that
 * the write lands inside it (a 4-vCPU TCG guest scans 160,000 in about
 * 22 ms, and its writer's "0.2 ms" is 4 to 5 ms); the writer spins on
 * another CPU; up to SCAN_TRIES calls until one has the write inside its
 * scan.
 */
#define SCAN_N		20000
#define SCAN_N_MAX	320000
#define SCAN_WANT_MS	12
#define SCAN_TRIES	3

FIXTURE(scan) {
	int epfd;
	int e;
	struct dups d;
	pthread_t th;
	bool started;
	int writer_cpu;		/* -1: not pinned */
	int64_t go_ns;
	int64_t at_ns;
	int64_t delay_ns;
	cpu_set_t saved;
	bool pinned;
};

FIXTURE_VARIANT(scan) {
	int delay_us;
};

FIXTURE_VARIANT_ADD(scan, at_200us) {
	.delay_us = 200,
};

FIXTURE_VARIANT_ADD(scan, at_1ms) {
	.delay_us = 1000,
};

FIXTURE_SETUP(scan)
{
	self->d.efd = -1;
	self->e = -1;
	self->writer_cpu = -1;
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	if (!min_wait_supported())
		return;		/* the test skips */
	self->e = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->e);
	ASSERT_EQ(0, add_fd(self->epfd, self->e, EPOLLIN | EPOLLET));
	ASSERT_EQ(0, dups_open(&self->d, self->epfd, SCAN_N, SCAN_N_MAX))
		TH_LOG("dup %d: %s", self->d.nr, strerror(errno));
}

FIXTURE_TEARDOWN(scan)
{
	if (self->started) {
		/* a writer still spinning gives up on its own, within 10 s */
		__atomic_store_n(&self->go_ns, 1, __ATOMIC_RELEASE);
		pthread_join(self->th, NULL);
	}
	if (self->pinned)
		sched_setaffinity(0, sizeof(self->saved), &self->saved);
	if (self->e >= 0)
		close(self->e);
	set_min_events(self->epfd, 0);
	set_min_wait(self->epfd, 0);
	close(self->epfd);
	/* After the instance: see dups_close(). */
	dups_close(&self->d);
}

/* Spins until the call's start is published, then until the delay. */
static void *scan_writer_fn(void *arg)
{
	FIXTURE_DATA(scan) *self = arg;
	int64_t t0 = numab_now_ns(), go;

	if (self->writer_cpu >= 0)
		pin_self(self->writer_cpu);
	while (!(go = __atomic_load_n(&self->go_ns, __ATOMIC_ACQUIRE)))
		if (numab_now_ns() - t0 > 10000 * NS_PER_MS)
			return NULL;
	while (numab_now_ns() < go + self->delay_ns)
		;
	self->at_ns = numab_now_ns();
	efd_signal(self->e);
	return NULL;
}

TEST_F_TIMEOUT(scan, event_during_scan_is_counted, 300)
{
	struct epoll_event ev[WIDE];
	int64_t scan, t0, t1, at;
	int ret, err, try, cpu;
	bool inside = false;

	SKIP_WITHOUT_MIN_WAIT();
	scan = stale_scan_grow(&self->d, self->epfd, SCAN_WANT_MS);
	ASSERT_LT(0, scan) TH_LOG("%d stale items: %s", self->d.nr,
				  strerror(errno));
	ASSERT_EQ(0, set_min_wait(self->epfd, 20000 | AFTER_FIRST));
	ASSERT_EQ(0, set_min_events(self->epfd, 4));
	self->delay_ns = variant->delay_us * 1000LL;
	if (!sched_getaffinity(0, sizeof(self->saved), &self->saved) &&
	    two_cpus(&cpu, &self->writer_cpu) && !pin_self(cpu))
		self->pinned = true;
	else
		self->writer_cpu = -1;

	for (try = 0; try < SCAN_TRIES && !inside; try++) {
		ASSERT_EQ(WIDE, dups_make_stale(&self->d, self->epfd));
		self->go_ns = 0;
		self->at_ns = 0;
		ASSERT_EQ(0, pthread_create(&self->th, NULL, scan_writer_fn,
					    self));
		self->started = true;
		numab_sleep_ms(20);	/* the writer spins by now */
		t0 = numab_now_ns();
		__atomic_store_n(&self->go_ns, t0, __ATOMIC_RELEASE);
		ret = epoll_wait(self->epfd, ev, WIDE, 3000);
		err = errno;
		t1 = numab_now_ns();
		pthread_join(self->th, NULL);
		self->started = false;
		at = self->at_ns - t0;
		inside = at < scan * 9 / 10;
		ksft_print_msg("try %d: %d stale items (a scan: %.1f ms), event %.3f ms into the call%s: %d event(s) after %.1f ms\n",
			       try, self->d.nr, ms_of(scan), ms_of(at),
			       inside ? "" : ", after the scan", ret,
			       ms_of(t1 - t0));
		EXPECT_EQ(1, ret) TH_LOG("%s", ret < 0 ? strerror(err) : "");
		if (ret == 1)
			EXPECT_EQ(self->e, ev[0].data.fd);
		EXPECT_GT(1000, (t1 - t0) / NS_PER_MS)
			TH_LOG("returned after %.1f ms: the event during the scan was not counted",
			       ms_of(t1 - t0));
		if (ret != 1 || (t1 - t0) / NS_PER_MS >= 1000)
			break;
	}
	if (!inside)
		ksft_print_msg("the write never came inside the scan: the race was not tested\n");
}

/*
 * The minimum wait is timed from the call's entry. Measured first: how
 * long a plain non-blocking call takes to scan ENTRY_N stale items (S,
 * the fastest of 3; more items, up to ENTRY_N_MAX or what
 * fs.epoll.max_user_watches allows, until S is at least ENTRY_WANT_SCAN_MS;
 * it skips under ENTRY_MIN_SCAN_MS). Then M = max(2 S, 50 ms), the same
 * stale items and one ready item: the call returns at M (the scan is
 * inside it), not at S + M; the fastest of ENTRY_ROUNDS must come before
 * M + S / 2. A 4-vCPU TCG guest scans 160,000 items in 17 to 20 ms.
 * No more items than that needs: each is a dup() and an epoll_ctl() (and
 * with SLOB, which 6.1's tinyconfig picks, an allocation that costs more
 * the more objects live: 320,000 took over two minutes).
 */
#define ENTRY_N		40000
#define ENTRY_N_MAX	640000
#define ENTRY_ROUNDS	5
#define ENTRY_WANT_SCAN_MS 20
#define ENTRY_MIN_SCAN_MS 10

FIXTURE(entry) {
	int epfd;
	int r;
	struct dups d;
};

FIXTURE_SETUP(entry)
{
	self->d.efd = -1;
	self->r = -1;
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	if (!min_wait_supported())
		return;		/* the test skips */
	self->r = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->r);
	ASSERT_EQ(0, add_fd(self->epfd, self->r, EPOLLIN));
	ASSERT_EQ(0, dups_open(&self->d, self->epfd, ENTRY_N, ENTRY_N_MAX))
		TH_LOG("dup %d: %s", self->d.nr, strerror(errno));
}

FIXTURE_TEARDOWN(entry)
{
	if (self->r >= 0)
		close(self->r);
	set_min_events(self->epfd, 0);
	set_min_wait(self->epfd, 0);
	close(self->epfd);
	/* After the instance: see dups_close(). */
	dups_close(&self->d);
}

TEST_F_TIMEOUT(entry, min_wait_timed_from_entry, 300)
{
	int64_t scan, best = INT64_MAX, m_ns, t0, ns;
	struct epoll_event ev[WIDE];
	int i, ret;

	SKIP_WITHOUT_MIN_WAIT();
	scan = stale_scan_grow(&self->d, self->epfd, ENTRY_WANT_SCAN_MS);
	ASSERT_LT(0, scan) TH_LOG("%d stale items: %s", self->d.nr,
				  strerror(errno));
	if (scan < ENTRY_MIN_SCAN_MS * NS_PER_MS)
		SKIP(return, "a scan of %d stale items takes %.1f ms, under %d ms: too fast to tell M from M + scan",
		     self->d.nr, ms_of(scan), ENTRY_MIN_SCAN_MS);
	m_ns = 2 * scan;
	if (m_ns < 50 * NS_PER_MS)
		m_ns = 50 * NS_PER_MS;
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ns / 1000));

	for (i = 0; i < ENTRY_ROUNDS; i++) {
		ASSERT_EQ(WIDE, dups_make_stale(&self->d, self->epfd));
		efd_signal(self->r);
		t0 = numab_now_ns();
		ret = epoll_wait(self->epfd, ev, WIDE,
				 (int)(3 * m_ns / NS_PER_MS) + 5000);
		ns = numab_now_ns() - t0;
		efd_drain(self->r);
		EXPECT_EQ(1, ret) TH_LOG("round %d: %d (%s)", i, ret,
					 ret < 0 ? strerror(errno) : "");
		if (ns < best)
			best = ns;
	}
	ksft_print_msg("%d stale items: scan S %.1f ms, M %.1f ms: returned after %.1f ms = M + %.2f S (fastest of %d)\n",
		       self->d.nr, ms_of(scan), ms_of(m_ns), ms_of(best),
		       (double)(best - m_ns) / scan, ENTRY_ROUNDS);
	EXPECT_LE(m_ns * 8 / 10, best)
		TH_LOG("returned after %.1f ms, before 0.8 M", ms_of(best));
	EXPECT_GT(m_ns + scan / 2, best)
		TH_LOG("returned after M + %.2f S: the minimum wait started after the scan",
		       (double)(best - m_ns) / scan);
}

/* --- holders do not wake each other ------------------------------------- */

/*
 * HERD_WAITERS threads loop in epoll_wait() (maxevents 64) on one instance
 * while HERD_EVENTS events come one at a time, HERD_GAP_US apart, on
 * edge-triggered eventfds. With K = 2 and a long M, each batch of two is
 * taken by one waiter; the others, whose counts of what was ready are then
 * out of date, must not be woken for it: the waiters' voluntary context
 * switches per event may be at most HERD_RATIO_MAX times those of the same
 * threads in plain epoll_wait() (about one per event).
 */
#define HERD_WAITERS	16
#define HERD_FDS	16
#define HERD_EVENTS	300
#define HERD_GAP_US	2000
#define HERD_RATIO_MAX	2
#define HERD_M_US	2000000
#define HERD_TIMEOUT_MS	300

struct herd {
	int epfd;
	pthread_t th[HERD_WAITERS];
	bool started[HERD_WAITERS];
	bool stop;
	long nvcsw;		/* summed over the waiters, as they end */
	long events;
	int efd[HERD_FDS];
};

static void *herd_fn(void *arg)
{
	struct herd *h = arg;
	struct epoll_event ev[WIDE];
	struct rusage ru0, ru1;
	long events = 0;
	int i, n;

	getrusage(RUSAGE_THREAD, &ru0);
	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		n = epoll_wait(h->epfd, ev, WIDE, HERD_TIMEOUT_MS);
		for (i = 0; i < n; i++)
			efd_drain(ev[i].data.fd);
		if (n > 0)
			events += n;
	}
	getrusage(RUSAGE_THREAD, &ru1);
	__atomic_fetch_add(&h->nvcsw, ru1.ru_nvcsw - ru0.ru_nvcsw,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->events, events, __ATOMIC_RELAXED);
	return NULL;
}

/* The waiters' voluntary context switches per event written, or -1. */
static double herd_round(struct __test_metadata *_metadata, struct herd *h,
			 bool min_wait)
{
	int i;

	h->stop = false;
	h->nvcsw = 0;
	h->events = 0;
	if (set_min_wait(h->epfd, min_wait ? HERD_M_US : 0) < 0 ||
	    set_min_events(h->epfd, min_wait ? 2 : 0) < 0)
		return -1;
	for (i = 0; i < HERD_WAITERS; i++)
		h->started[i] = !pthread_create(&h->th[i], NULL, herd_fn, h);
	usleep(100000);
	for (i = 0; i < HERD_EVENTS; i++) {
		efd_signal(h->efd[i % HERD_FDS]);
		usleep(HERD_GAP_US);
	}
	/* the last batch comes; then every waiter sees stop by its timeout */
	usleep(50000);
	__atomic_store_n(&h->stop, true, __ATOMIC_RELEASE);
	set_min_wait(h->epfd, 0);
	for (i = 0; i < HERD_WAITERS; i++) {
		if (h->started[i])
			pthread_join(h->th[i], NULL);
		h->started[i] = false;
	}
	for (i = 0; i < HERD_FDS; i++)
		efd_drain(h->efd[i]);
	EXPECT_EQ(HERD_EVENTS, h->events)
		TH_LOG("%s: %ld of %d events returned",
		       min_wait ? "K = 2" : "plain", h->events, HERD_EVENTS);
	return (double)h->nvcsw / HERD_EVENTS;
}

TEST_F_TIMEOUT(hold, holders_do_not_wake_each_other, 120)
{
	struct herd h = { .epfd = self->epfd };
	double plain, held;
	int i;

	SKIP_WITHOUT_MIN_WAIT();
	for (i = 0; i < HERD_FDS; i++) {
		h.efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, h.efd[i]);
		ASSERT_EQ(0, add_fd(self->epfd, h.efd[i], EPOLLIN | EPOLLET));
	}
	plain = herd_round(_metadata, &h, false);
	held = herd_round(_metadata, &h, true);
	for (i = 0; i < HERD_FDS; i++)
		close(h.efd[i]);
	ASSERT_LT(0, plain);
	ASSERT_LT(0, held);
	ksft_print_msg("%d waiters, %d events: %.2f voluntary context switches per event in plain epoll_wait(), %.2f with K = 2: %.2fx\n",
		       HERD_WAITERS, HERD_EVENTS, plain, held, held / plain);
	EXPECT_GE(HERD_RATIO_MAX * plain, held)
		TH_LOG("waiters holding batches woke each other: %.1fx plain's wakeups (at most %dx)",
		       held / plain, HERD_RATIO_MAX);
}

/* --- the cost of an event with many waiters holding ----------------------- */

/*
 * 64 threads asleep in epoll_wait() (maxevents 64) on one instance, each
 * inside a 2 s minimum wait: COST_N write()s (each read back) to an
 * eventfd it watches must cost at most COST_RATIO_MAX times what they
 * cost with no waiter at all (the fastest of COST_ROUNDS interleaved
 * rounds each, as in epoll_dup_storm_test.c).
 */
#define COST_WAITERS	64
#define COST_N		2000
#define COST_ROUNDS	3
#define COST_RATIO_MAX	3
#define COST_MIN_WAIT_MS 2000

FIXTURE(many) {
	int epfd;
	int efd;
	struct wide *w;
};

FIXTURE_SETUP(many)
{
	self->efd = -1;
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
	ASSERT_EQ(0, add_fd(self->epfd, self->efd, EPOLLIN));
	self->w = calloc(COST_WAITERS, sizeof(*self->w));
	ASSERT_NE(NULL, self->w);
}

FIXTURE_TEARDOWN(many)
{
	int i;

	if (self->w) {
		/* any waiter still there: give it its event, let it go */
		if (self->efd >= 0)
			efd_signal(self->efd);
		for (i = 0; i < COST_WAITERS; i++)
			wide_join(&self->w[i]);
		free(self->w);
	}
	set_min_wait(self->epfd, 0);
	close(self->epfd);
	if (self->efd >= 0)
		close(self->efd);
}

/*
 * P waits with maxevents 1, then FIRST_WAITERS threads wait for their
 * first event (maxevents 8, a minimum wait of 5 s timed from the first
 * event); the last queued is woken first. One write: one of the sixteen
 * is woken and holds the event for its batch; the others, whose batch it
 * completes no more, must not each be woken in turn to hold it too (a
 * wakeup passed on from each one's scan of the ready list): their context
 * switches in the next 300 ms are at most FIRST_SWITCHES_MAX in all. P,
 * whose batch it is, queued before them, returns it at once.
 */
#define FIRST_WAITERS	16
#define FIRST_SWITCHES_MAX 4

static long switches_of(struct wide *w, int n)
{
	long sum = 0, s;
	int i;

	for (i = 0; i < n; i++) {
		s = thread_switches(w[i].tid);
		if (s < 0)
			return -1;
		sum += s;
	}
	return sum;
}

TEST_F_TIMEOUT(many, first_event_wakes_one_waiter_for_its_first, 120)
{
	const int m_ms = 5000, timeout_ms = 1500;
	struct wide *p = &self->w[FIRST_WAITERS];
	long before, after;
	int64_t wrote;
	int i;

	SKIP_WITHOUT_MIN_WAIT();
	ASSERT_EQ(0, set_min_wait(self->epfd, m_ms * 1000 | AFTER_FIRST));
	ASSERT_EQ(0, wide_start(p, self->epfd, 1, timeout_ms))
		TH_LOG("P did not go to sleep");
	for (i = 0; i < FIRST_WAITERS; i++)
		ASSERT_EQ(0, wide_start(&self->w[i], self->epfd, 8, timeout_ms))
			TH_LOG("waiter %d did not go to sleep", i);
	before = switches_of(self->w, FIRST_WAITERS);
	ASSERT_LE(0, before);
	wrote = numab_now_ns();
	efd_signal(self->efd);
	numab_sleep_ms(300);
	after = switches_of(self->w, FIRST_WAITERS);
	ASSERT_LE(0, after);
	wide_join(p);

	ksft_print_msg("%d waiters for their first event (M %d ms from it): %ld context switches in 300 ms after one write; P (maxevents 1) %d event(s) %lld ms after it\n",
		       FIRST_WAITERS, m_ms, after - before, p->ret,
		       (long long)wide_ms_after(p, wrote));
	EXPECT_GE(FIRST_SWITCHES_MAX, after - before)
		TH_LOG("one event woke the waiters one after another");
	EXPECT_EQ(1, p->ret) TH_LOG("%s", p->ret < 0 ? strerror(p->err) : "");
	EXPECT_GT(timeout_ms / 2, wide_ms_after(p, wrote))
		TH_LOG("P returned %lld ms after the write",
		       (long long)wide_ms_after(p, wrote));
}

/* COST_N write()+read() pairs, with @waiters asleep: the ns they took. */
static int64_t cost_round(struct __test_metadata *_metadata,
			  FIXTURE_DATA(many) *self, int waiters)
{
	int64_t t0, t1, first_start = INT64_MAX;
	struct epoll_event none;
	int i;

	if (set_min_wait(self->epfd, waiters ? COST_MIN_WAIT_MS * 1000 : 0) < 0)
		return -1;
	/* no readiness left from the last round: not readable, not linked */
	efd_drain(self->efd);
	if (epoll_wait(self->epfd, &none, 1, 0) != 0)
		return -1;

	for (i = 0; i < waiters; i++)
		if (wide_spawn(&self->w[i], self->epfd, WIDE,
			       COST_MIN_WAIT_MS + 3000))
			return -1;
	for (i = 0; i < waiters; i++) {
		if (wide_asleep(&self->w[i]))
			TH_LOG("waiter %d did not go to sleep", i);
		if (self->w[i].start_ns < first_start)
			first_start = self->w[i].start_ns;
	}

	t0 = numab_now_ns();
	for (i = 0; i < COST_N; i++) {
		efd_signal(self->efd);
		efd_drain(self->efd);
	}
	t1 = numab_now_ns();

	if (!waiters)
		return t1 - t0;
	/* the writes came while every waiter held its batch */
	EXPECT_GT(first_start + COST_MIN_WAIT_MS * NS_PER_MS, t1)
		TH_LOG("the minimum wait was over before the last write: setup too slow");
	/* one event left ready: each waiter returns it at M */
	efd_signal(self->efd);
	for (i = 0; i < waiters; i++) {
		wide_join(&self->w[i]);
		EXPECT_EQ(1, self->w[i].ret)
			TH_LOG("waiter %d: %d (%s)", i, self->w[i].ret,
			       self->w[i].ret < 0 ?
			       strerror(self->w[i].err) : "");
	}
	efd_drain(self->efd);
	return t1 - t0;
}

TEST_F_TIMEOUT(many, many_waiters_event_cost, 300)
{
	int64_t plain = INT64_MAX, with = INT64_MAX, ns;
	int r;

	SKIP_WITHOUT_MIN_WAIT();
	for (r = 0; r < COST_ROUNDS; r++) {
		ns = cost_round(_metadata, self, 0);
		ASSERT_LT(0, ns) TH_LOG("round %d without waiters", r);
		if (ns < plain)
			plain = ns;
		ns = cost_round(_metadata, self, COST_WAITERS);
		ASSERT_LT(0, ns) TH_LOG("round %d with %d waiters", r,
					COST_WAITERS);
		if (ns < with)
			with = ns;
	}
	ksft_print_msg("%d write()+read(): %.2f ms with no waiter, %.2f ms with %d waiters in a %d ms minimum wait (fastest of %d): %.2fx\n",
		       COST_N, ms_of(plain), ms_of(with), COST_WAITERS,
		       COST_MIN_WAIT_MS, COST_ROUNDS, (double)with / plain);
	EXPECT_GE(COST_RATIO_MAX * plain, with)
		TH_LOG("an event costs %.1fx with %d waiters holding (at most %dx)",
		       (double)with / plain, COST_WAITERS, COST_RATIO_MAX);
}

/* --- thousands of waiters asleep ------------------------------------------ */

/*
 * What an event and a new value cost must not grow with the number of
 * waiters asleep on the instance: a scan that leaves a short batch listed
 * passes its wakeup on without visiting the waiters that wait for their
 * first event, and a new K reaches the waiters without a walk of them.
 * CROWD threads, each on a small stack, wait for their first event (M of
 * CROWD_MIN_WAIT_MS timed from it, maxevents WIDE); each cost is compared
 * with the same work beside a few waiters, or none, in the same run, with
 * a wide margin (CROWD_RATIO_MAX).
 */
#define CROWD		3000
#define CROWD_FEW	40
#define CROWD_EVENTS	32
#define CROWD_SETS	2000
#define CROWD_ROUNDS	3
#define CROWD_RATIO_MAX	3
#define CROWD_MIN_WAIT_MS 20000
#define CROWD_STACK	(64 * 1024)

FIXTURE(crowd) {
	int epfd;
	int efd;
	int nr;
	struct wide *w;
};

FIXTURE_SETUP(crowd)
{
	self->efd = -1;
	self->nr = 0;
	self->epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->epfd);
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
	ASSERT_EQ(0, add_fd(self->epfd, self->efd, EPOLLIN));
	self->w = calloc(CROWD, sizeof(*self->w));
	ASSERT_NE(NULL, self->w);
}

/*
 * Let every waiter go: cleared, the minimum wait ends for all of them,
 * and the level-triggered eventfd left readable is an event for each.
 */
static void crowd_release(FIXTURE_DATA(crowd) *self)
{
	int i;

	set_min_wait(self->epfd, 0);
	efd_signal(self->efd);
	for (i = 0; i < self->nr; i++)
		wide_join(&self->w[i]);
	self->nr = 0;
	efd_drain(self->efd);
}

FIXTURE_TEARDOWN(crowd)
{
	if (self->w) {
		crowd_release(self);
		free(self->w);
	}
	close(self->epfd);
	if (self->efd >= 0)
		close(self->efd);
}

/*
 * @n waiters asleep in a minimum wait of @value: for their first event
 * with AFTER_FIRST; with the eventfd readable and M timed from the call,
 * holding it for a batch of WIDE. 0, or -1.
 */
static int crowd_start_with(FIXTURE_DATA(crowd) *self, int n, uint64_t value)
{
	pthread_attr_t attr;
	struct wide *w;
	int i, ret = 0;

	if (set_min_wait(self->epfd, value) < 0 || pthread_attr_init(&attr))
		return -1;
	if (pthread_attr_setstacksize(&attr, CROWD_STACK))
		ret = -1;
	for (i = 0; !ret && i < n; i++) {
		w = &self->w[i];
		w->epfd = self->epfd;
		w->maxevents = WIDE;
		w->timeout = CROWD_MIN_WAIT_MS + 10000;
		w->tid = 0;
		if (pthread_create(&w->th, &attr, wide_fn, w))
			ret = -1;
		else
			w->started = true;
		self->nr = i + 1;
	}
	pthread_attr_destroy(&attr);
	for (i = 0; !ret && i < n; i++)
		ret = wide_asleep(&self->w[i]);
	return ret;
}

/* @n waiters asleep for their first event: 0, or -1. */
static int crowd_start(FIXTURE_DATA(crowd) *self, int n)
{
	return crowd_start_with(self, n, CROWD_MIN_WAIT_MS * 1000 | AFTER_FIRST);
}

/* CPU time of the whole process, in ns. */
static int64_t process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return -1;
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * With @n waiters asleep for their first event, CROWD_EVENTS writes, 2 ms
 * apart: each wakes one waiter, which finds a batch of one, holds it, and
 * passes the wakeup on. The CPU time they took, all threads included.
 */
static int64_t short_batch_round(struct __test_metadata *_metadata,
				 FIXTURE_DATA(crowd) *self, int n)
{
	int64_t t0, t1;
	int i;

	if (crowd_start(self, n)) {
		TH_LOG("%d waiters did not all go to sleep", n);
		return -1;
	}
	t0 = process_cpu_ns();
	for (i = 0; i < CROWD_EVENTS; i++) {
		efd_signal(self->efd);
		numab_sleep_ms(2);
	}
	numab_sleep_ms(200);
	t1 = process_cpu_ns();
	crowd_release(self);
	return t0 < 0 || t1 < 0 ? -1 : t1 - t0;
}

TEST_F_TIMEOUT(crowd, short_batch_costs_the_same_beside_many_first_waiters,
	       300)
{
	int64_t few = INT64_MAX, many = INT64_MAX, ns;
	int r;

	SKIP_WITHOUT_MIN_WAIT();
	for (r = 0; r < CROWD_ROUNDS; r++) {
		ns = short_batch_round(_metadata, self, CROWD_FEW);
		ASSERT_LT(0, ns) TH_LOG("round %d beside %d waiters", r,
					CROWD_FEW);
		if (ns < few)
			few = ns;
		ns = short_batch_round(_metadata, self, CROWD);
		ASSERT_LT(0, ns) TH_LOG("round %d beside %d waiters", r,
					CROWD);
		if (ns < many)
			many = ns;
	}
	ksft_print_msg("%d events, each held as a batch of one: %.2f ms of CPU beside %d waiters for their first event, %.2f ms beside %d (fastest of %d): %.2fx\n",
		       CROWD_EVENTS, ms_of(few), CROWD_FEW, ms_of(many), CROWD,
		       CROWD_ROUNDS, (double)many / few);
	EXPECT_GE(CROWD_RATIO_MAX * few, many)
		TH_LOG("a short batch costs %.1fx beside %d waiters (at most %dx)",
		       (double)many / few, CROWD, CROWD_RATIO_MAX);
}

/* @sets new values of K, @k and @k + 1 in turn: the ns they took. */
static int64_t set_k_ns(int epfd, int sets, int k)
{
	int64_t t0 = numab_now_ns();
	int i;

	for (i = 0; i < sets; i++)
		if (set_min_events(epfd, k + i % 2) < 0)
			return -1;
	return numab_now_ns() - t0;
}

TEST_F_TIMEOUT(crowd, new_k_costs_the_same_with_many_waiters, 300)
{
	int64_t alone = INT64_MAX, with = INT64_MAX, ns;
	int r;

	SKIP_WITHOUT_MIN_WAIT();
	for (r = 0; r < CROWD_ROUNDS; r++) {
		ASSERT_EQ(0, set_min_wait(self->epfd,
					  CROWD_MIN_WAIT_MS * 1000 | AFTER_FIRST));
		ns = set_k_ns(self->epfd, CROWD_SETS, 2);
		ASSERT_LT(0, ns);
		if (ns < alone)
			alone = ns;
		ASSERT_EQ(0, crowd_start(self, CROWD))
			TH_LOG("%d waiters did not all go to sleep", CROWD);
		ns = set_k_ns(self->epfd, CROWD_SETS, 2);
		ASSERT_LT(0, ns);
		if (ns < with)
			with = ns;
		crowd_release(self);
	}
	ksft_print_msg("%d EPOLL_CTL_MIN_EVENTS: %.2f ms with no waiter, %.2f ms with %d waiters for their first event (fastest of %d): %.2fx\n",
		       CROWD_SETS, ms_of(alone), ms_of(with), CROWD, CROWD_ROUNDS,
		       (double)with / alone);
	EXPECT_GE(CROWD_RATIO_MAX * alone, with)
		TH_LOG("a new K costs %.1fx with %d waiters (at most %dx)",
		       (double)with / alone, CROWD, CROWD_RATIO_MAX);
}

/*
 * CROWD waiters each hold the one readable item for a batch of K =
 * HOLD_K; K goes to HOLD_K + 1 and back, CROWD_HOLD_SETS times. A higher
 * K applies from the next call, and a lower one back to HOLD_K lowers no
 * holder's batch: none is woken for either.
 */
#define CROWD_HOLD_SETS	200
#define HOLD_K		33

TEST_F_TIMEOUT(crowd, new_k_costs_the_same_with_many_holders, 300)
{
	int64_t alone = INT64_MAX, with = INT64_MAX, ns;
	int r;

	SKIP_WITHOUT_MIN_WAIT();
	for (r = 0; r < CROWD_ROUNDS; r++) {
		ASSERT_EQ(0, set_min_wait(self->epfd, CROWD_MIN_WAIT_MS * 1000));
		ASSERT_LE(0, set_min_events(self->epfd, HOLD_K));
		ns = set_k_ns(self->epfd, CROWD_HOLD_SETS, HOLD_K);
		ASSERT_LT(0, ns);
		if (ns < alone)
			alone = ns;
		ASSERT_LE(0, set_min_events(self->epfd, HOLD_K));
		efd_signal(self->efd);
		ASSERT_EQ(0, crowd_start_with(self, CROWD,
					      CROWD_MIN_WAIT_MS * 1000))
			TH_LOG("%d holders did not all go to sleep", CROWD);
		ns = set_k_ns(self->epfd, CROWD_HOLD_SETS, HOLD_K);
		ASSERT_LT(0, ns);
		if (ns < with)
			with = ns;
		crowd_release(self);
	}
	ksft_print_msg("%d EPOLL_CTL_MIN_EVENTS: %.2f ms with no waiter, %.2f ms with %d holders of a short batch (fastest of %d): %.2fx\n",
		       CROWD_HOLD_SETS, ms_of(alone), ms_of(with), CROWD,
		       CROWD_ROUNDS, (double)with / alone);
	EXPECT_GE(CROWD_RATIO_MAX * alone, with)
		TH_LOG("a new K costs %.1fx with %d holders (at most %dx)",
		       (double)with / alone, CROWD, CROWD_RATIO_MAX);
}

TEST_HARNESS_MAIN
