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
 *  - enabled_fork: a process in ENABLED mode forks; a fork failing after
 *    the child's mm took the mode must give it back.
 * Skipped on a kernel without fault injection (the main guest kernel);
 * `make check-debug` runs it.
 */
#define _GNU_SOURCE
#include <sys/epoll.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc"
#define MAX_POINTS	5000

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

/* What is left of the count: 0 once the failure was injected. */
static long fail_nth_left(void)
{
	long v = -1;

	return numab_read_long(FAIL_NTH, &v) ? -1 : v;
}

static long set_min_wait(int epfd, uint64_t usecs)
{
	struct epoll_event ev = { .data.u64 = usecs };
	int ret = epoll_ctl(epfd, EPOLL_CTL_MIN_WAIT, -1, &ev);

	return ret < 0 ? -errno : ret;
}

FIXTURE(faults) {
	struct numab_counters base;
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
	ASSERT_EQ(0, numab_read_counters(&self->base));
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
	ksft_print_msg("module load: %d fault points, %d loads failed cleanly, %d loaded (%d without the debugfs file)\n",
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
	ksft_print_msg("first min-wait: %d fault points, epoll_create1 failed at %d\n",
		       n - 1, failed);
	EXPECT_LT(0, left) TH_LOG("more than %d fault points", MAX_POINTS);
}

/*
 * In a child (its mode is its own): ENABLED, then fork with point @n
 * armed. Exit status: 0 the fault hit, 1 it was not reached, 2 a call
 * failed unexpectedly.
 */
static int enabled_fork_child(int n)
{
	int status, err;
	long left;
	pid_t pid;

	if (numab_set_mode(PR_SET_NUMA_BALANCING_ENABLED))
		return 2;
	if (fail_nth_set(n))
		return 2;
	pid = fork();
	err = errno;
	if (!pid)
		_exit(numab_get_mode() == PR_SET_NUMA_BALANCING_ENABLED ? 0 : 1);
	left = fail_nth_left();
	fail_nth_set(0);
	if (pid < 0 && err != ENOMEM)
		return 2;
	if (pid > 0 && (waitpid(pid, &status, 0) != pid ||
			!WIFEXITED(status) || WEXITSTATUS(status)))
		return 2;
	return left > 0 ? 1 : 0;
}

TEST_F_TIMEOUT(faults, enabled_fork, 900)
{
	struct numab_counters now = { 0 };
	int n, status = 0;
	pid_t pid;

	SKIP_UNLESS_ARMED();

	for (n = 1; n <= MAX_POINTS; n++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(enabled_fork_child(n));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_NE(2, WEXITSTATUS(status)) TH_LOG("point %d", n);
		EXPECT_TRUE(numab_counters_settle(&self->base, &now, 2000))
			TH_LOG("point %d: enabled_mms %ld key_count %ld", n,
			       now.enabled_mms, now.key_count);
		if (WEXITSTATUS(status) == 1)
			break;
	}
	ksft_print_msg("fork in ENABLED mode: %d fault points\n", n - 1);
	EXPECT_GT(MAX_POINTS, n) TH_LOG("more than %d fault points", MAX_POINTS);
}

TEST_HARNESS_MAIN
