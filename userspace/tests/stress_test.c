// SPDX-License-Identifier: GPL-2.0
/*
 * Stress, bounded in time:
 *  - load_unload_churn: the module is unloaded and loaded again and again
 *    while processes go through every prctl mode, fork, exec and exit,
 *    and threads sit in min-waits on shared epoll instances with events
 *    arriving. Unloading is refused while state exists, so the loop asks
 *    the workers to drop their state now and then and counts the unloads
 *    that then succeed;
 *  - many_instances: thousands of epoll instances with min-wait state (a
 *    min-wait, the AFTER_FIRST flag alone, or a batch target K alone),
 *    closed, reset, or dropped by their process's exit;
 *  - concurrent_threads: prctl and epoll_ctl(EPOLL_CTL_MIN_WAIT and
 *    EPOLL_CTL_MIN_EVENTS) from many threads of one process at once.
 * After each, the debugfs counters are back at their baseline and, on a
 * kernel with kmemleak, a scan finds no new leak. Splats and hung tasks
 * are caught on the console by qemu/run.
 *
 * NUMAB_STRESS_SECONDS (default 20) bounds the timed tests,
 * NUMAB_STRESS_INSTANCES (default 20000) the instance count.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define STRESS_TIMEOUT	900
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"
/* kmemleak only reports objects older than this (its min_age) */
#define KMEMLEAK_AGE_MS	5500
#define EXEC_ENV	"NUMAB_STRESS_EXEC_MODE"

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

static unsigned long stress_seconds(void)
{
	unsigned long s = env_ulong("NUMAB_STRESS_SECONDS", 20);

	return s < STRESS_TIMEOUT / 2 ? s : STRESS_TIMEOUT / 2;
}

/*
 * An exec'd churn child: exits 0 when it runs in the mode its parent set
 * (passed in EXEC_ENV), 1 when not.
 */
static void __attribute__((constructor)) exec_child_hook(void)
{
	const char *want = getenv(EXEC_ENV);

	if (!want)
		return;
	_exit(numab_get_mode() == atoi(want) ? 0 : 1);
}

/* --- kmemleak ------------------------------------------------------------ */

static int kmemleak_cmd(const char *cmd)
{
	int fd = open(KMEMLEAK, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Forget what kmemleak knows already: later scans show only new leaks. */
static void kmemleak_start(void)
{
	if (!kmemleak_cmd("scan"))
		kmemleak_cmd("clear");
}

/*
 * Scan (after the objects of the test are old enough to be reported) and
 * return the number of report lines ("unreferenced object"), or -errno
 * without kmemleak. The report goes to stderr as "# " lines.
 */
static int kmemleak_new_leaks(void)
{
	char line[256];
	int leaks = 0;
	FILE *f;

	if (access(KMEMLEAK, R_OK))
		return -errno;
	numab_sleep_ms(KMEMLEAK_AGE_MS);
	kmemleak_cmd("scan");
	kmemleak_cmd("scan");
	f = fopen(KMEMLEAK, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		fprintf(stderr, "# kmemleak: %s", line);
		if (strstr(line, "unreferenced object"))
			leaks++;
	}
	fclose(f);
	return leaks;
}

#define EXPECT_NO_NEW_LEAK() do { \
	int __leaks = kmemleak_new_leaks(); \
	if (__leaks != -ENOENT) \
		EXPECT_EQ(0, __leaks) TH_LOG("kmemleak: new leaks"); \
} while (0)

static void expect_baseline(struct __test_metadata *_metadata,
			    const struct numab_counters *base)
{
	struct numab_counters now = { 0 };

	EXPECT_TRUE(numab_counters_settle(base, &now, 3000))
		TH_LOG("counters enabled_mms %ld/%ld key_count %ld/%ld min_wait_instances %ld/%ld (now/baseline)",
		       now.enabled_mms, base->enabled_mms, now.key_count,
		       base->key_count, now.min_wait_instances,
		       base->min_wait_instances);
}

/* An instance holds min-wait state: usecs, flags or K (from fdinfo). */
static bool has_min_wait_state(int epfd)
{
	return numab_fdinfo_min_wait(epfd) > 0 ||
	       numab_fdinfo_long(epfd, NUMAB_FDINFO_FLAGS_KEY) > 0 ||
	       numab_fdinfo_long(epfd, NUMAB_FDINFO_EVENTS_KEY) > 0;
}

FIXTURE(stress) {
	struct numab_counters base;
};

FIXTURE_SETUP(stress)
{
	if (!numab_module_loaded())
		numab_modprobe();
	ASSERT_TRUE(numab_module_loaded()) TH_LOG(NUMAB_MSG_NO_MODULE);
	/* the key may still be on its lazy way out after a previous test */
	ASSERT_TRUE(numab_key_settle(&self->base, NUMAB_KEY_SETTLE_MS));
	kmemleak_start();
}

FIXTURE_TEARDOWN(stress)
{
	if (!numab_module_loaded())
		numab_modprobe();
}

/* --- load/unload under churn --------------------------------------------- */

#define CHURNERS	4
#define WAITERS		4
#define INSTANCES	2

/* Shared by the test and its worker processes. */
struct churn {
	atomic_int stop;
	atomic_int quiet;		/* set: drop all state, make no more */
	atomic_int acked[CHURNERS + 1];	/* set: this worker holds none */
	atomic_long forks, execs, mode_sets, min_wait_sets, waits;
};

/* True when the worker must hold no state; acknowledged once it holds none. */
static bool quiet_wanted(struct churn *c, int me)
{
	if (atomic_load(&c->quiet))
		return true;
	atomic_store(&c->acked[me], 0);
	return false;
}

/* One churn process: modes, fork, exec, exit. Exits 0 if all was right. */
static int churner(struct churn *c, int me, char *exe)
{
	unsigned int seed = getpid();
	int bad = 0, mode, status, ret;
	char want[16];
	pid_t pid;

	while (!atomic_load(&c->stop)) {
		if (quiet_wanted(c, me)) {
			ret = numab_set_mode(PR_SET_NUMA_BALANCING_DEFAULT);
			bad += ret && ret != -EINVAL;
			atomic_store(&c->acked[me], 1);
		} else {
			ret = numab_set_mode(rand_r(&seed) % 3);
			if (ret == -EINVAL)	/* module unloaded meanwhile */
				continue;
			bad += ret != 0;
			atomic_fetch_add(&c->mode_sets, 1);
		}
		/* without the module (EINVAL) the churn goes on in DEFAULT */
		mode = numab_get_mode();
		if (mode < 0)
			mode = PR_SET_NUMA_BALANCING_DEFAULT;
		pid = fork();
		if (pid < 0) {
			bad++;
			continue;
		}
		if (!pid) {
			if (rand_r(&seed) % 2)
				_exit(numab_get_mode() == mode ? 0 : 1);
			snprintf(want, sizeof(want), "%d", mode);
			setenv(EXEC_ENV, want, 1);
			execl(exe, exe, NULL);
			_exit(2);
		}
		atomic_fetch_add(&c->forks, 1);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) == 2) {
			bad++;
			continue;
		}
		/*
		 * The module may have gone and come back between our GET and
		 * the child's (mode DEFAULT only): a mismatch is only wrong
		 * for a mode that pins the module.
		 */
		if (WEXITSTATUS(status) &&
		    mode != PR_SET_NUMA_BALANCING_DEFAULT)
			bad++;
		atomic_fetch_add(&c->execs, 1);
	}
	numab_set_mode(PR_SET_NUMA_BALANCING_DEFAULT);
	return bad ? 1 : 0;
}

struct epoll_worker {
	struct churn *c;
	int epfd[INSTANCES];
	int efd[INSTANCES];
	int id;
	atomic_int bad;
};

static void *waiter_fn(void *arg)
{
	struct epoll_worker *w = arg;
	static atomic_int next;
	int i = atomic_fetch_add(&next, 1) % INSTANCES, n, k;
	struct epoll_event ev[4];
	uint64_t v;

	while (!atomic_load(&w->c->stop)) {
		n = epoll_wait(w->epfd[i], ev, 4, 50);
		if (n < 0 && errno != EINTR)
			atomic_fetch_add(&w->bad, 1);
		for (k = 0; k < n; k++)
			if (read(ev[k].data.fd, &v, sizeof(v)) < 0 &&
			    errno != EAGAIN)
				atomic_fetch_add(&w->bad, 1);
		atomic_fetch_add(&w->c->waits, 1);
	}
	return NULL;
}

static void *writer_fn(void *arg)
{
	struct epoll_worker *w = arg;
	uint64_t one = 1;
	int i = 0;

	while (!atomic_load(&w->c->stop)) {
		if (write(w->efd[i++ % INSTANCES], &one, sizeof(one)) < 0)
			atomic_fetch_add(&w->bad, 1);
		usleep(500);
	}
	return NULL;
}

/* Shared instances with min-waits, waiters in them, events arriving. */
static int epoll_churner(struct churn *c, int me)
{
	struct epoll_worker w = { .c = c, .id = me };
	pthread_t waiters[WAITERS], writer;
	unsigned int seed = getpid();
	bool quiet;
	long ret;
	int i;

	for (i = 0; i < INSTANCES; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		w.epfd[i] = epoll_create1(EPOLL_CLOEXEC);
		w.efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ev.data.fd = w.efd[i];
		if (w.epfd[i] < 0 || w.efd[i] < 0 ||
		    epoll_ctl(w.epfd[i], EPOLL_CTL_ADD, w.efd[i], &ev))
			return 1;
	}
	for (i = 0; i < WAITERS; i++)
		if (pthread_create(&waiters[i], NULL, waiter_fn, &w))
			return 1;
	if (pthread_create(&writer, NULL, writer_fn, &w))
		return 1;

	while (!atomic_load(&c->stop)) {
		quiet = quiet_wanted(c, me);
		for (i = 0; i < INSTANCES; i++) {
			/* both timer bases, and a batch target 0..2 */
			ret = set_min_events(w.epfd[i], quiet ? 0 :
					     rand_r(&seed) % 3);
			if (ret < 0 && ret != -EINVAL)
				atomic_fetch_add(&w.bad, 1);
			ret = set_min_wait(w.epfd[i], quiet ? 0 :
					   (200 + rand_r(&seed) % 5000) |
					   (rand_r(&seed) % 2 ?
					    EPOLL_MIN_WAIT_AFTER_FIRST : 0));
			if (ret < 0 && ret != -EINVAL)
				atomic_fetch_add(&w.bad, 1);
			if (ret >= 0)
				atomic_fetch_add(&c->min_wait_sets, 1);
		}
		if (quiet)
			atomic_store(&c->acked[me], 1);
		numab_sleep_ms(20);
	}
	for (i = 0; i < WAITERS; i++)
		pthread_join(waiters[i], NULL);
	pthread_join(writer, NULL);
	for (i = 0; i < INSTANCES; i++) {
		close(w.epfd[i]);
		close(w.efd[i]);
	}
	return atomic_load(&w.bad) ? 1 : 0;
}

static bool all_acked(struct churn *c, int ms)
{
	int i;

	for (; ms > 0; ms -= 10) {
		for (i = 0; i <= CHURNERS; i++)
			if (!atomic_load(&c->acked[i]))
				break;
		if (i > CHURNERS)
			return true;
		numab_sleep_ms(10);
	}
	return false;
}

TEST_F_TIMEOUT(stress, load_unload_churn, STRESS_TIMEOUT)
{
	unsigned long cycles = 0, refused = 0, busy_unloads = 0;
	int64_t t0 = numab_now_ns(), secs = stress_seconds();
	pid_t pids[CHURNERS + 1];
	char exe[PATH_MAX];
	struct churn *c;
	int i, status;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, sizeof(*c));

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i <= CHURNERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(i < CHURNERS ? churner(c, i, exe) :
			      epoll_churner(c, i));
	}

	while (numab_ms_since(t0) < secs * 1000) {
		numab_sleep_ms(100 + rand() % 200);
		/* with state around, an unload is refused or (rarely) finds none */
		if (!numab_delete_module()) {
			busy_unloads++;
			ASSERT_EQ(0, numab_modprobe());
		} else {
			refused++;
		}
		atomic_store(&c->quiet, 1);
		if (all_acked(c, 5000) && numab_unload_settles(3000)) {
			cycles++;
			numab_sleep_ms(rand() % 50);	/* churn without it */
		}
		if (!numab_module_loaded())
			ASSERT_EQ(0, numab_modprobe());
		atomic_store(&c->quiet, 0);
	}
	atomic_store(&c->stop, 1);
	for (i = 0; i <= CHURNERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("worker %d: status %#x", i, status);
	}
	ksft_print_msg("%lu load/unload cycles in %lld ms (%lu unloads refused, %lu unloads while running); %ld forks, %ld execs, %ld mode sets, %ld min-wait sets, %ld epoll_waits\n",
		       cycles, (long long)numab_ms_since(t0), refused,
		       busy_unloads, atomic_load(&c->forks),
		       atomic_load(&c->execs), atomic_load(&c->mode_sets),
		       atomic_load(&c->min_wait_sets), atomic_load(&c->waits));
	EXPECT_LT(0, cycles) TH_LOG("no unload succeeded");
	EXPECT_LT(0, refused) TH_LOG("no unload was refused: no state held?");
	if (!numab_module_loaded())
		ASSERT_EQ(0, numab_modprobe());
	expect_baseline(_metadata, &self->base);
	EXPECT_NO_NEW_LEAK();
	munmap(c, sizeof(*c));
}

/* --- thousands of instances ---------------------------------------------- */

#define BATCH	1000

/*
 * Create @n instances with min-wait state each, of three kinds by index:
 * a min-wait of 1 + i us, the AFTER_FIRST flag alone, K = 1 + i alone.
 * 0 or -errno.
 */
static int make_batch(int *fds, int n)
{
	long ret;
	int i;

	for (i = 0; i < n; i++) {
		fds[i] = epoll_create1(EPOLL_CLOEXEC);
		if (fds[i] < 0)
			return -errno;
		if (i % 3 == 0)
			ret = set_min_wait(fds[i], 1 + i);
		else if (i % 3 == 1)
			ret = set_min_wait(fds[i], EPOLL_MIN_WAIT_AFTER_FIRST);
		else
			ret = set_min_events(fds[i], 1 + i);
		if (ret)
			return ret < 0 ? ret : -EPROTO;
	}
	return 0;
}

/* Reset instance @i of a batch: the previous value comes back. */
static long reset_batch_one(int fd, int i)
{
	if (i % 3 == 2)
		return set_min_events(fd, 0) == 1 + i ? 0 : -EPROTO;
	return set_min_wait(fd, 0) == (i % 3 ? 0 : 1 + i) ? 0 : -EPROTO;
}

TEST_F_TIMEOUT(stress, many_instances, STRESS_TIMEOUT)
{
	unsigned long total = env_ulong("NUMAB_STRESS_INSTANCES", 20000), done;
	struct rlimit rl = { BATCH + 64, BATCH + 64 };
	struct numab_counters want, now = { 0 };
	int64_t t0 = numab_now_ns();
	int fds[BATCH], i, way = 0, status;
	pid_t pid;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	for (done = 0; done < total; done += BATCH, way = (way + 1) % 3) {
		if (way == 2) {
			/* a process with BATCH instances exits */
			fflush(stdout);
			fflush(stderr);
			pid = fork();
			ASSERT_LE(0, pid);
			if (!pid)
				_exit(make_batch(fds, BATCH) ? 1 : 0);
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
			expect_baseline(_metadata, &self->base);
			continue;
		}
		ASSERT_EQ(0, make_batch(fds, BATCH));
		want = self->base;
		want.min_wait_instances += BATCH;
		EXPECT_TRUE(numab_counters_settle(&want, &now, 0))
			TH_LOG("min_wait_instances %ld, want %ld",
			       now.min_wait_instances, want.min_wait_instances);
		if (done == 0)
			EXPECT_EQ(-EWOULDBLOCK, numab_delete_module());
		for (i = 0; i < BATCH; i++) {
			/* reset first, or closed with the state set */
			if (way == 1)
				EXPECT_EQ(0, reset_batch_one(fds[i], i))
					TH_LOG("reset of instance %d", i);
			close(fds[i]);
		}
		expect_baseline(_metadata, &self->base);
	}
	ksft_print_msg("%lu instances with min-wait state created and released in %lld ms\n",
		       done, (long long)numab_ms_since(t0));
	EXPECT_TRUE(numab_unload_settles(2000)) TH_LOG("unload refused after");
	ASSERT_EQ(0, numab_modprobe());
	EXPECT_NO_NEW_LEAK();
}

/* --- many threads, one process ------------------------------------------- */

#define THREADS		16
#define SHARED		4

struct threads {
	int shared[SHARED];
	int64_t until_ns;
	atomic_long calls, bad;
};

static void *thread_fn(void *arg)
{
	struct threads *t = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;
	struct epoll_event ev;
	int own, fd, mode, op;
	long ret;

	own = epoll_create1(EPOLL_CLOEXEC);
	if (own < 0) {
		atomic_fetch_add(&t->bad, 1);
		return NULL;
	}
	while (numab_now_ns() < t->until_ns) {
		op = rand_r(&seed) % 7;
		fd = op >= 5 ? own : t->shared[rand_r(&seed) % SHARED];
		switch (op) {
		case 0:
			ret = numab_set_mode(rand_r(&seed) % 3);
			break;
		case 1:
			mode = numab_get_mode();
			ret = mode < 0 || mode > 2 ? -1 : 0;
			break;
		case 2:
			/* short timeouts: a min-wait of up to 2 ms applies */
			ret = epoll_wait(fd, &ev, 1, rand_r(&seed) % 3);
			break;
		case 3:
		case 5:
			ret = set_min_wait(fd, rand_r(&seed) % 3 ?
					   (rand_r(&seed) % 2000) |
					   (rand_r(&seed) % 2 ?
					    EPOLL_MIN_WAIT_AFTER_FIRST : 0) :
					   0);
			ret = ret < 0 ? ret : 0;
			break;
		default:
			ret = set_min_events(fd, rand_r(&seed) % 3);
			ret = ret < 0 ? ret : 0;
			break;
		}
		atomic_fetch_add(&t->calls, 1);
		if (ret < 0)
			atomic_fetch_add(&t->bad, 1);
	}
	/* the own instance goes with its min-wait, if any */
	close(own);
	return NULL;
}

TEST_F_TIMEOUT(stress, concurrent_threads, STRESS_TIMEOUT)
{
	struct numab_counters want, now = { 0 };
	struct threads t = { 0 };
	pthread_t th[THREADS];
	int i, mode, set = 0;
	long v;

	for (i = 0; i < SHARED; i++) {
		t.shared[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, t.shared[i]);
	}
	t.until_ns = numab_now_ns() + stress_seconds() * 500000000LL;
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_fn, &t));
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	ksft_print_msg("%ld calls from %d threads\n", atomic_load(&t.calls),
		       THREADS);
	EXPECT_EQ(0, atomic_load(&t.bad));

	/* the state is what the last calls left */
	mode = numab_get_mode();
	EXPECT_EQ(mode, numab_status_mode(0));
	for (i = 0; i < SHARED; i++) {
		v = numab_fdinfo_min_wait(t.shared[i]);
		EXPECT_TRUE(v == -ENOENT || v > 0);
		set += has_min_wait_state(t.shared[i]);
	}
	want = self->base;
	want.min_wait_instances += set;
	want.enabled_mms += mode == PR_SET_NUMA_BALANCING_ENABLED;
	want.key_count += mode == PR_SET_NUMA_BALANCING_ENABLED;
	EXPECT_TRUE(numab_counters_settle(&want, &now, NUMAB_KEY_SETTLE_MS))
		TH_LOG("enabled_mms %ld/%ld key_count %ld/%ld min_wait_instances %ld/%ld (now/want)",
		       now.enabled_mms, want.enabled_mms, now.key_count,
		       want.key_count, now.min_wait_instances,
		       want.min_wait_instances);

	EXPECT_EQ(0, numab_set_mode(PR_SET_NUMA_BALANCING_DEFAULT));
	for (i = 0; i < SHARED; i++)
		close(t.shared[i]);
	expect_baseline(_metadata, &self->base);
	EXPECT_NO_NEW_LEAK();
}

TEST_HARNESS_MAIN
