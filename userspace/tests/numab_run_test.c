// SPDX-License-Identifier: GPL-2.0
/*
 * numab-run, the launcher: options, modes passed to the program, --show,
 * exit statuses. Runs the numab-run found next to this binary.
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "numab_module_fixture.h"

#define EXIT_ENV "NUMAB_RUN_TEST_EXIT"

/* Re-executed through numab-run with NUMAB_RUN_TEST_EXIT=n: exit n. */
static void __attribute__((constructor)) exit_hook(void)
{
	const char *code = getenv(EXIT_ENV);

	if (code)
		_exit(atoi(code));
}


static char tool[PATH_MAX];
static char wrapper[PATH_MAX];	/* docs/examples/numab-oci-runtime */
static char path_env[PATH_MAX + 64];	/* PATH with the tools first */
static char self_exe[PATH_MAX];

static void __attribute__((constructor)) find_tool(void)
{
	char buf[PATH_MAX];
	const char *dir;
	ssize_t n;

	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	snprintf(self_exe, sizeof(self_exe), "%s", buf);
	dir = dirname(buf);
	snprintf(tool, sizeof(tool), "%s/numab-run", dir);
	snprintf(wrapper, sizeof(wrapper), "%s/numab-oci-runtime", dir);
	snprintf(path_env, sizeof(path_env),
		 "PATH=%s:/usr/sbin:/usr/bin:/sbin:/bin", dir);
}

/*
 * Run numab-run with @args (NULL-terminated, without argv[0]); r->status
 * is its exit status, or -1.
 */
static void run_tool(const char *const *args, struct numab_output *r)
{
	const char *argv[16] = { "numab-run" };
	int i;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	if (numab_capture(tool, (char *const *)argv, NULL, r) ||
	    !WIFEXITED(r->status))
		r->status = -1;
	else
		r->status = WEXITSTATUS(r->status);
}

#define RUN(r, ...) run_tool((const char *const[]){ __VA_ARGS__, NULL }, r)

TEST(tool_present)
{
	ASSERT_EQ(0, access(tool, X_OK)) TH_LOG("%s: %s", tool,
						strerror(errno));
}

TEST(help)
{
	struct numab_output r;

	RUN(&r, "--help");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "Usage:"));
	EXPECT_STREQ("", r.err);
	RUN(&r, "-h");
	EXPECT_EQ(0, r.status);
}

TEST(version)
{
	struct numab_output r;

	RUN(&r, "--version");
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "numab-run ", 10)) TH_LOG("%s", r.out);
	RUN(&r, "-V");
	EXPECT_EQ(0, r.status);
}

/* numab-run's own failures are 125, never a status PROG could have. */
TEST(bad_usage)
{
	static const char *const cases[][4] = {
		{ NULL },
		{ "--bogus", NULL },
		{ "-x", "true", NULL },
		{ "--disable", NULL },
		{ "--enable", "--", NULL },
		{ "-d", "-e", "true", NULL },
		{ "true", NULL },
		{ "--show", "abc", NULL },
		{ "--show", "0", NULL },
		{ "--show", "-5", NULL },
		{ "--show", "12x", NULL },
		{ "--show", "1", "2", NULL },
	};
	struct numab_output r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		run_tool(cases[i], &r);
		EXPECT_EQ(125, r.status) TH_LOG("case %zu (%s)", i,
					       cases[i][0] ?: "no args");
		EXPECT_NE(NULL, strstr(r.err, "--help"));
		EXPECT_STREQ("", r.out);
	}
}

TEST(show)
{
	struct numab_held h;
	struct numab_output r;
	char pid[16];

	ASSERT_MODULE();
	RUN(&r, "--show");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("default\n", r.out);

	ASSERT_EQ(0, numab_held_start(&h, PR_SET_NUMA_BALANCING_ENABLED));
	snprintf(pid, sizeof(pid), "%d", h.pid);
	RUN(&r, "--show", pid);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("enabled\n", r.out);
	EXPECT_EQ('k', numab_held_cmd(&h, '0'));
	RUN(&r, "--show", pid);
	EXPECT_STREQ("disabled\n", r.out);
	numab_held_stop(&h);

	RUN(&r, "-s", "2147483647");
	EXPECT_EQ(125, r.status);
	EXPECT_NE(NULL, strstr(r.err, "no such process"));
}

TEST(runs_program_with_mode)
{
	static const char *const opt[] = { "--disable", "--enable",
					   "--default" };
	static const char *const short_opt[] = { "-d", "-e", "-D" };
	static const char *const want[] = { "disabled\n", "enabled\n",
					    "default\n" };
	struct numab_output r;
	int i;

	ASSERT_MODULE();
	for (i = 0; i < 3; i++) {
		RUN(&r, opt[i], "--", tool, "--show");
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", opt[i], r.err);
		EXPECT_STREQ(want[i], r.out);
		/* "--" is optional */
		RUN(&r, opt[i], tool, "--show");
		EXPECT_STREQ(want[i], r.out);
		RUN(&r, short_opt[i], tool, "-s");
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", short_opt[i], r.err);
		EXPECT_STREQ(want[i], r.out);
	}
	/* options end at PROG's name; nested, the inner launcher wins */
	RUN(&r, "--enable", tool, "--disable", tool, "--show");
	EXPECT_STREQ("disabled\n", r.out);
	/* the caller is untouched */
	EXPECT_EQ(PR_SET_NUMA_BALANCING_DEFAULT, numab_get_mode());
}

/*
 * A whole service in one mode without changing it: numab-run execs a shell
 * that runs a command (fork + exec), a shell that runs one (a grandchild),
 * a shell that execs one, and a background job that another process
 * looks at with numab-run --show. Each prints "<who> <mode>".
 */
static const char service_script[] =
	"mode() { while read -r k v; do\n"
	"	[ \"$k\" = NumaB_mode: ] && echo \"$1 $v\"; done; }\n"
	"mode shell < /proc/$$/status\n"
	"cat /proc/self/status | mode child\n"
	"sh -c 'cat /proc/self/status; :' | mode grandchild\n"
	"sh -c 'exec cat /proc/self/status' | mode exec\n"
	"sleep 30 > /dev/null 2>&1 &\n"
	"echo \"background $(\"$0\" --show $!)\"\n"
	"kill $!\n";

TEST(service_tree_keeps_mode)
{
	static const char *const opt[] = { "--disable", "--enable",
					   "--default" };
	static const char *const word[] = { "disabled", "enabled", "default" };
	static const char *const who[] = { "shell", "child", "grandchild",
					   "exec", "background" };
	char want[256];
	struct numab_output r;
	size_t len;
	int i, j;

	ASSERT_MODULE();
	for (i = 0; i < 3; i++) {
		len = 0;
		for (j = 0; j < (int)ARRAY_SIZE(who); j++)
			len += snprintf(want + len, sizeof(want) - len,
					"%s %s\n", who[j], word[i]);
		RUN(&r, opt[i], "--", "sh", "-c", service_script, tool);
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", opt[i], r.err);
		EXPECT_STREQ(want, r.out);
	}
}

/*
 * The container runtime wrapper of the docs, with sh standing in for runc:
 * what the runtime starts has the mode NUMAB_MODE names, disable without.
 */
TEST(oci_runtime_wrapper)
{
	static const char *const mode_env[] = { "NUMAB_MODE=disable",
						"NUMAB_MODE=enable",
						"NUMAB_MODE=default",
						"NUMAB_MODE" };
	static const char *const word[] = { "disabled", "enabled", "default",
					    "disabled" };
	char *argv[] = { "numab-oci-runtime", "-c", (char *)service_script,
			 tool, NULL };
	char *env[] = { path_env, "NUMAB_OCI_RUNTIME=sh", NULL, NULL };
	char want[256];
	struct numab_output r;
	int i;

	ASSERT_MODULE();
	ASSERT_EQ(0, access(wrapper, X_OK)) TH_LOG("%s: %s", wrapper,
						  strerror(errno));
	for (i = 0; i < (int)ARRAY_SIZE(mode_env); i++) {
		snprintf(want, sizeof(want),
			 "shell %1$s\nchild %1$s\ngrandchild %1$s\nexec %1$s\nbackground %1$s\n",
			 word[i]);
		env[2] = (char *)mode_env[i];
		ASSERT_EQ(0, numab_capture(wrapper, argv, env, &r));
		ASSERT_TRUE(WIFEXITED(r.status));
		EXPECT_EQ(0, WEXITSTATUS(r.status)) TH_LOG("%s: %s",
							   mode_env[i], r.err);
		EXPECT_STREQ(want, r.out) TH_LOG("%s", mode_env[i]);
	}
	env[2] = "NUMAB_MODE=off";
	ASSERT_EQ(0, numab_capture(wrapper, argv, env, &r));
	EXPECT_EQ(125, WEXITSTATUS(r.status));
	EXPECT_NE(NULL, strstr(r.err, "NUMAB_MODE")) TH_LOG("%s", r.err);
}

TEST(program_exit_status_passed_on)
{
	struct numab_output r;

	ASSERT_MODULE();
	setenv(EXIT_ENV, "7", 1);
	RUN(&r, "--enable", "--", self_exe);
	unsetenv(EXIT_ENV);
	EXPECT_EQ(7, r.status);
}

TEST(exec_failures)
{
	char file[PATH_MAX + 16];
	struct numab_output r;
	int fd;

	ASSERT_MODULE();
	/* beside the binaries: the guest may have no /tmp */
	snprintf(file, sizeof(file), "%s.noexec-XXXXXX", tool);
	RUN(&r, "--default", "--", "/nonexistent/program");
	EXPECT_EQ(127, r.status);
	EXPECT_NE(NULL, strstr(r.err, "/nonexistent/program"));
	RUN(&r, "--default", "numab-no-such-program-on-path");
	EXPECT_EQ(127, r.status);

	fd = mkstemp(file);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fchmod(fd, 0644));
	close(fd);
	RUN(&r, "--disable", "--", file);
	EXPECT_EQ(126, r.status) TH_LOG("non-executable file: %s", r.err);
	unlink(file);
	RUN(&r, "--disable", "--", "/");
	EXPECT_EQ(126, r.status) TH_LOG("directory: %s", r.err);
}

TEST_F(module, module_missing)
{
	struct numab_output r;

	ASSERT_EQ(0, numab_rmmod()) TH_LOG("cannot unload the module");
	RUN(&r, "--enable", "--", tool, "--show");
	EXPECT_EQ(125, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_NE(NULL, strstr(r.err, NUMAB_MSG_NO_MODULE)) TH_LOG("%s", r.err);
	/* --show needs no module */
	RUN(&r, "--show");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("default\n", r.out);
	EXPECT_EQ(0, numab_modprobe());
}

TEST_HARNESS_MAIN
