// SPDX-License-Identifier: GPL-2.0
/*
 * libminwait.so, the LD_PRELOAD shim. Run by run_tests.sh as
 *
 *   MINWAIT_US=1234 LD_PRELOAD=./libminwait.so ./libminwait_test
 *
 * Checks that fresh epoll instances carry MINWAIT_US (fdinfo), and, in
 * re-executed copies of itself with other environments, MINWAIT_FLAGS and
 * MINWAIT_EVENTS, the no-op and the warn-once paths.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/epoll.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "numab_module_fixture.h"

#define CHILD_ENV "LIBMINWAIT_TEST_CHILD"

/*
 * Re-executed with LIBMINWAIT_TEST_CHILD set: create three instances and
 * print what fdinfo shows for each, as "usecs,flags,K" (-2, i.e. -ENOENT,
 * for no line).
 */
static void __attribute__((constructor)) child_hook(void)
{
	int fd[3], i;

	if (!getenv(CHILD_ENV))
		return;
	fd[0] = epoll_create1(0);
	fd[1] = epoll_create(1);
	fd[2] = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < 3; i++) {
		if (fd[i] < 0) {
			printf("create failed%c", i == 2 ? '\n' : ' ');
			continue;
		}
		printf("%ld,%ld,%ld%c", numab_fdinfo_min_wait(fd[i]),
		       numab_fdinfo_long(fd[i], NUMAB_FDINFO_FLAGS_KEY),
		       numab_fdinfo_long(fd[i], NUMAB_FDINFO_EVENTS_KEY),
		       i == 2 ? '\n' : ' ');
	}
	fflush(stdout);
	_exit(0);
}

/* "NAME=@value", or "NAME" (unset) if @value is NULL, in @buf. */
static char *env_entry(char *buf, size_t len, const char *name,
		       const char *value)
{
	if (value)
		snprintf(buf, len, "%s=%s", name, value);
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

/* Run the child with the three variables (unset where NULL). */
static int run_child3(const char *usecs, const char *flags,
		      const char *events, struct numab_output *c)
{
	char *const argv[] = { "libminwait-child", NULL };
	char us[64], fl[64], ev[64];
	char *const env[] = {
		CHILD_ENV "=1",
		env_entry(us, sizeof(us), "MINWAIT_US", usecs),
		env_entry(fl, sizeof(fl), "MINWAIT_FLAGS", flags),
		env_entry(ev, sizeof(ev), "MINWAIT_EVENTS", events),
		NULL,
	};

	return numab_capture("/proc/self/exe", argv, env, c);
}

/* Run the child with MINWAIT_US=@value (unset if NULL), no other. */
static int run_child(const char *value, struct numab_output *c)
{
	return run_child3(value, NULL, NULL, c);
}

/* What the child prints when all three instances show @us, @flags, @k. */
static const char *want(long us, long flags, long k)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%ld,%ld,%ld %ld,%ld,%ld %ld,%ld,%ld\n",
		 us, flags, k, us, flags, k, us, flags, k);
	return buf;
}

#define NONE	(-ENOENT)

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static bool shim_loaded(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libminwait.so") != NULL;
	fclose(f);
	return found;
}

static long env_minwait(void)
{
	const char *s = getenv("MINWAIT_US");

	return s ? strtol(s, NULL, 10) : -1;
}

TEST(shim_is_preloaded)
{
	ASSERT_TRUE(shim_loaded())
		TH_LOG("run me with LD_PRELOAD=.../libminwait.so");
	ASSERT_LT(0, env_minwait()) TH_LOG("run me with MINWAIT_US=<n > 0>");
}

TEST(epoll_create1_gets_min_wait)
{
	long want = env_minwait();
	int fd;

	ASSERT_MODULE();
	ASSERT_LT(0, want) TH_LOG("MINWAIT_US not set");
	fd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(want, numab_fdinfo_min_wait(fd));
	close(fd);
}

TEST(epoll_create_gets_min_wait)
{
	struct epoll_event ev = { .data.u64 = 0 };
	long want = env_minwait();
	int fd;

	ASSERT_MODULE();
	ASSERT_LT(0, want) TH_LOG("MINWAIT_US not set");
	fd = epoll_create(16);
	ASSERT_LE(0, fd);
	EXPECT_EQ(want, numab_fdinfo_min_wait(fd));
	EXPECT_EQ(want, epoll_ctl(fd, EPOLL_CTL_MIN_WAIT, -1, &ev));
	close(fd);
}

TEST(valid_values)
{
	struct numab_output c;

	ASSERT_MODULE();
	ASSERT_EQ(0, run_child("777", &c));
	EXPECT_STREQ(want(777, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child("2147483647", &c));
	EXPECT_STREQ(want(INT_MAX, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);

	/* unset or 0: no-op, silent */
	ASSERT_EQ(0, run_child(NULL, &c));
	EXPECT_STREQ(want(NONE, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child("0", &c));
	EXPECT_STREQ(want(NONE, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);
}

TEST(flags_and_events)
{
	struct numab_output c;

	ASSERT_MODULE();
	ASSERT_EQ(0, run_child3("777", "after-first", NULL, &c));
	EXPECT_STREQ(want(777, 1, NONE), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("777", NULL, "4", &c));
	EXPECT_STREQ(want(777, NONE, 4), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("777", "after-first", "2147483647", &c));
	EXPECT_STREQ(want(777, 1, INT_MAX), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("777", NULL, "0", &c));
	EXPECT_STREQ(want(777, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("777", "adaptive", NULL, &c));
	EXPECT_STREQ(want(777, 2, NONE), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("777", "adaptive,after-first", "4", &c));
	EXPECT_STREQ(want(777, 3, 4), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("777", "after-first,adaptive", NULL, &c));
	EXPECT_STREQ(want(777, 3, NONE), c.out);
	EXPECT_STREQ("", c.err);

	/* no MINWAIT_US: nothing, silent */
	ASSERT_EQ(0, run_child3(NULL, "after-first", "4", &c));
	EXPECT_STREQ(want(NONE, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);
	ASSERT_EQ(0, run_child3("0", "after-first", "4", &c));
	EXPECT_STREQ(want(NONE, NONE, NONE), c.out);
	EXPECT_STREQ("", c.err);
}

TEST(bad_values_warn_once)
{
	static const char *const bad[] = {
		"", "abc", "-1", "+5", " 5", "12x", "1.5", "2147483648",
		"99999999999999999999",
	};
	struct numab_output c;
	size_t i;

	ASSERT_MODULE();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_EQ(0, run_child(bad[i], &c));
		EXPECT_STREQ(want(NONE, NONE, NONE), c.out)
			TH_LOG("MINWAIT_US=\"%s\"", bad[i]);
		EXPECT_EQ(1, lines(c.err))
			TH_LOG("MINWAIT_US=\"%s\": stderr '%s'", bad[i],
			       c.err);
		EXPECT_EQ(0, strncmp(c.err, "libminwait: ", 12));
	}
}

/* A bad MINWAIT_FLAGS or MINWAIT_EVENTS: one warning, nothing applied. */
TEST(bad_flags_or_events_warn_once)
{
	static const char *const bad_flags[] = {
		"", "after_first", "AFTER-FIRST", "after-first,", " after-first",
		"1", "0x1", "none", "adaptive,", ",adaptive", "adaptive after-first",
		"adaptive,,after-first", "Adaptive",
	};
	static const char *const bad_events[] = {
		"", "abc", "-1", "+5", "0x10", "4 ", "2147483648",
		"99999999999999999999",
	};
	struct numab_output c;
	size_t i;

	ASSERT_MODULE();
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
		ASSERT_EQ(0, run_child3("777", bad_flags[i], "4", &c));
		EXPECT_STREQ(want(NONE, NONE, NONE), c.out)
			TH_LOG("MINWAIT_FLAGS=\"%s\"", bad_flags[i]);
		EXPECT_EQ(1, lines(c.err))
			TH_LOG("MINWAIT_FLAGS=\"%s\": stderr '%s'",
			       bad_flags[i], c.err);
		EXPECT_EQ(0, strncmp(c.err, "libminwait: ", 12));
	}
	for (i = 0; i < ARRAY_SIZE(bad_events); i++) {
		ASSERT_EQ(0, run_child3("777", "after-first", bad_events[i],
					&c));
		EXPECT_STREQ(want(NONE, NONE, NONE), c.out)
			TH_LOG("MINWAIT_EVENTS=\"%s\"", bad_events[i]);
		EXPECT_EQ(1, lines(c.err))
			TH_LOG("MINWAIT_EVENTS=\"%s\": stderr '%s'",
			       bad_events[i], c.err);
		EXPECT_EQ(0, strncmp(c.err, "libminwait: ", 12));
	}
}

TEST_F(module, refused_by_kernel_warns_once)
{
	struct numab_output c;

	ASSERT_EQ(0, numab_rmmod()) TH_LOG("cannot unload the module");
	ASSERT_EQ(0, run_child("777", &c));
	EXPECT_TRUE(WIFEXITED(c.status) && !WEXITSTATUS(c.status));
	EXPECT_STREQ(want(NONE, NONE, NONE), c.out);
	EXPECT_EQ(1, lines(c.err)) TH_LOG("stderr '%s'", c.err);
	EXPECT_EQ(0, strncmp(c.err, "libminwait: ", 12));
	/* The patched kernel without the module: the module is the cause. */
	EXPECT_NE(NULL, strstr(c.err, "module loaded"))
		TH_LOG("stderr '%s'", c.err);
	ASSERT_EQ(0, run_child3("777", "after-first", "4", &c));
	EXPECT_TRUE(WIFEXITED(c.status) && !WEXITSTATUS(c.status));
	EXPECT_STREQ(want(NONE, NONE, NONE), c.out);
	EXPECT_EQ(1, lines(c.err)) TH_LOG("stderr '%s'", c.err);
	EXPECT_EQ(0, numab_modprobe());
}

TEST_HARNESS_MAIN
