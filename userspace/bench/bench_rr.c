// SPDX-License-Identifier: GPL-2.0
/*
 * bench_rr: a request/response server on epoll and a client that sends
 * requests at a steady rate over several unix socket connections, in one
 * process (a server thread and a client thread).
 *
 *   bench_rr [-k K] [-t SLACK_NS] [-c SERVER_CPU,CLIENT_CPU] [-p] [-e]
 *            [-s HIGH] MODE WAIT_US CONNS RATE REQUESTS
 *
 * MODE: plain         epoll_wait(-1) as it is
 *       sleep         sleep WAIT_US, then epoll_wait(-1) (the userspace hack)
 *       minwait       EPOLL_CTL_MIN_WAIT of WAIT_US on the server's instance
 *       minwait-first the same with EPOLL_MIN_WAIT_AFTER_FIRST
 *       minwait-adaptive  the same with EPOLL_MIN_WAIT_ADAPTIVE: WAIT_US
 *                     is the ceiling of the wait the module adapts
 * -k K      also EPOLL_CTL_MIN_EVENTS of K (K > 0) on the server's instance
 * -t NS     timer slack of both threads, PR_SET_TIMERSLACK (default 1 ns:
 *           the sleep hack and the minimum wait end when asked, and the
 *           client's pacing sleeps are exact)
 * -c S,C    the CPUs of the server and the client thread (default 0,0)
 * -e        the server watches its connections edge-triggered (EPOLLET);
 *           level-triggered by default. Either way it reads each one
 *           until EAGAIN.
 * -p        Poisson arrivals: exponential gaps of mean 1 / RATE from a
 *           fixed seed (the same sequence in every run), instead of one
 *           request every 1 / RATE
 * -s HIGH   a step load, paced: REQUESTS at RATE, then as long at HIGH
 *           requests/s, then REQUESTS at RATE again (a phase: a whole
 *           number of 20 ms windows); besides the run's result line, one
 *           line per window of planned send time (see print_windows())
 *
 * A request is 16 bytes (send time, sequence number); the server echoes
 * it. The client sends request k at its time (start + k / RATE, or the
 * k-th Poisson arrival; absolute sleeps), reads the echoes on its own
 * epoll instance and records each latency.
 *
 * Prints one line of key=value: throughput, the server thread's
 * epoll_wait calls, events per call, voluntary and involuntary context
 * switches (getrusage(RUSAGE_THREAD)) and CPU time per request (the
 * thread's CPU clock, ns; rusage's, us, as ru_cpu_us_per_req), and the
 * request latency p50/p99/p99.9 in microseconds. When the kernel refuses
 * an epoll_ctl() of the mode (no module, or an op it does not know), the
 * line says refused=OP errno=NAME instead, and the exit status is 0.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "bench_util.h"
#include "numab_uapi.h"

#define MAX_CONNS	64
#define BATCH		64
#define WINDOW_NS	20000000ull	/* step load: its report's time unit */

enum mode {
	MODE_PLAIN, MODE_SLEEP, MODE_MINWAIT, MODE_MINWAIT_FIRST,
	MODE_MINWAIT_ADAPTIVE,
};

static const char *const mode_names[] = {
	[MODE_PLAIN] = "plain",
	[MODE_SLEEP] = "sleep",
	[MODE_MINWAIT] = "minwait",
	[MODE_MINWAIT_FIRST] = "minwait-first",
	[MODE_MINWAIT_ADAPTIVE] = "minwait-adaptive",
};

struct request {
	uint64_t sent_ns;
	uint64_t seq;
};

struct server_result {
	long epoll_calls;
	long events;
	long handled;
	uint64_t wall_ns;
	uint64_t cpu_ns;
	struct bench_usage usage;
};

static enum mode mode;
static long wait_us, conns, rate, requests, min_events;
static unsigned long timer_slack_ns = 1;
static int poisson;
static long step_rate;		/* -s: the middle phase's rate, or 0 */
static long phase_requests;	/* -s: the requests of a RATE phase */
static int edge_triggered;
static uint64_t *send_at_ns;	/* request k's time, from the start */
static int server_cpu, client_cpu;
static int server_fd[MAX_CONNS], client_fd[MAX_CONNS];
static int server_ep;
static struct server_result server;
static uint64_t *latency_ns;

/*
 * Step load: what the server did for the requests planned in each
 * window. A window is closed when the server first serves a request
 * planned in a later one: the thread CPU clock is read once per window,
 * not per call, so the figures cost every mode the same.
 */
struct window {
	long handled;
	long epoll_calls;
	long events;
	uint64_t cpu_ns;
};

static struct window *windows;
static long n_windows;

/*
 * Echo every whole request waiting on @fd; returns how many, and the
 * highest sequence number echoed in *@last_seq.
 */
static long serve_conn(int fd, uint64_t *last_seq)
{
	struct request buf[BATCH];
	long n = 0;
	ssize_t r;

	for (;;) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return n;
		if (r <= 0 || r % sizeof(buf[0]))
			bench_die("server recv");
		if (send(fd, buf, r, 0) != r)
			bench_die("server send");
		n += r / sizeof(buf[0]);
		if (buf[r / sizeof(buf[0]) - 1].seq > *last_seq)
			*last_seq = buf[r / sizeof(buf[0]) - 1].seq;
	}
}

/* Step load: charge what the server did since @mark to window @w. */
static void window_charge(long w, struct window *mark)
{
	uint64_t cpu = bench_thread_cpu_ns();

	windows[w].handled += server.handled - mark->handled;
	windows[w].epoll_calls += server.epoll_calls - mark->epoll_calls;
	windows[w].events += server.events - mark->events;
	windows[w].cpu_ns += cpu - mark->cpu_ns;
	*mark = (struct window){ server.handled, server.epoll_calls,
				 server.events, cpu };
}

/*
 * Step load: once the server serves request @seq, planned in a window
 * after @cur, charge window @cur and make @seq's window the current one.
 */
static void window_mark(long *cur, uint64_t seq, struct window *mark)
{
	long w = send_at_ns[seq] / WINDOW_NS;

	if (w <= *cur)
		return;
	window_charge(*cur, mark);
	*cur = w < n_windows ? w : n_windows - 1;
}

static void *server_main(void *arg)
{
	struct timespec nap = { 0, wait_us * 1000 };
	struct epoll_event ev[BATCH];
	struct bench_usage u0, u1;
	struct window mark = { 0 };
	uint64_t t0, c0, last_seq = 0;
	long cur = 0;

	(void)arg;
	bench_pin(server_cpu);
	bench_usage_read(RUSAGE_THREAD, &u0);
	c0 = bench_thread_cpu_ns();
	mark.cpu_ns = c0;
	t0 = bench_now_ns();
	while (server.handled < requests) {
		int n;

		if (mode == MODE_SLEEP)
			nanosleep(&nap, NULL);
		n = epoll_wait(server_ep, ev, BATCH, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			bench_die("epoll_wait");
		}
		server.epoll_calls++;
		server.events += n;
		for (int i = 0; i < n; i++)
			server.handled += serve_conn(ev[i].data.fd, &last_seq);
		if (step_rate)
			window_mark(&cur, last_seq, &mark);
	}
	if (step_rate)
		window_charge(cur, &mark);
	server.wall_ns = bench_now_ns() - t0;
	server.cpu_ns = bench_thread_cpu_ns() - c0;
	bench_usage_read(RUSAGE_THREAD, &u1);
	bench_usage_sub(&server.usage, &u1, &u0);
	return NULL;
}

static long client_receive(int fd)
{
	struct request buf[BATCH];
	uint64_t now;
	long n = 0;
	ssize_t r;

	for (;;) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return n;
		if (r <= 0 || r % sizeof(buf[0]))
			bench_die("client recv");
		now = bench_now_ns();
		for (size_t i = 0; i < r / sizeof(buf[0]); i++) {
			if (buf[i].seq >= (uint64_t)requests)
				bench_die("bad sequence number");
			latency_ns[buf[i].seq] = now - buf[i].sent_ns;
		}
		n += r / sizeof(buf[0]);
	}
}

/*
 * Send request @k on its connection. When the socket is full (the server
 * is behind), read echoes meanwhile rather than block, which could
 * deadlock with a server blocked sending to us. Returns the echoes read.
 */
static long client_send(long k)
{
	struct request req = { .sent_ns = bench_now_ns(), .seq = k };
	int fd = client_fd[k % conns];
	long n = 0;
	ssize_t r;

	while ((r = send(fd, &req, sizeof(req), MSG_DONTWAIT)) < 0 &&
	       (errno == EAGAIN || errno == EWOULDBLOCK))
		for (long i = 0; i < conns; i++)
			n += client_receive(client_fd[i]);
	if (r != sizeof(req))
		bench_die("client send");
	return n;
}

static uint64_t client_send_at(long k)
{
	return send_at_ns[k];
}

static long client_event(const struct epoll_event *ev)
{
	return client_receive(ev->data.fd);
}

/* Send at the planned times and collect the echoes, all in one thread. */
static void client_main(void)
{
	int ep = epoll_create1(0);

	if (ep < 0)
		bench_die("epoll_create1");
	for (long i = 0; i < conns; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.fd = client_fd[i] };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, client_fd[i], &e))
			bench_die("client epoll_ctl");
	}
	bench_pin(client_cpu);
	bench_paced_client(ep, requests, client_send_at, client_send,
			   client_event);
	close(ep);
}

/*
 * When each request is sent: paced (the step load's three phases, each
 * paced), or Poisson arrivals at @rate.
 */
static void plan_arrivals(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;	/* fixed seed: same in every run */
	long high = requests - 2 * phase_requests;
	uint64_t gap = 1000000000ull / rate;
	double t = 0;

	for (long k = 0; k < requests; k++) {
		if (poisson) {
			/* xorshift64, then an exponential gap of mean 1 / rate. */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			t += -log(((x >> 11) + 1) * 0x1p-53) * 1e9 / rate;
			send_at_ns[k] = t;
		} else if (step_rate && k >= phase_requests + high) {
			send_at_ns[k] = (k - high) * gap + phase_requests * gap;
		} else if (step_rate && k >= phase_requests) {
			send_at_ns[k] = phase_requests * gap +
					(k - phase_requests) *
					(1000000000ull / step_rate);
		} else {
			send_at_ns[k] = k * gap;
		}
	}
}

static int parse_mode(const char *s)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	return -1;
}

static void print_params(void)
{
	printf("mode=%s wait_us=%ld min_events=%ld timer_slack_ns=%lu arrivals=%s trigger=%s conns=%ld rate=%ld requests=%ld",
	       mode_names[mode], wait_us, min_events, timer_slack_ns,
	       poisson ? "poisson" : "paced", edge_triggered ? "et" : "lt",
	       conns, rate, requests);
	if (step_rate)
		printf(" step_rate=%ld phase_ms=%llu", step_rate,
		       phase_requests * (1000000000ull / rate) / 1000000);
}

/*
 * Step load: per window of planned send time, its start (ms), the rate
 * planned then, and what the server did for it (requests, epoll_wait
 * calls, events per call, CPU per request) with the p99 latency of the
 * requests planned in it.
 */
static void print_windows(void)
{
	uint64_t *lat = calloc(requests, sizeof(*lat));
	uint64_t phase_ns = phase_requests * (1000000000ull / rate);
	long k = 0;

	if (!lat)
		bench_die("calloc");
	for (long w = 0; w < n_windows; w++) {
		const struct window *win = &windows[w];
		uint64_t t = w * WINDOW_NS;
		size_t n = 0;

		for (; k < requests && send_at_ns[k] < t + WINDOW_NS; k++)
			lat[n++] = latency_ns[k];
		if (!n || !win->handled)
			continue;
		qsort(lat, n, sizeof(*lat), bench_cmp_u64);
		print_params();
		printf(" window_ms=%llu t_ms=%llu load=%ld win_requests=%ld win_epoll_calls=%ld win_events_per_call=%.3f win_cpu_us_per_req=%.4f win_lat_p99_us=%.1f\n",
		       WINDOW_NS / 1000000, (unsigned long long)t / 1000000,
		       t >= phase_ns && t < 2 * phase_ns ? step_rate : rate,
		       win->handled, win->epoll_calls,
		       win->epoll_calls ?
		       (double)win->events / win->epoll_calls : 0.0,
		       win->cpu_ns / 1e3 / win->handled,
		       bench_quantile(lat, n, 0.99) / 1e3);
	}
	free(lat);
}

/*
 * epoll_ctl(@op) of @value on the server's instance; on a refusal, prints
 * the result line that says so and returns -1.
 */
static int server_ctl(int op, const char *name, uint64_t value)
{
	struct epoll_event e = { .data.u64 = value };

	if (epoll_ctl(server_ep, op, -1, &e) >= 0)
		return 0;
	print_params();
	printf(" refused=%s errno=%s\n", name, strerrorname_np(errno));
	return -1;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-k K] [-t SLACK_NS] [-c SERVER_CPU,CLIENT_CPU] [-p] [-e] [-s HIGH] plain|sleep|minwait|minwait-first|minwait-adaptive WAIT_US CONNS RATE REQUESTS\n",
		prog);
}

int main(int argc, char **argv)
{
	uint64_t s_cs;
	pthread_t thread;
	int m, opt;

	while ((opt = getopt(argc, argv, "k:t:c:pes:")) != -1) {
		switch (opt) {
		case 's':
			step_rate = atol(optarg);
			break;
		case 'p':
			poisson = 1;
			break;
		case 'e':
			edge_triggered = 1;
			break;
		case 'k':
			min_events = atol(optarg);
			break;
		case 't':
			timer_slack_ns = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &server_cpu, &client_cpu) != 2) {
				usage(argv[0]);
				return 2;
			}
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (argc - optind != 5) {
		usage(argv[0]);
		return 2;
	}
	m = parse_mode(argv[optind]);
	wait_us = atol(argv[optind + 1]);
	conns = atol(argv[optind + 2]);
	rate = atol(argv[optind + 3]);
	requests = atol(argv[optind + 4]);
	if (m < 0 || wait_us < 0 || min_events < 0 || conns < 1 ||
	    conns > MAX_CONNS || rate < 1 || requests < 1 || !timer_slack_ns) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	mode = m;
	/* The step load's windows and phases must line up. */
	if (step_rate && (poisson || step_rate < 1 || step_rate > 1000000 ||
			  rate > 1000000 ||
			  requests * (1000000000ull / rate) % WINDOW_NS ||
			  (uint64_t)requests * step_rate % rate)) {
		fprintf(stderr, "%s: -s needs paced arrivals, rates up to 1000000/s and phases of whole %llu ms windows\n",
			argv[0], WINDOW_NS / 1000000);
		return 2;
	}
	if (step_rate) {
		phase_requests = requests;
		requests = 2 * requests + requests * step_rate / rate;
		n_windows = (3 * phase_requests * (1000000000ull / rate)) /
			    WINDOW_NS + 1;
		windows = calloc(n_windows, sizeof(*windows));
		if (!windows)
			bench_die("calloc");
	}
	/* Both threads inherit it: the same slack for every mode. */
	if (prctl(PR_SET_TIMERSLACK, timer_slack_ns, 0, 0, 0))
		bench_die("PR_SET_TIMERSLACK");

	latency_ns = calloc(requests, sizeof(*latency_ns));
	send_at_ns = calloc(requests, sizeof(*send_at_ns));
	if (!latency_ns || !send_at_ns)
		bench_die("calloc");
	plan_arrivals();
	server_ep = epoll_create1(0);
	if (server_ep < 0)
		bench_die("epoll_create1");
	for (long i = 0; i < conns; i++) {
		int sv[2];
		struct epoll_event e = {
			.events = EPOLLIN | (edge_triggered ? EPOLLET : 0),
		};

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			bench_die("socketpair");
		server_fd[i] = sv[0];
		client_fd[i] = sv[1];
		e.data.fd = sv[0];
		if (epoll_ctl(server_ep, EPOLL_CTL_ADD, sv[0], &e))
			bench_die("server epoll_ctl");
	}
	if (min_events &&
	    server_ctl(EPOLL_CTL_MIN_EVENTS, "EPOLL_CTL_MIN_EVENTS", min_events))
		return 0;
	if (((mode == MODE_MINWAIT && wait_us) || mode == MODE_MINWAIT_FIRST ||
	     mode == MODE_MINWAIT_ADAPTIVE) &&
	    server_ctl(EPOLL_CTL_MIN_WAIT, "EPOLL_CTL_MIN_WAIT",
		       wait_us | (mode == MODE_MINWAIT_FIRST ?
				  EPOLL_MIN_WAIT_AFTER_FIRST : 0) |
		       (mode == MODE_MINWAIT_ADAPTIVE ?
			EPOLL_MIN_WAIT_ADAPTIVE : 0)))
		return 0;

	if (pthread_create(&thread, NULL, server_main, NULL))
		bench_die("pthread_create");
	client_main();
	pthread_join(thread, NULL);

	/* Per window first: it reads the latencies in request order. */
	if (step_rate)
		print_windows();
	qsort(latency_ns, requests, sizeof(*latency_ns), bench_cmp_u64);
	s_cs = server.usage.nvcsw + server.usage.nivcsw;
	print_params();
	printf(" req_per_s=%.0f epoll_calls_per_s=%.0f events_per_call=%.3f vcs_per_req=%.4f ivcs_per_req=%.4f cs_per_req=%.4f cpu_us_per_req=%.4f ru_cpu_us_per_req=%.3f lat_p50_us=%.1f lat_p99_us=%.1f lat_p999_us=%.1f\n",
	       requests * 1e9 / server.wall_ns,
	       server.epoll_calls * 1e9 / server.wall_ns,
	       (double)server.events / server.epoll_calls,
	       (double)server.usage.nvcsw / requests,
	       (double)server.usage.nivcsw / requests,
	       (double)s_cs / requests, server.cpu_ns / 1e3 / requests,
	       server.usage.cpu_ns / 1e3 / requests,
	       bench_quantile(latency_ns, requests, 0.50) / 1e3,
	       bench_quantile(latency_ns, requests, 0.99) / 1e3,
	       bench_quantile(latency_ns, requests, 0.999) / 1e3);
	return 0;
}
