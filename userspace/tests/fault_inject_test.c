// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures (CONFIG_FAULT_INJECTION: failslab and
 * fail_page_alloc, made to fail every GFP and order) injected at each
 * point in turn with /proc/thread-self/fail-nth: the N-th fault-injection
 * point the task passes fails, for N = 1, 2, ... until the operation no
 * longer reaches N points.
 *
 *  - module_load: finit_module() of numab_minwait.ko either loads a module
 *    that works (its debugfs file is best effort) and unloads, or fails
 *    leaving nothing: prctl and EPOLL_CTL_MIN_WAIT answer EINVAL, no
 *    /sys/module entry, no debugfs folder;
 *  - first_min_wait: epoll_create1, the first EPOLL_CTL_MIN_WAIT, a wait
 *    in it and close: each call succeeds or fails with ENOMEM, and the
 *    counters are back at their baseline;
 *  - disabled_fork, enabled_fork: a process in DISABLED or ENABLED mode
 *    forks; a fork failing after the child's mm took the mode must give
 *    it back;
 *  - disabled_exec, enabled_exec: a process in DISABLED or ENABLED mode
 *    execs; an execve() failing after the new mm inherited the mode must
 *    give it back, also where the new mm never had a user (bprm_mm_init()
 *    frees it with mmdrop(), not mmput()).
 * "Give it back": enabled_mms, min_wait_instances and the module's refcnt
 * as before each point, and the static key settled at its baseline after
 * the last one. The other ways an mm goes without __mmput() (the x86 text
 * poking mm, debug_vm_pgtable's) are boot-time mms that never leave DEFAULT.
 * Skipped on a kernel without fault injection (the main guest kernel);
 * `make check-debug` runs it.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/epoll.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "epoll_test_util.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc"
#define MAX_POINTS	5000
/* The mm is set up within execve()'s first few allocations. */
#define EXEC_POINTS	60
#define EXEC_ENV	"NUMAB_FAULT_EXEC"

/* The fault attributes set up for the test, with their previous values. */
struct fault_knob {
	const char *path;
	long value;
	long saved;
};

static struct fault_knob knobs[] = {
	{ .path = FAILSLAB "/ignore-gfp-wait", .value = 0 },
	{ .path = FAILSLAB "/verbose", .value = 0 },
	{ .path = FAIL_PAGE_ALLOC "/ignore-gfp-wait", .value = 0 },
	{ .path = FAIL_PAGE_ALLOC "/ignore-gfp-highmem", .value = 0 },
	{ .path = FAIL_PAGE_ALLOC "/min-order", .value = 0 },
	{ .path = FAIL_PAGE_ALLOC "/verbose", .value = 0 },
};

#define N_KNOBS (sizeof(knobs) / sizeof(knobs[0]))

/* Booleans read back as Y/N. */
static int read_knob(const char *path, long *v)
{
	char buf[16] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	*v = buf[0] == 'Y' ? 1 : buf[0] == 'N' ? 0 : strtol(buf, NULL, 10);
	return 0;
}

/* Arm the N-th fault point of this thread (0 disarms). */
static int fail_nth_set(unsigned int n)
{
	return numab_write_long(FAIL_NTH, n);
}

/* Exit statuses of a child that execs with a failure armed. */
enum { EXEC_FAILED = 10, EXEC_RAN, EXEC_SETUP };

/*
 * An exec that went through: disarm what is left (the open may itself be
 * the failing point, which disarms as well) and say so.
 */
static void __attribute__((constructor)) exec_hook(void)
{
	if (!getenv(EXEC_ENV))
		return;
	if (fail_nth_set(0))
		fail_nth_set(0);
	_exit(EXEC_RAN);
}

/* What is left of the count: 0 once the failure was injected. */
static long fail_nth_left(void)
{
	long v = -1;

	return numab_read_long(FAIL_NTH, &v) ? -1 : v;
}

FIXTURE(faults) {
	struct numab_counters base;
	long base_refcnt;
	bool armed;	/* fault injection available and set up */
};

/* The 6.1 harness runs the test even when its setup skips: skip here. */
#define SKIP_UNLESS_ARMED() do { \
	if (!self->armed) \
		SKIP(return, "no fault injection (%s, %s, %s)", FAIL_NTH, \
		     FAILSLAB, FAIL_PAGE_ALLOC); \
} while (0)

FIXTURE_SETUP(faults)
{
	unsigned int i;

	self->armed = false;
	if (access(FAIL_NTH, W_OK) || access(FAILSLAB, F_OK) ||
	    access(FAIL_PAGE_ALLOC, F_OK))
		return;
	if (!numab_module_loaded())
		numab_modprobe();
	ASSERT_TRUE(numab_module_loaded()) TH_LOG(NUMAB_MSG_NO_MODULE);
	ASSERT_TRUE(numab_key_settle(&self->base, NUMAB_KEY_SETTLE_MS));
	self->base_refcnt = numab_module_refcnt();
	for (i = 0; i < N_KNOBS; i++) {
		ASSERT_EQ(0, read_knob(knobs[i].path, &knobs[i].saved))
			TH_LOG("%s", knobs[i].path);
		ASSERT_EQ(0, numab_write_long(knobs[i].path, knobs[i].value))
			TH_LOG("%s", knobs[i].path);
	}
	self->armed = true;
}

FIXTURE_TEARDOWN(faults)
{
	unsigned int i;

	if (!self->armed)
		return;
	fail_nth_set(0);
	for (i = 0; i < N_KNOBS; i++)
		numab_write_long(knobs[i].path, knobs[i].saved);
	if (!numab_module_loaded())
		numab_modprobe();
}

static int open_module_file(void)
{
	struct utsname u;
	char path[256];

	if (uname(&u))
		return -errno;
	snprintf(path, sizeof(path), "/lib/modules/%s/extra/%s.ko", u.release,
		 NUMAB_MODULE_NAME);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Nothing of the module is left. */
static void expect_no_module(struct __test_metadata *_metadata, int n)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	EXPECT_EQ(-EINVAL, numab_get_mode()) TH_LOG("point %d", n);
	EXPECT_EQ(-EINVAL, set_min_wait(epfd, 1000)) TH_LOG("point %d", n);
	EXPECT_NE(0, access("/sys/module/" NUMAB_MODULE_NAME, F_OK))
		TH_LOG("point %d", n);
	EXPECT_NE(0, access(NUMAB_DEBUGFS_DIR, F_OK)) TH_LOG("point %d", n);
	close(epfd);
}

/* The module that did load works, then unloads. */
static void expect_working_module(struct __test_metadata *_metadata, int n,
				  int *without_debugfs)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct numab_counters c;

	EXPECT_EQ(PR_SET_NUMA_BALANCING_DEFAULT, numab_get_mode())
		TH_LOG("point %d", n);
	EXPECT_EQ(0, numab_set_mode(PR_SET_NUMA_BALANCING_DISABLED));
	EXPECT_EQ(0, numab_set_mode(PR_SET_NUMA_BALANCING_DEFAULT));
	EXPECT_EQ(0, set_min_wait(epfd, 1000)) TH_LOG("point %d", n);
	EXPECT_EQ(1000, set_min_wait(epfd, 0)) TH_LOG("point %d", n);
	close(epfd);
	if (numab_read_counters(&c))
		(*without_debugfs)++;
	EXPECT_TRUE(numab_unload_settles(2000)) TH_LOG("point %d", n);
}

TEST_F_TIMEOUT(faults, module_load, 900)
{
	int fd, n, ret, err, failed = 0, without_debugfs = 0;
	long left = 0;

	SKIP_UNLESS_ARMED();

	fd = open_module_file();
	ASSERT_LE(0, fd) TH_LOG("%s.ko: %s", NUMAB_MODULE_NAME,
				strerror(errno));
	ASSERT_TRUE(numab_unload_settles(2000));
	for (n = 1; n <= MAX_POINTS; n++) {
		ASSERT_EQ(0, fail_nth_set(n));
		ret = syscall(SYS_finit_module, fd, "", 0);
		err = errno;
		left = fail_nth_left();
		fail_nth_set(0);
		if (ret) {
			failed++;
			EXPECT_TRUE(err == ENOMEM || err == EFAULT)
				TH_LOG("point %d: finit_module: %s", n,
				       strerror(err));
			expect_no_module(_metadata, n);
		} else {
			expect_working_module(_metadata, n, &without_debugfs);
		}
		if (left > 0)	/* the load no longer reached point n */
			break;
	}
	close(fd);
	fprintf(stderr, "# module load: %d fault points, %d loads failed cleanly, %d loaded (%d without the debugfs file)\n",
		       n - 1, failed, n - failed, without_debugfs);
	EXPECT_LT(0, left) TH_LOG("more than %d fault points", MAX_POINTS);
	EXPECT_EQ(0, ret) TH_LOG("the load without a failure failed");
	ASSERT_EQ(0, numab_modprobe());
	ASSERT_EQ(0, numab_read_counters(&self->base));
}

TEST_F_TIMEOUT(faults, first_min_wait, 900)
{
	struct numab_counters now = { 0 };
	int n, epfd, err, failed = 0;
	struct epoll_event ev;
	long left = 0, ret;

	SKIP_UNLESS_ARMED();

	for (n = 1; n <= MAX_POINTS; n++) {
		ASSERT_EQ(0, fail_nth_set(n));
		epfd = epoll_create1(EPOLL_CLOEXEC);
		err = errno;
		if (epfd >= 0) {
			ret = set_min_wait(epfd, 2000);
			EXPECT_EQ(0, ret) TH_LOG("point %d: %s", n,
						 strerror((int)-ret));
			ret = epoll_wait(epfd, &ev, 1, 5);
			EXPECT_EQ(0, ret) TH_LOG("point %d: epoll_wait: %s", n,
						 strerror(errno));
			close(epfd);
		}
		left = fail_nth_left();
		fail_nth_set(0);
		if (epfd < 0) {
			failed++;
			EXPECT_EQ(ENOMEM, err) TH_LOG("point %d", n);
		}
		EXPECT_TRUE(numab_counters_settle(&self->base, &now, 1000))
			TH_LOG("point %d: min_wait_instances %ld", n,
			       now.min_wait_instances);
		if (left > 0)
			break;
	}
	fprintf(stderr, "# first min-wait: %d fault points, epoll_create1 failed at %d\n",
		       n - 1, failed);
	EXPECT_LT(0, left) TH_LOG("more than %d fault points", MAX_POINTS);
}

/* What a mode out of DEFAULT holds, compared before and after a point. */
struct held_state {
	struct numab_counters c;
	long refcnt;
};

/* What the points of one test did and leaked. */
struct point_tally {
	int points, leaks;
	struct held_state leaked;	/* summed differences */
};

static int read_held_state(struct held_state *st)
{
	st->refcnt = numab_module_refcnt();
	return numab_read_counters(&st->c);
}

static bool held_state_equal(const struct held_state *a,
			     const struct held_state *b)
{
	return a->c.enabled_mms == b->c.enabled_mms &&
	       a->c.min_wait_instances == b->c.min_wait_instances &&
	       a->refcnt == b->refcnt;
}

/*
 * After point @n: the state of before it, once the child's mms are gone.
 * A leak is logged and tallied, and what was found becomes the baseline
 * of the next point, so that each point is judged on its own.
 */
static void expect_given_back(struct __test_metadata *_metadata,
			      struct held_state *base, struct point_tally *t,
			      int n, const char *what)
{
	struct held_state now = { 0 };
	int ms;

	for (ms = 0; ms <= NUMAB_KEY_SETTLE_MS; ms += 20) {
		if (!read_held_state(&now) && held_state_equal(base, &now))
			return;
		usleep(20000);
	}
	t->leaks++;
	t->leaked.c.enabled_mms += now.c.enabled_mms - base->c.enabled_mms;
	t->leaked.c.min_wait_instances +=
		now.c.min_wait_instances - base->c.min_wait_instances;
	t->leaked.refcnt += now.refcnt - base->refcnt;
	TH_LOG("%s, point %d: enabled_mms %+ld, min_wait_instances %+ld, module refcnt %+ld",
	       what, n, now.c.enabled_mms - base->c.enabled_mms,
	       now.c.min_wait_instances - base->c.min_wait_instances,
	       now.refcnt - base->refcnt);
	*base = now;
}

/* After the last point: nothing leaked, the key back at its baseline. */
static void expect_no_leak(struct __test_metadata *_metadata,
			   const struct numab_counters *base,
			   const struct point_tally *t, const char *what)
{
	struct numab_counters now = { 0 };

	fprintf(stderr, "# %s: %d fault points, %d leaked: enabled_mms %+ld, min_wait_instances %+ld, module refcnt %+ld\n",
		what, t->points, t->leaks, t->leaked.c.enabled_mms,
		t->leaked.c.min_wait_instances, t->leaked.refcnt);
	EXPECT_EQ(0, t->leaks) TH_LOG("%s leaked at %d points", what,
				      t->leaks);
	EXPECT_TRUE(numab_key_settle(&now, NUMAB_KEY_SETTLE_MS))
		TH_LOG("%s: key_count %ld key_held %ld enabled_mms %ld", what,
		       now.key_count, now.key_held, now.enabled_mms);
	EXPECT_EQ(base->key_count, now.key_count)
		TH_LOG("%s: static key references %+ld", what,
		       now.key_count - base->key_count);
}

/*
 * In a child (its mode is its own): @mode, then fork with point @n armed.
 * Exit status: 0 the fault hit, 1 it was not reached, 2 a call failed
 * unexpectedly.
 */
static int fork_child(int mode, int n)
{
	int status, err;
	long left;
	pid_t pid;

	if (numab_set_mode(mode))
		return 2;
	if (fail_nth_set(n))
		return 2;
	pid = fork();
	err = errno;
	if (!pid)
		_exit(numab_get_mode() == mode ? 0 : 1);
	left = fail_nth_left();
	fail_nth_set(0);
	if (pid < 0 && err != ENOMEM)
		return 2;
	if (pid > 0 && (waitpid(pid, &status, 0) != pid ||
			!WIFEXITED(status) || WEXITSTATUS(status)))
		return 2;
	return left > 0 ? 1 : 0;
}

static void fork_points(struct __test_metadata *_metadata,
			const struct numab_counters *counters, long refcnt,
			int mode)
{
	struct held_state base = { .c = *counters, .refcnt = refcnt };
	const char *what = mode == PR_SET_NUMA_BALANCING_ENABLED ?
			   "fork in ENABLED mode" : "fork in DISABLED mode";
	struct point_tally t = { 0 };
	int n, status = 0;
	pid_t pid;

	for (n = 1; n <= MAX_POINTS; n++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(fork_child(mode, n));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_NE(2, WEXITSTATUS(status)) TH_LOG("point %d", n);
		expect_given_back(_metadata, &base, &t, n, what);
		if (WEXITSTATUS(status) == 1)
			break;
		t.points++;
	}
	expect_no_leak(_metadata, counters, &t, what);
	EXPECT_GT(MAX_POINTS, n) TH_LOG("more than %d fault points", MAX_POINTS);
}

TEST_F_TIMEOUT(faults, disabled_fork, 900)
{
	SKIP_UNLESS_ARMED();
	fork_points(_metadata, &self->base, self->base_refcnt,
		    PR_SET_NUMA_BALANCING_DISABLED);
}

TEST_F_TIMEOUT(faults, enabled_fork, 900)
{
	SKIP_UNLESS_ARMED();
	fork_points(_metadata, &self->base, self->base_refcnt,
		    PR_SET_NUMA_BALANCING_ENABLED);
}

/*
 * In a child (its mode is its own): @mode, then execve() this program with
 * point @n armed. Returns EXEC_FAILED when execve() did, EXEC_SETUP when
 * the setup failed; a successful exec exits from exec_hook().
 */
static int exec_child(const char *exe, int mode, int n)
{
	char *const argv[] = { "numab-fault-exec", NULL };
	char *const envp[] = { EXEC_ENV "=1", NULL };

	if (numab_set_mode(mode) || fail_nth_set(n))
		return EXEC_SETUP;
	execve(exe, argv, envp);
	fail_nth_set(0);
	return EXEC_FAILED;
}

static void exec_points(struct __test_metadata *_metadata,
			const struct numab_counters *counters, long refcnt,
			int mode)
{
	struct held_state base = { .c = *counters, .refcnt = refcnt };
	const char *what = mode == PR_SET_NUMA_BALANCING_ENABLED ?
			   "execve in ENABLED mode" : "execve in DISABLED mode";
	int n, status, failed = 0, killed = 0, ran = 0;
	struct point_tally t = { 0 };
	char exe[PATH_MAX];
	ssize_t len;
	pid_t pid;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, len);
	exe[len] = '\0';
	for (n = 1; n <= EXEC_POINTS; n++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(exec_child(exe, mode, n));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (WIFSIGNALED(status)) {
			/* a failure past execve()'s point of no return */
			killed++;
		} else {
			ASSERT_TRUE(WEXITSTATUS(status) == EXEC_FAILED ||
				    WEXITSTATUS(status) == EXEC_RAN)
				TH_LOG("point %d: exit status %d", n,
				       WEXITSTATUS(status));
			failed += WEXITSTATUS(status) == EXEC_FAILED;
			ran += WEXITSTATUS(status) == EXEC_RAN;
		}
		t.points++;
		expect_given_back(_metadata, &base, &t, n, what);
	}
	fprintf(stderr, "# %s: execve() failed at %d points, the process was killed after it at %d, the program ran at %d\n",
		what, failed, killed, ran);
	expect_no_leak(_metadata, counters, &t, what);
	EXPECT_LT(0, failed) TH_LOG("no execve() failed");
}

TEST_F_TIMEOUT(faults, disabled_exec, 900)
{
	SKIP_UNLESS_ARMED();
	exec_points(_metadata, &self->base, self->base_refcnt,
		    PR_SET_NUMA_BALANCING_DISABLED);
}

TEST_F_TIMEOUT(faults, enabled_exec, 900)
{
	SKIP_UNLESS_ARMED();
	exec_points(_metadata, &self->base, self->base_refcnt,
		    PR_SET_NUMA_BALANCING_ENABLED);
}

TEST_HARNESS_MAIN
