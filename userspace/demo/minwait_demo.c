// SPDX-License-Identifier: GPL-2.0
/*
 * minwait_demo: what EPOLL_CTL_MIN_WAIT does, in two short runs.
 *
 *   minwait_demo seed USECS   the seed's two events 10 ms apart
 *   minwait_demo load USECS   a steady load: events per epoll_wait()
 *
 * USECS 0 runs without a minimum wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "numab_uapi.h"

#define LOAD_FDS	4
#define LOAD_PERIOD_US	100	/* one event every 100 us */
#define LOAD_SECONDS	1

struct writer {
	int fds[LOAD_FDS];
	int nfds;
	int period_us;
	int count;
	volatile int stop;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *write_events(void *arg)
{
	struct writer *w = arg;
	char b = 1;
	int i;

	for (i = 0; !w->stop && (!w->count || i < w->count); i++) {
		usleep(w->period_us);
		if (write(w->fds[i % w->nfds], &b, 1) != 1)
			break;
	}
	return NULL;
}

/* An epoll instance watching @n pipes; write ends in @wfds. */
static int setup(int n, int *rfds, int *wfds, long usecs)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int efd = epoll_create1(0), i, p[2];

	for (i = 0; i < n; i++) {
		if (pipe(p))
			return -1;
		rfds[i] = p[0];
		wfds[i] = p[1];
		ev.data.fd = p[0];
		if (epoll_ctl(efd, EPOLL_CTL_ADD, p[0], &ev))
			return -1;
	}
	ev.data.u64 = usecs;
	if (usecs && epoll_ctl(efd, EPOLL_CTL_MIN_WAIT, -1, &ev) < 0) {
		fprintf(stderr, "EPOLL_CTL_MIN_WAIT: %s (module loaded?)\n",
			strerror(errno));
		return -1;
	}
	return efd;
}

static int seed(long usecs)
{
	struct writer w = { .nfds = 2, .period_us = 10000, .count = 2 };
	struct epoll_event events[2];
	int rfds[2], efd, n;
	pthread_t t;
	double t0;

	efd = setup(2, rfds, w.fds, usecs);
	if (efd < 0)
		return 1;
	pthread_create(&t, NULL, write_events, &w);
	t0 = now_ms();
	n = epoll_wait(efd, events, 2, -1);
	printf("  min-wait %6ld us: epoll_wait returned %d event%s after %3.0f ms\n",
	       usecs, n, n == 1 ? " " : "s", now_ms() - t0);
	pthread_join(t, NULL);
	return n < 0;
}

static void drain(int fd)
{
	char buf[64];

	if (read(fd, buf, sizeof(buf)) < 0)
		perror("read");
}

static int load(long usecs)
{
	struct writer w = { .nfds = LOAD_FDS, .period_us = LOAD_PERIOD_US };
	struct epoll_event events[64];
	long calls = 0, nevents = 0;
	struct rusage ru0, ru1;
	int rfds[LOAD_FDS], efd, n, i;
	double end;
	pthread_t t;

	efd = setup(LOAD_FDS, rfds, w.fds, usecs);
	if (efd < 0)
		return 1;
	pthread_create(&t, NULL, write_events, &w);
	getrusage(RUSAGE_THREAD, &ru0);
	end = now_ms() + LOAD_SECONDS * 1000;
	while (now_ms() < end) {
		n = epoll_wait(efd, events, 64, 100);
		if (n < 0)
			return 1;
		calls++;
		nevents += n;
		for (i = 0; i < n; i++)
			drain(events[i].data.fd);
	}
	getrusage(RUSAGE_THREAD, &ru1);
	w.stop = 1;
	pthread_join(t, NULL);
	printf("  min-wait %6ld us: %5ld epoll_wait calls, %5ld fd events, %5.2f per call, %5ld context switches\n",
	       usecs, calls, nevents, calls ? (double)nevents / calls : 0.0,
	       (ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw));
	return 0;
}

int main(int argc, char **argv)
{
	long usecs;

	if (argc != 3 || (strcmp(argv[1], "seed") && strcmp(argv[1], "load"))) {
		fprintf(stderr, "usage: %s seed|load USECS\n", argv[0]);
		return 64;
	}
	usecs = strtol(argv[2], NULL, 10);
	return argv[1][0] == 's' ? seed(usecs) : load(usecs);
}
