// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_NUMA_BALANCING): the API table of SPEC section 1, the
 * NumaB_mode status line, inheritance over fork/exec/threads, the static
 * key accounting (one reference while any mm is ENABLED, released about a
 * second after the last one goes) and module unload rules.
 *
 * Needs the numab_minwait module loaded and debugfs mounted; the tests of
 * the "module not loaded" rows unload it themselves and load it back.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "numab_module_fixture.h"

#define SYSCTL_NUMA_BALANCING	NUMAB_SYSCTL_NUMA_BALANCING
#define EXEC_ENV		"NUMAB_TEST_EXEC"

#define MODE_DIS	PR_SET_NUMA_BALANCING_DISABLED
#define MODE_EN		PR_SET_NUMA_BALANCING_ENABLED
#define MODE_DEF	PR_SET_NUMA_BALANCING_DEFAULT

#define ASSERT_COUNTERS(c) \
	ASSERT_EQ(0, numab_read_counters(c)) \
		TH_LOG("cannot read %s", NUMAB_DEBUGFS_COUNTERS)

/*
 * When this binary is re-executed with NUMAB_TEST_EXEC set, it does one
 * small job and exits before the harness starts:
 *   report   exit status = current mode, checked against the status line
 *   set:<m>  set mode m and check it; exit 0 on success
 */
static void __attribute__((constructor)) exec_hook(void)
{
	const char *what;
	int m;

	numab_held_exec_hook();
	what = getenv(EXEC_ENV);
	if (!what)
		return;
	if (!strcmp(what, "report")) {
		m = numab_get_mode();
		if (m < 0)
			_exit(20);
		if (numab_status_mode(0) != m)
			_exit(21);
		_exit(m);
	}
	if (sscanf(what, "set:%d", &m) == 1)
		_exit(numab_set_mode(m) || numab_get_mode() != m ? 30 : 0);
	_exit(40);
}

/* Fork, exec this binary with NUMAB_TEST_EXEC=@what; its exit status. */
static int exec_self(const char *what)
{
	char *const argv[] = { "numab-exec", NULL };
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		setenv(EXEC_ENV, what, 1);
		execv("/proc/self/exe", argv);
		_exit(126);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A call that must fail with @err and leave the mode at @mode. */
static void expect_rejected(struct __test_metadata *_metadata,
			    unsigned long op, unsigned long a3,
			    unsigned long a4, unsigned long a5,
			    int err, int mode)
{
	int ret, e;

	errno = 0;
	ret = numab_prctl(op, a3, a4, a5);
	e = errno;
	EXPECT_EQ(-1, ret)
		TH_LOG("prctl(%#x, %#lx, %#lx, %#lx, %#lx) succeeded",
		       PR_NUMA_BALANCING, op, a3, a4, a5);
	EXPECT_EQ(err, e)
		TH_LOG("prctl(%#x, %#lx, %#lx, %#lx, %#lx): %s",
		       PR_NUMA_BALANCING, op, a3, a4, a5, strerror(e));
	EXPECT_EQ(mode, numab_get_mode())
		TH_LOG("mode changed by rejected prctl(%#x, %#lx, ...)",
		       PR_NUMA_BALANCING, op);
}

static int read_sysctl(void)
{
	long v = -1;

	if (numab_read_long(SYSCTL_NUMA_BALANCING, &v))
		return -1;
	return (int)v;
}

/*
 * key_count must settle to (sysctl != 0) + key_held, key_held to
 * (enabled_mms > 0). Leaves the counters in @c.
 */
static void expect_key_consistent(struct __test_metadata *_metadata,
				  struct numab_counters *c)
{
	EXPECT_TRUE(numab_key_settle(c, NUMAB_KEY_SETTLE_MS))
		TH_LOG("key_count %ld key_held %ld enabled_mms %ld sysctl %d: want key_count = (sysctl != 0) + key_held, key_held = (enabled_mms > 0)",
		       c->key_count, c->key_held, c->enabled_mms, read_sysctl());
}

/* Counters with the key settled, as the baseline of a test. */
#define ASSERT_SETTLED(c) \
	ASSERT_TRUE(numab_key_settle(c, NUMAB_KEY_SETTLE_MS)) \
		TH_LOG("key never settled: key_count %ld key_held %ld enabled_mms %ld", \
		       (c)->key_count, (c)->key_held, (c)->enabled_mms)

/* Back to @before, the key's lazy release included. */
#define EXPECT_BACK_TO(before, after) \
	EXPECT_TRUE(numab_counters_settle(before, after, NUMAB_KEY_SETTLE_MS)) \
		TH_LOG("enabled_mms %ld key_count %ld min_wait %ld, were %ld %ld %ld", \
		       (after)->enabled_mms, (after)->key_count, \
		       (after)->min_wait_instances, (before)->enabled_mms, \
		       (before)->key_count, (before)->min_wait_instances)

TEST(get_initial_default)
{
	ASSERT_MODULE();
	EXPECT_EQ(MODE_DEF, numab_get_mode());
	EXPECT_EQ(MODE_DEF, numab_status_mode(0));
}

TEST(set_get_each_mode)
{
	static const int seq[] = { MODE_DIS, MODE_EN, MODE_DEF, MODE_DIS,
				   MODE_DIS, MODE_DEF, MODE_EN, MODE_EN,
				   MODE_DIS, MODE_DEF };
	char path[64];
	size_t i;

	ASSERT_MODULE();
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", gettid());
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		EXPECT_EQ(0, numab_set_mode(seq[i]));
		EXPECT_EQ(seq[i], numab_get_mode());
		EXPECT_EQ(seq[i], numab_status_mode(0))
			TH_LOG("status line does not say %s",
			       numab_mode_name(seq[i]));
		EXPECT_EQ(seq[i], numab_status_mode_path(path));
	}
}

/*
 * The tagged option number and, on 6.1, the postings' 65 as well (later
 * kernels gave 65 to PR_SET_MDWE, so it is not called there): both reach
 * the same mode.
 */
TEST(option_numbers)
{
	static const int opts[] = { PR_NUMA_BALANCING,
				    PR_NUMA_BALANCING_LEGACY };
	struct utsname u;
	size_t set, get, n;
	int m, mode;

	ASSERT_MODULE();
	ASSERT_EQ(0, uname(&u));
	n = strncmp(u.release, "6.1.", 4) ? 1 : ARRAY_SIZE(opts);
	for (set = 0; set < n; set++) {
		for (m = MODE_DIS; m <= MODE_DEF; m++) {
			EXPECT_EQ(0, prctl(opts[set], m, 0, 0, 0))
				TH_LOG("prctl(%#x, %d): %s", opts[set], m,
				       strerror(errno));
			EXPECT_EQ(m, numab_status_mode(0));
			for (get = 0; get < n; get++) {
				mode = -1;
				EXPECT_EQ(0, prctl(opts[get],
						   PR_GET_NUMA_BALANCING,
						   (unsigned long)&mode, 0, 0))
					TH_LOG("prctl(%#x, GET): %s", opts[get],
					       strerror(errno));
				EXPECT_EQ(m, mode)
					TH_LOG("set with %#x, got with %#x",
					       opts[set], opts[get]);
			}
		}
	}
}

TEST(get_bad_pointer_efault)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned long bad[4];
	char *ro, *gone;
	size_t i;

	ASSERT_MODULE();
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, pg));
	bad[0] = 0;				/* NULL */
	bad[1] = (unsigned long)ro;		/* read-only */
	bad[2] = (unsigned long)gone;		/* unmapped */
	bad[3] = 0xffff888000000000UL;		/* kernel address */

	ASSERT_EQ(0, numab_set_mode(MODE_DIS));
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		expect_rejected(_metadata, PR_GET_NUMA_BALANCING, bad[i], 0, 0,
				EFAULT, MODE_DIS);
	EXPECT_EQ(0, numab_set_mode(MODE_DEF));
	munmap(ro, pg);
}

TEST(invalid_op_einval)
{
	static const unsigned long ops[] = {
		4, 5, 64, 65, 1000, INT_MAX, (unsigned long)INT_MAX + 1,
		1UL << 32, (1UL << 32) | MODE_EN, (1UL << 32) | MODE_DIS,
		ULONG_MAX, ULONG_MAX - 1,
	};
	struct numab_counters before = { 0 }, after = { 0 };
	size_t i;
	int start;

	ASSERT_MODULE();
	ASSERT_SETTLED(&before);
	for (start = MODE_DIS; start <= MODE_DEF; start++) {
		ASSERT_EQ(0, numab_set_mode(start));
		for (i = 0; i < ARRAY_SIZE(ops); i++)
			expect_rejected(_metadata, ops[i], 0, 0, 0,
					EINVAL, start);
	}
	EXPECT_BACK_TO(&before, &after);
}

TEST(unused_args_einval)
{
	static const unsigned long vals[] = { 1, 0x100, ULONG_MAX };
	struct numab_counters before = { 0 }, after = { 0 };
	int start, op, sentinel;
	size_t i;

	ASSERT_MODULE();
	ASSERT_SETTLED(&before);
	for (start = MODE_DIS; start <= MODE_DEF; start++) {
		ASSERT_EQ(0, numab_set_mode(start));
		for (op = MODE_DIS; op <= MODE_DEF; op++) {
			for (i = 0; i < ARRAY_SIZE(vals); i++) {
				expect_rejected(_metadata, op, vals[i], 0, 0,
						EINVAL, start);
				expect_rejected(_metadata, op, 0, vals[i], 0,
						EINVAL, start);
				expect_rejected(_metadata, op, 0, 0, vals[i],
						EINVAL, start);
			}
		}
		/* GET: arg4 and arg5 must be 0; nothing is stored. */
		for (i = 0; i < ARRAY_SIZE(vals); i++) {
			sentinel = -7;
			expect_rejected(_metadata, PR_GET_NUMA_BALANCING,
					(unsigned long)&sentinel, vals[i], 0,
					EINVAL, start);
			EXPECT_EQ(-7, sentinel);
			expect_rejected(_metadata, PR_GET_NUMA_BALANCING,
					(unsigned long)&sentinel, 0, vals[i],
					EINVAL, start);
			EXPECT_EQ(-7, sentinel);
		}
	}
	ASSERT_EQ(0, numab_set_mode(MODE_DEF));
	EXPECT_BACK_TO(&before, &after);
}

TEST(status_of_other_pid)
{
	struct numab_held h;
	int m;

	ASSERT_MODULE();
	ASSERT_EQ(0, numab_held_start(&h, -1));
	EXPECT_EQ(MODE_DEF, numab_status_mode(h.pid));
	for (m = MODE_DIS; m <= MODE_DEF; m++) {
		EXPECT_EQ('k', numab_held_cmd(&h, (char)('0' + m)));
		EXPECT_EQ(m, numab_status_mode(h.pid))
			TH_LOG("/proc/%d/status does not say %s", h.pid,
			       numab_mode_name(m));
		/* The caller has its own mm: untouched. */
		EXPECT_EQ(MODE_DEF, numab_status_mode(0));
		EXPECT_EQ(MODE_DEF, numab_get_mode());
	}
	EXPECT_EQ('k', numab_held_cmd(&h, '1'));
	EXPECT_EQ(0, numab_held_stop(&h));
}

TEST(inherit_over_fork)
{
	int m, status;
	pid_t pid;

	ASSERT_MODULE();
	for (m = MODE_DIS; m <= MODE_DEF; m++) {
		ASSERT_EQ(0, numab_set_mode(m));
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int got = numab_get_mode();

			if (got != m || numab_status_mode(0) != m)
				_exit(10 + (got < 0 ? 9 : got));
			/* The child's change stays in the child. */
			_exit(numab_set_mode((m + 1) % 3) ? 20 : 0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("child did not inherit %s", numab_mode_name(m));
		EXPECT_EQ(m, numab_get_mode());
	}
}

TEST(kept_across_exec)
{
	int m;

	ASSERT_MODULE();
	for (m = MODE_DIS; m <= MODE_DEF; m++) {
		ASSERT_EQ(0, numab_set_mode(m));
		EXPECT_EQ(m, exec_self("report"))
			TH_LOG("exec'd program lost mode %s",
			       numab_mode_name(m));
	}
	/* An exec'd program may change its own mode, not ours. */
	ASSERT_EQ(0, numab_set_mode(MODE_DIS));
	EXPECT_EQ(0, exec_self("set:1"));
	EXPECT_EQ(MODE_DIS, numab_get_mode());
	ASSERT_EQ(0, numab_set_mode(MODE_DEF));
}

struct thread_ctx {
	pthread_barrier_t set, checked;
	int seen;
	pid_t tid;
};

static void *mode_thread(void *arg)
{
	struct thread_ctx *t = arg;

	t->tid = gettid();
	t->seen = numab_get_mode();
	numab_set_mode(MODE_EN);
	pthread_barrier_wait(&t->set);
	pthread_barrier_wait(&t->checked);
	return NULL;
}

TEST(threads_share_mode)
{
	struct numab_counters before = { 0 }, during = { 0 };
	struct numab_counters after = { 0 };
	struct thread_ctx t = { .seen = -1 };
	char path[64];
	pthread_t th;

	ASSERT_MODULE();
	ASSERT_SETTLED(&before);
	ASSERT_EQ(0, numab_set_mode(MODE_DIS));
	pthread_barrier_init(&t.set, NULL, 2);
	pthread_barrier_init(&t.checked, NULL, 2);
	ASSERT_EQ(0, pthread_create(&th, NULL, mode_thread, &t));
	pthread_barrier_wait(&t.set);

	/* The new thread saw the mode set before it existed ... */
	EXPECT_EQ(MODE_DIS, t.seen);
	/* ... and its change is the whole process's. */
	EXPECT_EQ(MODE_EN, numab_get_mode());
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", t.tid);
	EXPECT_EQ(MODE_EN, numab_status_mode_path(path));
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", gettid());
	EXPECT_EQ(MODE_EN, numab_status_mode_path(path));
	/* One mm, two threads: counted once. */
	ASSERT_COUNTERS(&during);
	EXPECT_EQ(before.enabled_mms + 1, during.enabled_mms);
	expect_key_consistent(_metadata, &during);

	pthread_barrier_wait(&t.checked);
	pthread_join(th, NULL);
	EXPECT_EQ(0, numab_set_mode(MODE_DEF));
	EXPECT_BACK_TO(&before, &after);
}

/*
 * enabled_mms must reach @base's + @delta, and the key follow it: one
 * reference however many mms are ENABLED, none a while after the last.
 */
static void expect_delta(struct __test_metadata *_metadata,
			 const struct numab_counters *base, long delta,
			 const char *what)
{
	long want = base->enabled_mms + delta;
	struct numab_counters now = { 0 };
	int ms;

	for (ms = 0; ms < NUMAB_KEY_SETTLE_MS; ms += 20) {
		if (numab_key_settle(&now, 0) && now.enabled_mms == want)
			return;
		usleep(20000);
	}
	EXPECT_EQ(want, now.enabled_mms) TH_LOG("%s", what);
	expect_key_consistent(_metadata, &now);
	EXPECT_EQ(base->key_count + (want > 0), now.key_count)
		TH_LOG("%s: key_count %ld key_held %ld with %ld mms enabled",
		       what, now.key_count, now.key_held, now.enabled_mms);
}

TEST(key_accounting_exact)
{
	struct numab_counters base = { 0 };
	struct numab_held a, b;

	ASSERT_MODULE();
	ASSERT_SETTLED(&base);
	ASSERT_EQ(0, base.enabled_mms) TH_LOG("an mm outside the test is ENABLED");

	ASSERT_EQ(0, numab_held_start(&a, MODE_EN));
	expect_delta(_metadata, &base, 1, "one mm enabled");
	EXPECT_EQ('k', numab_held_cmd(&a, '1'));
	expect_delta(_metadata, &base, 1, "enabled twice");
	EXPECT_EQ('k', numab_held_cmd(&a, '0'));
	expect_delta(_metadata, &base, 0, "enabled -> disabled");
	EXPECT_EQ('k', numab_held_cmd(&a, '1'));
	expect_delta(_metadata, &base, 1, "disabled -> enabled");
	EXPECT_EQ('k', numab_held_cmd(&a, '2'));
	expect_delta(_metadata, &base, 0, "enabled -> default");
	EXPECT_EQ('k', numab_held_cmd(&a, '1'));

	/* fork: the new mm inherits ENABLED, the key keeps one reference */
	ASSERT_EQ(0, numab_set_mode(MODE_EN));
	expect_delta(_metadata, &base, 2, "caller enabled");
	ASSERT_EQ(0, numab_held_start(&b, -1));
	expect_delta(_metadata, &base, 3, "forked an enabled mm");
	EXPECT_EQ('1', numab_held_cmd(&b, 'g'));

	/* exec: the old mm goes, the new one inherits ENABLED */
	EXPECT_EQ('k', numab_held_cmd(&b, 'x'));
	EXPECT_EQ('1', numab_held_cmd(&b, 'g'));
	expect_delta(_metadata, &base, 3, "exec of an enabled mm");

	/* exits while enabled: the key goes with the last ENABLED mm */
	numab_held_stop(&b);
	expect_delta(_metadata, &base, 2, "enabled mm exited");
	numab_held_stop(&a);
	expect_delta(_metadata, &base, 1, "enabled mm exited");
	ASSERT_EQ(0, numab_set_mode(MODE_DEF));
	expect_delta(_metadata, &base, 0, "all back to default");
}

FIXTURE(sysctl) {
	int saved;
};

FIXTURE_SETUP(sysctl)
{
	self->saved = read_sysctl();
	ASSERT_LE(0, self->saved) TH_LOG("cannot read %s",
					 SYSCTL_NUMA_BALANCING);
}

FIXTURE_TEARDOWN(sysctl)
{
	if (self->saved >= 0 && read_sysctl() != self->saved)
		numab_write_long(SYSCTL_NUMA_BALANCING, self->saved);
}

TEST_F(sysctl, key_follows_global_switch)
{
	static const int seq[] = { 0, 1, 2, 3, 1, 0, 0, 3, 0, 2 };
	struct numab_counters c = { 0 };
	struct numab_held h;
	size_t i;

	ASSERT_MODULE();
	ASSERT_EQ(0, numab_held_start(&h, MODE_EN));
	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		ASSERT_EQ(0, numab_write_long(SYSCTL_NUMA_BALANCING, seq[i]));
		expect_key_consistent(_metadata, &c);
		EXPECT_EQ((seq[i] != 0) + 1, c.key_count)
			TH_LOG("sysctl %d, one mm ENABLED", seq[i]);
	}
	/* With the global switch off, only the ENABLED mm holds the key. */
	ASSERT_EQ(0, numab_write_long(SYSCTL_NUMA_BALANCING, 0));
	numab_held_stop(&h);
	expect_key_consistent(_metadata, &c);
	EXPECT_EQ(0, c.key_count) TH_LOG("the key outlived the ENABLED mm");
}

/* --- churn: modes, forks, execs and exits in many processes at once --- */

#define CHURN_WORKERS	8
#define CHURN_ITERS	200

static int churn_clone_fn(void *arg)
{
	return numab_set_mode(*(int *)arg) ? 1 : 0;
}

static void *churn_thread_fn(void *arg)
{
	return (void *)(long)numab_set_mode(*(int *)arg);
}

/* One step of the churn; returns the number of errors seen. */
static int churn_step(unsigned int *seed, int iter)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int m = rand_r(seed) % 3, op = rand_r(seed) % 7, status;
	char what[16];
	pthread_t th;
	void *ret;
	pid_t pid;

	switch (op) {
	case 0:
	case 1:
		return numab_set_mode(m) ? 1 : 0;
	case 2:
	case 3:
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			_exit(op == 2 && numab_set_mode(m) ? 1 : 0);
		break;
	case 4:
		if (pthread_create(&th, NULL, churn_thread_fn, &m))
			return 1;
		pthread_join(th, &ret);
		return ret ? 1 : 0;
	case 5:
		/* a CLONE_VM child changes the mode of the shared mm */
		pid = clone(churn_clone_fn, stack + sizeof(stack),
			    CLONE_VM | SIGCHLD, &m);
		if (pid < 0)
			return 1;
		break;
	default:
		if (iter % 4)
			return numab_set_mode(m) ? 1 : 0;
		snprintf(what, sizeof(what), "set:%d", m);
		return exec_self(what) ? 1 : 0;
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}

static void churn_worker(int id)
{
	unsigned int seed = 0x9e3779b9u * (id + 1);
	int i, errors = 0;

	for (i = 0; i < CHURN_ITERS; i++)
		errors += churn_step(&seed, i);
	/* exit with a random mode still set */
	errors += numab_set_mode(rand_r(&seed) % 3) ? 1 : 0;
	_exit(errors > 100 ? 100 : errors);
}

FIXTURE(churn) {
	int unused;
};

FIXTURE_SETUP(churn)
{
}

FIXTURE_TEARDOWN(churn)
{
}

TEST_F_TIMEOUT(churn, counters_unchanged_after_churn, 240)
{
	struct numab_counters before = { 0 }, after = { 0 };
	pid_t pids[CHURN_WORKERS];
	int i, status;
	int64_t t0;

	ASSERT_MODULE();
	ASSERT_SETTLED(&before);
	t0 = numab_now_ns();
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < CHURN_WORKERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			churn_worker(i);
	}
	for (i = 0; i < CHURN_WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("worker %d: %d failed calls", i,
			       WEXITSTATUS(status));
	}
	TH_LOG("%d workers x %d iterations in %lld ms", CHURN_WORKERS,
	       CHURN_ITERS, (long long)numab_ms_since(t0));
	EXPECT_BACK_TO(&before, &after);
	expect_key_consistent(_metadata, &after);
}

/* --- module unload ------------------------------------------------------ */

TEST_F(module, unload_refused_while_mode_set)
{
	struct numab_held h;

	ASSERT_EQ(0, numab_held_start(&h, MODE_DIS));
	numab_expect_unload_refused(_metadata, "a process is DISABLED");
	EXPECT_EQ('k', numab_held_cmd(&h, '1'));
	numab_expect_unload_refused(_metadata, "a process is ENABLED");

	/* Back to default: unload is allowed, the process lives on. */
	EXPECT_EQ('k', numab_held_cmd(&h, '2'));
	EXPECT_EQ(0, numab_rmmod());
	EXPECT_FALSE(numab_module_loaded());
	EXPECT_EQ('e', numab_held_cmd(&h, 'g'));
	EXPECT_EQ(MODE_DEF, numab_status_mode(h.pid));
	ASSERT_EQ(0, numab_modprobe());
	ASSERT_TRUE(numab_module_loaded());
	EXPECT_EQ(MODE_DEF, numab_status_mode(h.pid));

	/* An mm freed while DISABLED/ENABLED gives its reference back. */
	EXPECT_EQ('k', numab_held_cmd(&h, '1'));
	numab_expect_unload_refused(_metadata, "a process is ENABLED again");
	numab_held_stop(&h);
	EXPECT_TRUE(numab_unload_settles(NUMAB_KEY_SETTLE_MS))
		TH_LOG("unload still refused after the ENABLED process exited");
	EXPECT_EQ(0, numab_modprobe());
}

TEST_F(module, calls_without_module)
{
	struct numab_counters c = { 0 };
	struct numab_held h;
	int m, sentinel = -7;
	long s = -1;

	ASSERT_EQ(0, numab_rmmod()) TH_LOG("cannot unload the module");
	ASSERT_FALSE(numab_module_loaded());

	/* Every call is an unknown prctl option now. */
	for (m = MODE_DIS; m <= MODE_DEF; m++)
		expect_rejected(_metadata, m, 0, 0, 0, EINVAL, -EINVAL);
	expect_rejected(_metadata, PR_GET_NUMA_BALANCING,
			(unsigned long)&sentinel, 0, 0, EINVAL, -EINVAL);
	EXPECT_EQ(-7, sentinel);
	expect_rejected(_metadata, PR_GET_NUMA_BALANCING, 0, 0, 0,
			EINVAL, -EINVAL);
	expect_rejected(_metadata, 4, 0, 0, 0, EINVAL, -EINVAL);

	/* The status line does not depend on the module. */
	EXPECT_EQ(MODE_DEF, numab_status_mode(0));
	ASSERT_EQ(0, numab_held_start(&h, -1));
	EXPECT_EQ(MODE_DEF, numab_status_mode(h.pid));
	EXPECT_EQ('e', numab_held_cmd(&h, '1'));
	EXPECT_EQ(MODE_DEF, numab_status_mode(h.pid));

	/* Loaded again: works, and starts from clean counters. */
	ASSERT_EQ(0, numab_modprobe());
	ASSERT_TRUE(numab_module_loaded());
	EXPECT_EQ(MODE_DEF, numab_get_mode());
	EXPECT_EQ('k', numab_held_cmd(&h, '0'));
	EXPECT_EQ(MODE_DIS, numab_status_mode(h.pid));
	EXPECT_EQ('k', numab_held_cmd(&h, '2'));
	numab_held_stop(&h);
	expect_key_consistent(_metadata, &c);
	EXPECT_EQ(0, c.enabled_mms);
	ASSERT_EQ(0, numab_read_long(SYSCTL_NUMA_BALANCING, &s));
	EXPECT_EQ(s != 0, c.key_count);
}

TEST_HARNESS_MAIN
