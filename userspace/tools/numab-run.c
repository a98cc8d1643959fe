// SPDX-License-Identifier: GPL-2.0
/*
 * numab-run: run a program with a per-process NUMA balancing mode, or show
 * a process's mode.
 *
 *   numab-run --disable|--enable|--default [--] PROG [ARGS...]
 *   numab-run --show [PID]
 *
 * The mode is set with prctl(PR_NUMA_BALANCING) and kept across execve(),
 * so PROG and its children run with it.
 *
 * Exit status: PROG's own, or
 *   1    other failure (no such process, prctl error)
 *   2    the feature is missing (module not loaded, kernel without it)
 *   64   bad usage
 *   126  PROG found but could not be run
 *   127  PROG not found
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "numab_uapi.h"

#define EXIT_MISSING	2
#define EXIT_USAGE	64
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

static const char *prog = "numab-run";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s --disable|--enable|--default [--] PROG [ARGS...]\n"
		"       %s --show [PID]\n"
		"       %s --help\n"
		"\n"
		"Run PROG with NUMA balancing disabled, enabled or following\n"
		"kernel.numa_balancing (the default), or print the mode of PID\n"
		"(default: this process). PROG and its children keep the mode.\n"
		"\n"
		"Exit status: PROG's, or 1 on failure, 2 if the kernel feature\n"
		"or module is missing, 64 on bad usage, 126 if PROG cannot be\n"
		"run, 127 if PROG is not found.\n",
		prog, prog, prog);
}

static int __attribute__((format(printf, 1, 2)))
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return EXIT_USAGE;
}

/* The status line of @pid ("self" if NULL), or NULL with errno set. */
static const char *status_mode(const char *pid, char *buf, size_t len)
{
	size_t klen = strlen(NUMAB_STATUS_KEY);
	char path[64], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid ? pid : "self");
	f = fopen(path, "re");
	if (!f)
		return NULL;
	errno = ENODATA;
	while (fgets(buf, len, f)) {
		if (strncmp(buf, NUMAB_STATUS_KEY, klen))
			continue;
		fclose(f);
		p = buf + klen;
		p += strspn(p, " \t");
		p[strcspn(p, "\n")] = '\0';
		return p;
	}
	fclose(f);
	errno = ENODATA;
	return NULL;
}

static int show(const char *pid)
{
	const char *mode;
	char buf[256];
	char *end;
	long v;

	if (pid) {
		errno = 0;
		v = strtol(pid, &end, 10);
		if (!*pid || *end || errno || v <= 0 || v > INT_MAX)
			return bad_usage("not a process id: '%s'", pid);
	}
	mode = status_mode(pid, buf, sizeof(buf));
	if (mode) {
		printf("%s\n", mode);
		return 0;
	}
	if (errno == ENODATA) {
		fprintf(stderr,
			"%s: kernel without per-process NUMA balancing (no %s line in /proc/%s/status)\n",
			prog, "NumaB_mode", pid ? pid : "self");
		return EXIT_MISSING;
	}
	if (errno == ENOENT || errno == ESRCH) {
		fprintf(stderr, "%s: no such process: %s\n", prog, pid);
		return 1;
	}
	fprintf(stderr, "%s: /proc/%s/status: %s\n", prog, pid ? pid : "self",
		strerror(errno));
	return 1;
}

/* The module answers PR_GET_NUMA_BALANCING; nothing else does. */
static int check_feature(void)
{
	char buf[256];
	int mode;

	if (!prctl(PR_NUMA_BALANCING, PR_GET_NUMA_BALANCING,
		   (unsigned long)&mode, 0, 0))
		return 0;
	if (errno != EINVAL) {
		fprintf(stderr, "%s: prctl(PR_NUMA_BALANCING): %s\n", prog,
			strerror(errno));
		return 1;
	}
	if (!status_mode(NULL, buf, sizeof(buf)) && errno == ENODATA)
		fprintf(stderr,
			"%s: kernel without per-process NUMA balancing hooks\n",
			prog);
	else
		fprintf(stderr,
			"%s: numab_minwait module not loaded (modprobe numab_minwait)\n",
			prog);
	return EXIT_MISSING;
}

static int run(int mode, char **argv)
{
	int ret;

	ret = check_feature();
	if (ret)
		return ret;
	if (prctl(PR_NUMA_BALANCING, mode, 0, 0, 0)) {
		fprintf(stderr, "%s: prctl(PR_NUMA_BALANCING, %d): %s\n", prog,
			mode, strerror(errno));
		return 1;
	}
	execvp(argv[0], argv);
	ret = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
	return ret;
}

int main(int argc, char **argv)
{
	const char *opt;
	int mode;

	if (argc < 2)
		return bad_usage("missing option");
	opt = argv[1];

	if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(opt, "--show")) {
		if (argc > 3)
			return bad_usage("--show takes at most one PID, got '%s'",
					 argv[3]);
		return show(argc == 3 ? argv[2] : NULL);
	}

	if (!strcmp(opt, "--disable"))
		mode = PR_SET_NUMA_BALANCING_DISABLED;
	else if (!strcmp(opt, "--enable"))
		mode = PR_SET_NUMA_BALANCING_ENABLED;
	else if (!strcmp(opt, "--default"))
		mode = PR_SET_NUMA_BALANCING_DEFAULT;
	else
		return bad_usage("unknown option '%s'", opt);

	argv += 2;
	if (*argv && !strcmp(*argv, "--"))
		argv++;
	if (!*argv)
		return bad_usage("%s needs a program to run", opt);
	return run(mode, argv);
}
