// SPDX-License-Identifier: GPL-2.0
/*
 * bench_memc: a steady-rate memcached client over a unix socket, and what
 * the server process spent meanwhile.
 *
 *   bench_memc SOCKET SERVER_PID CONNS RATE REQUESTS [CPU]
 *
 * Stores KEYS small values, then sends "get kN" requests at RATE per
 * second, round robin over CONNS connections (request k at start + k /
 * RATE), and reads the replies on an epoll instance of its own. Prints
 * one line of key=value: throughput, the server's voluntary and
 * involuntary context switches (all of its threads, from
 * /proc/SERVER_PID/task/) and CPU time (its process CPU clock, ns) per
 * request, and the request latency p50/p99/p99.9 in microseconds.
 */
#define _GNU_SOURCE
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "bench_util.h"

#define MAX_CONNS	64
#define KEYS		100
#define VALUE_LEN	32

static const char reply_end[] = "END\r\n";

struct conn {
	int fd;
	long replies;		/* complete replies so far */
	unsigned int matched;	/* bytes of reply_end matched so far */
};

static struct conn conns[MAX_CONNS];
static long nconns, requests;
static uint64_t interval;	/* between two requests, ns */
static uint64_t *sent_ns, *latency_ns;

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		bench_die("socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		bench_die("connect %s", path);
	return fd;
}

/* Store the keys that the run will get; each reply is "STORED\r\n". */
static void store_keys(int fd)
{
	char cmd[128], value[VALUE_LEN + 1], reply[16];

	memset(value, 'x', VALUE_LEN);
	value[VALUE_LEN] = '\0';
	for (int k = 0; k < KEYS; k++) {
		int len = snprintf(cmd, sizeof(cmd), "set k%d 0 0 %d\r\n%s\r\n",
				   k, VALUE_LEN, value);

		if (send(fd, cmd, len, 0) != len ||
		    recv(fd, reply, 8, MSG_WAITALL) != 8 ||
		    memcmp(reply, "STORED\r\n", 8))
			bench_die("set k%d: unexpected reply", k);
	}
}

/*
 * Read what @c has; each "END\r\n" completes the next request of this
 * connection (request k goes to connection k % nconns). Returns replies.
 */
static long receive(long ci)
{
	struct conn *c = &conns[ci];
	char buf[4096];
	long n = 0;
	ssize_t r;

	for (;;) {
		r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return n;
		if (r <= 0)
			bench_die("recv");
		for (ssize_t i = 0; i < r; i++) {
			long seq;

			if (buf[i] != reply_end[c->matched]) {
				c->matched = buf[i] == reply_end[0];
				continue;
			}
			if (++c->matched < sizeof(reply_end) - 1)
				continue;
			c->matched = 0;
			seq = ci + c->replies++ * nconns;
			if (seq >= requests)
				bench_die("more replies than requests");
			latency_ns[seq] = bench_now_ns() - sent_ns[seq];
			n++;
		}
	}
}

/*
 * Send request @k on its connection. When the socket is full (the server
 * is behind), read replies meanwhile rather than block: a client blocked
 * in send() while the server is blocked sending it replies would
 * deadlock. Returns the replies read.
 */
static long send_get(long k)
{
	int fd = conns[k % nconns].fd;
	char cmd[32], *p = cmd;
	int len = snprintf(cmd, sizeof(cmd), "get k%ld\r\n", k % KEYS);
	long n = 0;

	sent_ns[k] = bench_now_ns();
	while (len) {
		ssize_t r = send(fd, p, len, MSG_DONTWAIT);

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			for (long i = 0; i < nconns; i++)
				n += receive(i);
			continue;
		}
		if (r <= 0)
			bench_die("send");
		p += r;
		len -= r;
	}
	return n;
}

static uint64_t send_at(long k)
{
	return k * interval;
}

static long receive_event(const struct epoll_event *ev)
{
	return receive(ev->data.u64);
}

int main(int argc, char **argv)
{
	struct bench_proc_usage u0, u1;
	uint64_t start, wall;
	long rate;
	pid_t pid;
	int ep;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: %s SOCKET SERVER_PID CONNS RATE REQUESTS [CPU]\n",
			argv[0]);
		return 2;
	}
	pid = atoi(argv[2]);
	nconns = atol(argv[3]);
	rate = atol(argv[4]);
	requests = atol(argv[5]);
	if (pid <= 0 || nconns < 1 || nconns > MAX_CONNS || rate < 1 ||
	    requests < 1) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	bench_pin(argc == 7 ? atoi(argv[6]) : 1);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	sent_ns = calloc(requests, sizeof(*sent_ns));
	latency_ns = calloc(requests, sizeof(*latency_ns));
	if (!sent_ns || !latency_ns)
		bench_die("calloc");

	ep = epoll_create1(0);
	if (ep < 0)
		bench_die("epoll_create1");
	for (long i = 0; i < nconns; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = i };

		conns[i].fd = connect_unix(argv[1]);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &e))
			bench_die("epoll_ctl");
	}
	store_keys(conns[0].fd);

	interval = 1000000000ull / rate;
	bench_proc_usage_read(pid, &u0);
	start = bench_paced_client(ep, requests, send_at, send_get,
				   receive_event);
	wall = bench_now_ns() - start;
	bench_proc_usage_read(pid, &u1);

	qsort(latency_ns, requests, sizeof(*latency_ns), bench_cmp_u64);
	printf("conns=%ld rate=%ld requests=%ld req_per_s=%.0f server_vcs_per_req=%.4f server_ivcs_per_req=%.4f server_cpu_us_per_req=%.3f lat_p50_us=%.1f lat_p99_us=%.1f lat_p999_us=%.1f\n",
	       nconns, rate, requests, requests * 1e9 / wall,
	       (double)(u1.nvcsw - u0.nvcsw) / requests,
	       (double)(u1.nivcsw - u0.nivcsw) / requests,
	       (u1.cpu_ns - u0.cpu_ns) / 1e3 / requests,
	       bench_quantile(latency_ns, requests, 0.50) / 1e3,
	       bench_quantile(latency_ns, requests, 0.99) / 1e3,
	       bench_quantile(latency_ns, requests, 0.999) / 1e3);
	return 0;
}
