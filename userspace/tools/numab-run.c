// SPDX-License-Identifier: GPL-2.0
/*
 * numab-run: run a program with a per-process NUMA balancing mode, or show
 * a process's mode.
 *
 *   numab-run -d|-e|-D [--] PROG [ARGS...]
 *   numab-run -s [PID]
 *
 * The mode is set with prctl(PR_NUMA_BALANCING) and kept across execve(),
 * so PROG and its children run with it. Options stop at PROG's name.
 *
 * Exit status, as env(1), nice(1) and timeout(1) have it: PROG's own, or
 *   125  numab-run itself failed (bad usage, the feature missing, no such
 *        process, prctl error)
 *   126  PROG found but could not be run
 *   127  PROG not found
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "numab_uapi.h"
#include "proc_field.h"

#define EXIT_FAILED	125
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

static const char *prog = "numab-run";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s -d|-e|-D [--] PROG [ARGS...]\n"
		"       %s -s [PID]\n"
		"\n"
		"Run PROG with NUMA balancing disabled, enabled or following\n"
		"kernel.numa_balancing (the default), or print the mode of PID\n"
		"(default: this process). PROG and its children keep the mode.\n"
		"\n"
		"  -d, --disable   no automatic NUMA balancing for PROG\n"
		"  -e, --enable    NUMA balancing for PROG, even when it is off\n"
		"  -D, --default   follow kernel.numa_balancing\n"
		"  -s, --show      print the mode of PID, or of numab-run itself\n"
		"  -h, --help      this text\n"
		"  -V, --version   the version\n"
		"\n"
		"Exit status: PROG's, or 125 if numab-run fails (bad usage, the\n"
		"kernel feature or module missing, no such process), 126 if\n"
		"PROG cannot be run, 127 if PROG is not found.\n",
		prog, prog);
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
	return EXIT_FAILED;
}

/* The mode word of @pid ("self" if NULL) in @buf: 0 or -errno. */
static int status_mode(const char *pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%s/status", pid ? pid : "self");
	return proc_field(path, NUMAB_STATUS_KEY, buf, len);
}

static int show(const char *pid)
{
	char mode[64];
	char *end;
	long v;
	int ret;

	if (pid) {
		errno = 0;
		v = strtol(pid, &end, 10);
		if (!*pid || *end || errno || v <= 0 || v > INT_MAX)
			return bad_usage("not a process id: '%s'", pid);
	}
	ret = status_mode(pid, mode, sizeof(mode));
	if (!ret) {
		printf("%s\n", mode);
		return 0;
	}
	if (ret == -ENOENT || ret == -ESRCH)
		fprintf(stderr, "%s: no such process: %s\n", prog, pid);
	else if (ret == -ENODATA)
		fprintf(stderr,
			"%s: kernel without per-process NUMA balancing (no %s line in /proc/%s/status)\n",
			prog, "NumaB_mode", pid ? pid : "self");
	else
		fprintf(stderr, "%s: /proc/%s/status: %s\n", prog,
			pid ? pid : "self", strerror(-ret));
	return EXIT_FAILED;
}

/* The module answers PR_GET_NUMA_BALANCING; nothing else does. */
static int check_feature(void)
{
	char buf[64];
	int mode;

	if (!prctl(PR_NUMA_BALANCING, PR_GET_NUMA_BALANCING,
		   (unsigned long)&mode, 0, 0))
		return 0;
	if (errno != EINVAL) {
		fprintf(stderr, "%s: prctl(PR_NUMA_BALANCING): %s\n", prog,
			strerror(errno));
		return EXIT_FAILED;
	}
	if (status_mode(NULL, buf, sizeof(buf)) == -ENODATA)
		fprintf(stderr,
			"%s: kernel without per-process NUMA balancing hooks\n",
			prog);
	else
		fprintf(stderr,
			"%s: numab_minwait module not loaded (modprobe numab_minwait)\n",
			prog);
	return EXIT_FAILED;
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
		return EXIT_FAILED;
	}
	execvp(argv[0], argv);
	ret = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "disable", no_argument, NULL, 'd' },
		{ "enable", no_argument, NULL, 'e' },
		{ "default", no_argument, NULL, 'D' },
		{ "show", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, action = 0, mode = -1;

	/* "+": options end at PROG, whose own options are its own. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+deDshV", options, NULL)) != -1) {
		switch (c) {
		case 'd':
			mode = PR_SET_NUMA_BALANCING_DISABLED;
			break;
		case 'e':
			mode = PR_SET_NUMA_BALANCING_ENABLED;
			break;
		case 'D':
			mode = PR_SET_NUMA_BALANCING_DEFAULT;
			break;
		case 's':
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s %s\n", prog, NUMAB_VERSION);
			return 0;
		default:
			if (optopt && argv[optind - 1][1] != '-')
				return bad_usage("unknown option '-%c'", optopt);
			return bad_usage("unknown option '%s'",
					 argv[optind - 1]);
		}
		if (action && action != c)
			return bad_usage("options -%c and -%c exclude each other",
					 action, c);
		action = c;
	}
	argv += optind;
	argc -= optind;

	if (!action)
		return bad_usage("missing option: -d, -e, -D or -s");
	if (action == 's') {
		if (argc > 1)
			return bad_usage("--show takes at most one PID, got '%s'",
					 argv[1]);
		return show(argc ? argv[0] : NULL);
	}
	if (!argc)
		return bad_usage("-%c needs a program to run", action);
	return run(mode, argv);
}
