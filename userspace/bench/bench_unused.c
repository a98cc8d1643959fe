// SPDX-License-Identifier: GPL-2.0
/*
 * bench_unused: the hot paths that the hook series touches, in the style of
 * Unixbench, each for a fixed number of iterations on one CPU.
 *
 *   bench_unused TEST ITERS [CPU [REPEATS]]
 *
 * TEST: pipe (write+read 512 bytes on one pipe), pingpong (1-byte token
 * between two processes on the same CPU), getppid, fork (fork, _exit,
 * waitpid), execl (fork, execl of this program, waitpid), epoll
 * (epoll_wait(-1) on an always-ready eventfd), epollpp (the ping-pong with
 * each side blocked in epoll_wait() on its pipe: the wakeup goes through
 * ep_poll_callback() to a queued waiter), fault (mmap, touch each
 * page, munmap; ITERS pages), cpuloop (ITERS rounds of integer arithmetic:
 * the scheduler tick runs task_tick_fair() meanwhile).
 *
 * Runs the test REPEATS times (default 1) and prints one line for the
 * fastest run, which the host's load disturbed the least: "test=T
 * iters=N repeats=R ns_per_op=.. cpu_ns_per_op=.. cs_per_op=..
 * faults_per_op=.. instr_per_op=.." (instr: "n/a" without a hardware
 * counter), counting this process and its children.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench_util.h"

#define PIPE_CHUNK	512
#define FAULT_CHUNK	(1024 * 4096UL)
#define EXEC_CHILD_ARG	"--exec-child"

static void run_pipe(long iters)
{
	char buf[PIPE_CHUNK] = { 0 };
	int p[2];

	if (pipe(p))
		bench_die("pipe");
	for (long i = 0; i < iters; i++) {
		if (write(p[1], buf, sizeof(buf)) != sizeof(buf) ||
		    read(p[0], buf, sizeof(buf)) != sizeof(buf))
			bench_die("pipe write/read");
	}
	close(p[0]);
	close(p[1]);
}

static void run_pingpong(long iters)
{
	int to_child[2], to_parent[2];
	char c = 0;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		bench_die("pipe");
	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (!pid) {
		for (long i = 0; i < iters; i++) {
			if (read(to_child[0], &c, 1) != 1 ||
			    write(to_parent[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (long i = 0; i < iters; i++) {
		if (write(to_child[1], &c, 1) != 1 ||
		    read(to_parent[0], &c, 1) != 1)
			bench_die("ping-pong");
	}
	if (waitpid(pid, NULL, 0) != pid)
		bench_die("waitpid");
}

/* Wait in epoll_wait() for the token on @in, then read it. */
static int epoll_read_token(int ep, int in, char *c)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, -1) == 1 && read(in, c, 1) == 1 ? 0 : -1;
}

static int epoll_on(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		bench_die("epoll setup");
	return ep;
}

static void run_epollpp(long iters)
{
	int to_child[2], to_parent[2], ep;
	char c = 0;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		bench_die("pipe");
	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (!pid) {
		ep = epoll_on(to_child[0]);
		for (long i = 0; i < iters; i++) {
			if (epoll_read_token(ep, to_child[0], &c) ||
			    write(to_parent[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	ep = epoll_on(to_parent[0]);
	for (long i = 0; i < iters; i++) {
		if (write(to_child[1], &c, 1) != 1 ||
		    epoll_read_token(ep, to_parent[0], &c))
			bench_die("epoll ping-pong");
	}
	if (waitpid(pid, NULL, 0) != pid)
		bench_die("waitpid");
	close(ep);
}

static void run_getppid(long iters)
{
	for (long i = 0; i < iters; i++)
		syscall(SYS_getppid);
}

static void wait_ok(pid_t pid)
{
	int status;

	if (pid < 0)
		bench_die("fork");
	if (waitpid(pid, &status, 0) != pid)
		bench_die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		bench_die("child failed (status %#x)", status);
}

static void run_fork(long iters)
{
	for (long i = 0; i < iters; i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		wait_ok(pid);
	}
}

static void run_execl(long iters)
{
	for (long i = 0; i < iters; i++) {
		pid_t pid = fork();

		if (!pid) {
			execl("/proc/self/exe", "bench_unused", EXEC_CHILD_ARG,
			      (char *)NULL);
			_exit(127);
		}
		wait_ok(pid);
	}
}

static void run_epoll(long iters)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);
	int efd = eventfd(1, 0);

	if (ep < 0 || efd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev))
		bench_die("epoll/eventfd setup");
	for (long i = 0; i < iters; i++) {
		if (epoll_wait(ep, &ev, 1, -1) != 1)
			bench_die("epoll_wait");
	}
	close(efd);
	close(ep);
}

static void run_fault(long pages)
{
	long per_map = FAULT_CHUNK / 4096;

	for (long done = 0; done < pages; done += per_map) {
		volatile char *m = mmap(NULL, FAULT_CHUNK,
					PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			bench_die("mmap");
		for (unsigned long off = 0; off < FAULT_CHUNK; off += 4096)
			m[off] = 1;
		munmap((void *)m, FAULT_CHUNK);
	}
}

static volatile uint64_t cpuloop_sink;

static void run_cpuloop(long iters)
{
	uint64_t x = 88172645463325252ull;

	for (long i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	cpuloop_sink = x;
}

static const struct {
	const char *name;
	void (*run)(long iters);
} tests[] = {
	{ "pipe", run_pipe },
	{ "pingpong", run_pingpong },
	{ "getppid", run_getppid },
	{ "fork", run_fork },
	{ "execl", run_execl },
	{ "epoll", run_epoll },
	{ "epollpp", run_epollpp },
	{ "fault", run_fault },
	{ "cpuloop", run_cpuloop },
};

struct measurement {
	uint64_t wall_ns;
	uint64_t cpu_ns;
	long cs;
	long faults;
	long long instr;
};

static void measure(void (*run)(long iters), long iters, int ifd,
		    struct measurement *m)
{
	struct bench_usage s0, s1, c0, c1, ds, dc;
	uint64_t t0;

	bench_usage_read(RUSAGE_SELF, &s0);
	bench_usage_read(RUSAGE_CHILDREN, &c0);
	bench_instr_start(ifd);
	t0 = bench_now_ns();
	run(iters);
	m->wall_ns = bench_now_ns() - t0;
	m->instr = bench_instr_stop(ifd);
	bench_usage_read(RUSAGE_SELF, &s1);
	bench_usage_read(RUSAGE_CHILDREN, &c1);
	bench_usage_sub(&ds, &s1, &s0);
	bench_usage_sub(&dc, &c1, &c0);
	m->cpu_ns = ds.cpu_ns + dc.cpu_ns;
	m->cs = ds.nvcsw + ds.nivcsw + dc.nvcsw + dc.nivcsw;
	m->faults = ds.minflt + dc.minflt;
}

int main(int argc, char **argv)
{
	struct measurement m, best = { .wall_ns = UINT64_MAX };
	long iters, repeats;
	size_t i;
	int ifd;

	if (argc == 2 && !strcmp(argv[1], EXEC_CHILD_ARG))
		return 0;
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s TEST ITERS [CPU [REPEATS]]\n",
			argv[0]);
		return 64;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(argv[1], tests[i].name))
			break;
	iters = atol(argv[2]);
	repeats = argc == 5 ? atol(argv[4]) : 1;
	if (i == sizeof(tests) / sizeof(tests[0]) || iters <= 0 ||
	    repeats <= 0) {
		fprintf(stderr, "%s: unknown test or bad ITERS/REPEATS\n",
			argv[0]);
		return 64;
	}
	bench_pin(argc >= 4 ? atoi(argv[3]) : 0);

	ifd = bench_instr_open();
	for (long r = 0; r < repeats; r++) {
		measure(tests[i].run, iters, ifd, &m);
		if (m.wall_ns < best.wall_ns)
			best = m;
	}

	printf("test=%s iters=%ld repeats=%ld ns_per_op=%.3f cpu_ns_per_op=%.3f cs_per_op=%.4f faults_per_op=%.4f",
	       tests[i].name, iters, repeats, (double)best.wall_ns / iters,
	       (double)best.cpu_ns / iters, (double)best.cs / iters,
	       (double)best.faults / iters);
	if (best.instr >= 0)
		printf(" instr_per_op=%.1f\n", (double)best.instr / iters);
	else
		printf(" instr_per_op=n/a\n");
	return 0;
}
