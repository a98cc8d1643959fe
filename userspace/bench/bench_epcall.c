// SPDX-License-Identifier: GPL-2.0
/*
 * bench_epcall: the cost of one epoll_wait() call that returns at once,
 * on a plain epoll instance and on one with a minimum wait.
 *
 *   bench_epcall [-k K] ITEMS MAXEVENTS MODE WAIT_US ITERS REPEATS
 *
 * ITEMS eventfds, each always ready (counter 1, never read), are watched
 * by one instance; each call is epoll_wait(MAXEVENTS, timeout -1). With
 * ITEMS >= MAXEVENTS (or >= K) the call returns at once because its batch
 * target is reached, whatever the minimum wait.
 * MODE: plain, minwait (EPOLL_CTL_MIN_WAIT of WAIT_US) or minwait-first
 * (the same with EPOLL_MIN_WAIT_AFTER_FIRST); -k K: EPOLL_CTL_MIN_EVENTS.
 *
 * Runs ITERS calls REPEATS times on CPU 0 and prints one line for the
 * fastest run: "... ns_per_call=.. events_per_call=..". Under QEMU's
 * -icount shift=0 a nanosecond is one instruction. When the kernel refuses
 * an epoll_ctl() op the line says refused=OP errno=NAME (exit status 0).
 */
#define _GNU_SOURCE
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "bench_util.h"
#include "numab_uapi.h"

#define MAX_ITEMS	64

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-k K] ITEMS MAXEVENTS plain|minwait|minwait-first WAIT_US ITERS REPEATS\n",
		prog);
}

int main(int argc, char **argv)
{
	struct epoll_event ev[MAX_ITEMS];
	long items, maxevents, wait_us, iters, repeats, min_events = 0;
	uint64_t best = UINT64_MAX, value = 0;
	const char *mode, *refused = NULL;
	long events = 0;
	int ep, opt;

	while ((opt = getopt(argc, argv, "k:")) != -1) {
		if (opt != 'k') {
			usage(argv[0]);
			return 2;
		}
		min_events = atol(optarg);
	}
	if (argc - optind != 6) {
		usage(argv[0]);
		return 2;
	}
	items = atol(argv[optind]);
	maxevents = atol(argv[optind + 1]);
	mode = argv[optind + 2];
	wait_us = atol(argv[optind + 3]);
	iters = atol(argv[optind + 4]);
	repeats = atol(argv[optind + 5]);
	if (!strcmp(mode, "minwait-first"))
		value = EPOLL_MIN_WAIT_AFTER_FIRST;
	else if (strcmp(mode, "minwait") && strcmp(mode, "plain"))
		mode = NULL;
	if (!mode || items < 1 || items > MAX_ITEMS || maxevents < 1 ||
	    maxevents > MAX_ITEMS || wait_us < 0 || min_events < 0 ||
	    iters < 1 || repeats < 1) {
		usage(argv[0]);
		return 2;
	}
	bench_pin(0);

	ep = epoll_create1(0);
	if (ep < 0)
		bench_die("epoll_create1");
	for (long i = 0; i < items; i++) {
		struct epoll_event e = { .events = EPOLLIN };
		int efd = eventfd(1, 0);

		if (efd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e))
			bench_die("eventfd setup");
	}
	if (min_events) {
		struct epoll_event e = { .data.u64 = min_events };

		if (epoll_ctl(ep, EPOLL_CTL_MIN_EVENTS, -1, &e) < 0)
			refused = "EPOLL_CTL_MIN_EVENTS";
	}
	if (!refused && strcmp(mode, "plain")) {
		struct epoll_event e = { .data.u64 = wait_us | value };

		if (epoll_ctl(ep, EPOLL_CTL_MIN_WAIT, -1, &e) < 0)
			refused = "EPOLL_CTL_MIN_WAIT";
	}
	printf("items=%ld maxevents=%ld mode=%s wait_us=%ld min_events=%ld iters=%ld repeats=%ld",
	       items, maxevents, mode, wait_us, min_events, iters, repeats);
	if (refused) {
		printf(" refused=%s errno=%s\n", refused, strerrorname_np(errno));
		return 0;
	}

	for (long r = 0; r < repeats; r++) {
		uint64_t t0 = bench_now_ns(), t;

		events = 0;
		for (long i = 0; i < iters; i++) {
			int n = epoll_wait(ep, ev, maxevents, -1);

			if (n < 1)
				bench_die("epoll_wait");
			events += n;
		}
		t = bench_now_ns() - t0;
		if (t < best)
			best = t;
	}
	printf(" ns_per_call=%.2f events_per_call=%.2f\n", (double)best / iters,
	       (double)events / iters);
	return 0;
}
