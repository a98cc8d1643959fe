/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the numab_minwait tests: the prctl wrappers, the
 * /proc and debugfs readers, the module load/unload commands, timing.
 */
#ifndef NUMAB_TEST_UTIL_H
#define NUMAB_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "numab_uapi.h"
#include "proc_field.h"

#define NUMAB_MSG_NO_MODULE \
	"numab_minwait module not loaded (modprobe numab_minwait)"

/* --- prctl ------------------------------------------------------------ */

/* In a kselftest harness test: fail (not skip) without the module. */
#define ASSERT_MODULE() \
	ASSERT_TRUE(numab_module_loaded()) TH_LOG(NUMAB_MSG_NO_MODULE)

static inline int numab_prctl(unsigned long op, unsigned long arg3,
			      unsigned long arg4, unsigned long arg5)
{
	return prctl(PR_NUMA_BALANCING, op, arg3, arg4, arg5);
}

/* Returns the mode (0..2) or -errno. */
static inline int numab_get_mode(void)
{
	int mode = -1;

	if (numab_prctl(PR_GET_NUMA_BALANCING, (unsigned long)&mode, 0, 0))
		return -errno;
	return mode;
}

/* Returns 0 or -errno. */
static inline int numab_set_mode(int mode)
{
	return numab_prctl(mode, 0, 0, 0) ? -errno : 0;
}

static inline bool numab_module_loaded(void)
{
	return numab_get_mode() >= 0;
}

static inline const char *numab_mode_name(int mode)
{
	switch (mode) {
	case PR_SET_NUMA_BALANCING_DISABLED:
		return "disabled";
	case PR_SET_NUMA_BALANCING_ENABLED:
		return "enabled";
	case PR_SET_NUMA_BALANCING_DEFAULT:
		return "default";
	}
	return "?";
}

/* --- /proc readers ---------------------------------------------------- */

/*
 * Mode shown by a status file (/proc/<pid>/status or a task's status):
 * 0..2, -ENOENT without a NumaB_mode line, -EPROTO for an unknown word,
 * -errno when the file cannot be opened.
 */
static inline int numab_status_mode_path(const char *path)
{
	char word[64];
	int ret = proc_field(path, NUMAB_STATUS_KEY, word, sizeof(word));

	if (ret)
		return ret == -ENODATA ? -ENOENT : ret;
	if (!strcmp(word, "default"))
		return PR_SET_NUMA_BALANCING_DEFAULT;
	if (!strcmp(word, "disabled"))
		return PR_SET_NUMA_BALANCING_DISABLED;
	if (!strcmp(word, "enabled"))
		return PR_SET_NUMA_BALANCING_ENABLED;
	return -EPROTO;
}

/* Same for a whole process; pid 0 means the caller. */
static inline int numab_status_mode(pid_t pid)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	return numab_status_mode_path(path);
}

/*
 * The number on the line "@key\t<n>" of /proc/self/fdinfo/<fd> (decimal, or
 * hex with 0x): the value when the line is there, -ENOENT when it is not,
 * -errno when fdinfo cannot be read.
 */
static inline long numab_fdinfo_long(int fd, const char *key)
{
	char path[64];
	long val;
	int ret;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ret = proc_field_long(path, key, &val);
	if (ret)
		return ret == -ENODATA ? -ENOENT : ret;
	return val;
}

/* Min-wait shown in fdinfo, as numab_fdinfo_long(). */
static inline long numab_fdinfo_min_wait(int fd)
{
	return numab_fdinfo_long(fd, NUMAB_FDINFO_KEY);
}

/* One integer from a sysctl/debugfs file: 0 or -errno. */
static inline int numab_read_long(const char *path, long *val)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n ? -errno : -ENODATA;
	buf[n] = '\0';
	*val = strtol(buf, NULL, 10);
	return 0;
}

static inline int numab_write_long(const char *path, long val)
{
	char buf[32];
	int fd, len, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%ld\n", val);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/* --- module debugfs counters ------------------------------------------- */

struct numab_counters {
	long enabled_mms;
	long key_count;
	long min_wait_instances;
	long key_held;	/* 0 or 1; -1: not reported (a module before it) */
};

/* 0, -errno if the file cannot be read, -ENODATA if a name is missing. */
static inline int numab_read_counters(struct numab_counters *c)
{
	const char *path = NUMAB_DEBUGFS_COUNTERS;
	int ret;

	ret = proc_field_long(path, "enabled_mms", &c->enabled_mms) ?:
	      proc_field_long(path, "key_count", &c->key_count) ?:
	      proc_field_long(path, "min_wait_instances",
			      &c->min_wait_instances);
	if (proc_field_long(path, "key_held", &c->key_held))
		c->key_held = -1;
	return ret == -EPROTO ? -ENODATA : ret;
}

/* key_held is not compared: key_count counts it. */
static inline bool numab_counters_equal(const struct numab_counters *a,
					const struct numab_counters *b)
{
	return a->enabled_mms == b->enabled_mms &&
	       a->key_count == b->key_count &&
	       a->min_wait_instances == b->min_wait_instances;
}

/*
 * Mms are freed (and their static key reference dropped) shortly after the
 * last task using them is reaped, possibly from a work item: poll for up to
 * @ms milliseconds until the counters equal @want. Leaves the last values
 * read in @now. Returns true when they matched.
 */
static inline bool numab_counters_settle(const struct numab_counters *want,
					 struct numab_counters *now, int ms)
{
	for (;;) {
		if (!numab_read_counters(now) && numab_counters_equal(want, now))
			return true;
		if (ms <= 0)
			return false;
		usleep(20000);
		ms -= 20;
	}
}

#define NUMAB_SYSCTL_NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"

/*
 * The module holds one reference on the sched_numa_balancing key while any
 * mm is ENABLED and drops it about a second after the last one goes (a
 * work item: 2.6 s seen on a loaded host under the debug kernel). Long
 * enough for that release, with a margin:
 */
#define NUMAB_KEY_SETTLE_MS		5000

/*
 * Poll up to @ms milliseconds until key_count == (kernel.numa_balancing
 * != 0) + key_held and key_held == (enabled_mms > 0) (key_held where the
 * module reports it). Leaves the last values read in @now. True once so.
 */
static inline bool numab_key_settle(struct numab_counters *now, int ms)
{
	long sysctl = 0, held;

	for (;;) {
		if (!numab_read_counters(now) &&
		    !numab_read_long(NUMAB_SYSCTL_NUMA_BALANCING, &sysctl)) {
			held = now->enabled_mms > 0;
			if (now->key_count == (sysctl != 0) + held &&
			    (now->key_held < 0 || now->key_held == held))
				return true;
		}
		if (ms <= 0)
			return false;
		usleep(20000);
		ms -= 20;
	}
}

/* References on the module (/sys/module/<name>/refcnt), or -errno. */
static inline long numab_module_refcnt(void)
{
	long v = 0;
	int ret = numab_read_long("/sys/module/" NUMAB_MODULE_NAME "/refcnt",
				  &v);

	return ret ? ret : v;
}

/* --- commands: modprobe / rmmod ------------------------------------------ */

/*
 * Run a command with its output shown as "# " lines on stderr (so it does
 * not disturb the TAP stream). Returns the exit status, 128 + signal, or
 * -errno if it could not be started.
 */
static inline int numab_run_cmd(char *const argv[])
{
	char line[512];
	int pfd[2], status;
	pid_t pid;
	FILE *out;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!pid) {
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	out = fdopen(pfd[0], "r");
	if (out) {
		while (fgets(line, sizeof(line), out))
			fprintf(stderr, "# %s%s", line,
				strchr(line, '\n') ? "" : "\n");
		fclose(out);
	} else {
		close(pfd[0]);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static inline int numab_modprobe(void)
{
	char *const argv[] = { "modprobe", NUMAB_MODULE_NAME, NULL };

	return numab_run_cmd(argv);
}

static inline int numab_rmmod(void)
{
	char *const argv[] = { "rmmod", NUMAB_MODULE_NAME, NULL };

	return numab_run_cmd(argv);
}

/*
 * delete_module(2) as rmmod issues it: 0 when the module was unloaded,
 * -EWOULDBLOCK (== -EAGAIN) while it is in use, -ENOENT when not loaded.
 */
static inline int numab_delete_module(void)
{
	if (syscall(SYS_delete_module, NUMAB_MODULE_NAME, O_NONBLOCK))
		return -errno;
	return 0;
}

/*
 * Retry the unload for up to @ms milliseconds (references may be dropped
 * from deferred work). True once the module is gone.
 */
static inline bool numab_unload_settles(int ms)
{
	for (; ms > 0; ms -= 20) {
		if (!numab_delete_module())
			return true;
		usleep(20000);
	}
	return false;
}

#ifdef __KSELFTEST_HARNESS_H
/*
 * The module must refuse to go now: checked with delete_module(2) and with
 * rmmod. If it went anyway, it is loaded back.
 */
static inline void numab_expect_unload_refused(
	struct __test_metadata *_metadata, const char *why)
{
	int ret = numab_delete_module();

	EXPECT_EQ(-EWOULDBLOCK, ret)
		TH_LOG("delete_module while %s: %s", why, strerror(-ret));
	if (!ret) {
		numab_modprobe();
		return;
	}
	EXPECT_NE(0, numab_rmmod()) TH_LOG("rmmod succeeded while %s", why);
	EXPECT_TRUE(numab_module_loaded());
	if (!numab_module_loaded())
		numab_modprobe();
}
#endif

/* --- a child process held at a given mode -------------------------------- */

/*
 * The child obeys one-byte commands on a pipe and answers each with one
 * byte: '0'..'2' set that mode ('k' on success, 'e' on failure), 'g' gets
 * the mode ('0'..'2', or 'e'), 'x' re-executes the test binary, which goes
 * on obeying ('k' once it runs; needs numab_held_exec_hook() in a
 * constructor of that binary). EOF on the command pipe makes it exit.
 */
#define NUMAB_HELD_ENV "NUMAB_HELD_FDS"

struct numab_held {
	pid_t pid;
	int cmd;	/* parent writes commands here */
	int ack;	/* parent reads answers here */
};

static inline void numab_held_exec(int cmd, int ack)
{
	char *const argv[] = { "numab-held", NULL };
	char fds[32];

	snprintf(fds, sizeof(fds), "%d,%d", cmd, ack);
	if (setenv(NUMAB_HELD_ENV, fds, 1) ||
	    fcntl(cmd, F_SETFD, 0) || fcntl(ack, F_SETFD, 0))
		return;
	execv("/proc/self/exe", argv);
}

static inline void numab_held_loop(int cmd, int ack)
{
	char c, r;
	int m;

	while (read(cmd, &c, 1) == 1) {
		if (c >= '0' && c <= '2') {
			r = numab_set_mode(c - '0') ? 'e' : 'k';
		} else if (c == 'g') {
			m = numab_get_mode();
			r = m < 0 ? 'e' : (char)('0' + m);
		} else if (c == 'x') {
			numab_held_exec(cmd, ack);
			r = 'e';
		} else {
			r = '?';
		}
		if (write(ack, &r, 1) != 1)
			break;
	}
	_exit(0);
}

/* Call from a constructor: turns a re-executed held child back into one. */
static inline void numab_held_exec_hook(void)
{
	const char *fds = getenv(NUMAB_HELD_ENV);
	int cmd, ack;
	char r = 'k';

	if (!fds || sscanf(fds, "%d,%d", &cmd, &ack) != 2)
		return;
	fcntl(cmd, F_SETFD, FD_CLOEXEC);
	fcntl(ack, F_SETFD, FD_CLOEXEC);
	if (write(ack, &r, 1) != 1)
		_exit(1);
	numab_held_loop(cmd, ack);
}

/* Answer byte, or 0 if the child is gone. */
static inline char numab_held_cmd(struct numab_held *h, char c)
{
	char r = 0;

	if (write(h->cmd, &c, 1) != 1 || read(h->ack, &r, 1) != 1)
		return 0;
	return r;
}

/* Fork the child; with @mode >= 0 it sets that mode first. 0 or -errno. */
static inline int numab_held_start(struct numab_held *h, int mode)
{
	int c[2], a[2];

	h->pid = 0;
	h->cmd = -1;
	h->ack = -1;
	if (pipe2(c, O_CLOEXEC))
		return -errno;
	if (pipe2(a, O_CLOEXEC)) {
		close(c[0]);
		close(c[1]);
		return -errno;
	}
	fflush(stdout);
	fflush(stderr);
	h->pid = fork();
	if (h->pid < 0) {
		h->pid = 0;
		close(c[0]);
		close(c[1]);
		close(a[0]);
		close(a[1]);
		return -errno;
	}
	if (!h->pid) {
		close(c[1]);
		close(a[0]);
		numab_held_loop(c[0], a[1]);
	}
	close(c[0]);
	close(a[1]);
	h->cmd = c[1];
	h->ack = a[0];
	if (mode >= 0 && numab_held_cmd(h, (char)('0' + mode)) != 'k')
		return -EIO;
	return 0;
}

/* Let the child exit and reap it. Returns its wait status. */
static inline int numab_held_stop(struct numab_held *h)
{
	int status = -1;

	if (h->pid <= 0)
		return status;
	close(h->cmd);
	waitpid(h->pid, &status, 0);
	close(h->ack);
	h->pid = 0;
	return status;
}

/* --- time ------------------------------------------------------------- */

/* What a program printed, and how it ended. */
struct numab_output {
	char out[256];
	char err[1024];
	int status;	/* from waitpid(), -1 if it did not run */
};

/* Read @fd until EOF or @len - 1 bytes, NUL-terminated. */
static inline void numab_slurp(int fd, char *buf, size_t len)
{
	size_t total = 0;
	ssize_t n;

	while (total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n <= 0)
			break;
		total += n;
	}
	buf[total] = '\0';
}

/*
 * Run @path with @argv, its stdout and stderr in @o. @env holds
 * "NAME=value" to set and "NAME" to unset in the child, NULL-terminated.
 * Returns 0, or -1 if it could not be started.
 */
static inline int numab_capture(const char *path, char *const argv[],
				char *const env[], struct numab_output *o)
{
	int out[2], err[2], i;
	pid_t pid;

	o->status = -1;
	o->out[0] = o->err[0] = '\0';
	if (pipe(out) || pipe(err))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		for (i = 0; env && env[i]; i++) {
			if (strchr(env[i], '='))
				putenv(env[i]);
			else
				unsetenv(env[i]);
		}
		execv(path, argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	numab_slurp(out[0], o->out, sizeof(o->out));
	numab_slurp(err[0], o->err, sizeof(o->err));
	close(out[0]);
	close(err[0]);
	return waitpid(pid, &o->status, 0) == pid ? 0 : -1;
}

static inline int64_t numab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t numab_ms_since(int64_t start_ns)
{
	return (numab_now_ns() - start_ns) / 1000000;
}

static inline void numab_sleep_ms(long ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

#endif /* NUMAB_TEST_UTIL_H */
