// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded fuzzer of prctl(PR_NUMA_BALANCING, ...) and
 * epoll_ctl(..., EPOLL_CTL_MIN_WAIT or EPOLL_CTL_MIN_EVENTS, ...): random
 * arguments (flag bits included), pointers into unmapped, read-only and
 * kernel memory or straddling the end of a mapping, closed and non-epoll
 * fds. The result of every call is checked against the one SPEC prescribes
 * for its arguments, and the state (prctl GET, /proc status, fdinfo
 * min_wait_us, min_wait_flags and min_events, the debugfs counters)
 * against what the accepted calls set, every CHECK_EVERY calls and at the
 * end.
 *
 * Reproducible: the seed is printed; NUMAB_FUZZ_SEED sets it.
 * Bounded: NUMAB_FUZZ_CALLS calls (default 200000) or NUMAB_FUZZ_SECONDS
 * (default 60), whichever comes first.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"

#define N_EPOLL		4
#define CHECK_EVERY	4096
#define MAX_REPORTS	10
#define PAGE		4096UL

/* xorshift64*: the same sequence on every libc. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

/* Where a pointer argument points. */
enum ptr_kind {
	PTR_RW,		/* writable, aligned */
	PTR_RW_ODD,	/* writable, misaligned */
	PTR_RO,		/* read-only page */
	PTR_UNMAPPED,	/* a page that was unmapped */
	PTR_STRADDLE,	/* runs from a writable page into a PROT_NONE one */
	PTR_NULL,
	PTR_KERNEL,	/* kernel half of the address space */
	PTR_NONCANON,	/* just above the user half */
	PTR_KINDS
};

static const char *const ptr_names[PTR_KINDS] = {
	"rw", "rw-misaligned", "read-only", "unmapped", "straddling",
	"NULL", "kernel", "non-canonical",
};

/* Which fd the epfd argument is. */
enum fd_kind {
	FD_EPOLL, FD_EVENTFD, FD_PIPE, FD_CLOSED, FD_NEGATIVE, FD_HUGE, FD_KINDS
};

static const char *const fd_names[FD_KINDS] = {
	"epoll", "eventfd", "pipe", "closed", "negative", "INT_MAX",
};

/* Values (usecs | flags, or K) worth trying, plus fully random ones. */
static const uint64_t usecs_pool[] = {
	0, 1, 2, 999, 1000000, INT_MAX, (uint64_t)INT_MAX + 1, UINT32_MAX,
	EPOLL_MIN_WAIT_AFTER_FIRST, EPOLL_MIN_WAIT_AFTER_FIRST | 5,
	EPOLL_MIN_WAIT_AFTER_FIRST | INT_MAX,
	EPOLL_MIN_WAIT_AFTER_FIRST | ((uint64_t)INT_MAX + 1),
	EPOLL_MIN_WAIT_ADAPTIVE | 200, EPOLL_MIN_WAIT_ADAPTIVE,
	EPOLL_MIN_WAIT_ADAPTIVE | EPOLL_MIN_WAIT_AFTER_FIRST | 200,
	1ULL << 34, EPOLL_MIN_WAIT_AFTER_FIRST | 1ULL << 34, 1ULL << 62,
	1ULL << 63, UINT64_MAX,
};

#define N_USECS (sizeof(usecs_pool) / sizeof(usecs_pool[0]))

struct fuzz {
	char *rw;		/* PAGE writable, then PAGE PROT_NONE */
	char *ro;		/* PAGE read-only, epoll_events at the start */
	char *unmapped;
	int epfd[N_EPOLL];
	/* what the accepted calls set */
	uint32_t min_wait[N_EPOLL];
	uint32_t flags[N_EPOLL];	/* bits 32..63 of the value */
	uint32_t min_events[N_EPOLL];
	int mode;			/* likewise */
	int efd, pipefd[2], closed_fd;
	bool module;
	struct numab_counters base;
	bool have_counters;
	unsigned long calls, prctl_calls, epoll_calls, accepted, mismatches;
	unsigned long by_errno[4];	/* 0, EINVAL, EFAULT, EBADF */
};

static void count_result(struct fuzz *f, int err)
{
	switch (err) {
	case 0:
		f->by_errno[0]++;
		break;
	case EINVAL:
		f->by_errno[1]++;
		break;
	case EFAULT:
		f->by_errno[2]++;
		break;
	case EBADF:
		f->by_errno[3]++;
		break;
	}
}

static int fuzz_setup(struct fuzz *f, bool module)
{
	int i;

	memset(f, 0, sizeof(*f));
	f->module = module;
	f->mode = PR_SET_NUMA_BALANCING_DEFAULT;
	f->rw = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->unmapped = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->rw == MAP_FAILED || f->ro == MAP_FAILED ||
	    f->unmapped == MAP_FAILED)
		return -errno;
	if (mprotect(f->rw + PAGE, PAGE, PROT_NONE) ||
	    munmap(f->unmapped, PAGE))
		return -errno;
	/* One struct epoll_event per pool value on the read-only page. */
	for (i = 0; i < (int)N_USECS; i++) {
		struct epoll_event ev = { .data.u64 = usecs_pool[i] };

		memcpy(f->ro + i * sizeof(ev), &ev, sizeof(ev));
	}
	if (mprotect(f->ro, PAGE, PROT_READ))
		return -errno;

	for (i = 0; i < N_EPOLL; i++) {
		f->epfd[i] = epoll_create1(EPOLL_CLOEXEC);
		if (f->epfd[i] < 0)
			return -errno;
	}
	f->efd = eventfd(0, EFD_CLOEXEC);
	if (f->efd < 0 || pipe2(f->pipefd, O_CLOEXEC))
		return -errno;
	f->closed_fd = dup(f->efd);
	if (f->closed_fd < 0 || close(f->closed_fd))
		return -errno;
	/* the key may still be on its lazy way out after a previous test */
	f->have_counters = module &&
			   numab_key_settle(&f->base, NUMAB_KEY_SETTLE_MS);
	return 0;
}

static void fuzz_teardown(struct fuzz *f)
{
	int i;

	for (i = 0; i < N_EPOLL; i++)
		close(f->epfd[i]);
	close(f->efd);
	close(f->pipefd[0]);
	close(f->pipefd[1]);
	munmap(f->rw, 2 * PAGE);
	munmap(f->ro, PAGE);
	if (f->module)
		numab_set_mode(PR_SET_NUMA_BALANCING_DEFAULT);
}

/* A pointer of @kind for an object of @size; sets *@valid for the kernel. */
static uintptr_t pick_ptr(struct fuzz *f, enum ptr_kind kind, size_t size,
			  bool for_write, bool *valid)
{
	*valid = false;
	switch (kind) {
	case PTR_RW:
		*valid = true;
		return (uintptr_t)f->rw + 8 * rnd_below(64);
	case PTR_RW_ODD:
		*valid = true;
		return (uintptr_t)f->rw + 1 + 2 * rnd_below(64);
	case PTR_RO:
		*valid = !for_write;
		return (uintptr_t)f->ro;
	case PTR_UNMAPPED:
		return (uintptr_t)f->unmapped + rnd_below(PAGE - size);
	case PTR_STRADDLE:
		return (uintptr_t)f->rw + PAGE - 1 - rnd_below(size - 1);
	case PTR_NULL:
		return 0;
	case PTR_KERNEL:
		return 0xffffffff81000000UL + rnd_below(1 << 20);
	case PTR_NONCANON:
		return 0x0000800000000000UL + rnd_below(PAGE);
	default:
		return 0;
	}
}

/* An argument that is mostly 0, else anything. */
static unsigned long pick_extra(void)
{
	if (rnd_below(8))
		return 0;
	return rnd_below(2) ? 1 + rnd_below(16) : rnd() | 1;
}

static void report(struct __test_metadata *_metadata, struct fuzz *f,
		   const char *what, long want, int want_err, long got,
		   int got_err)
{
	f->mismatches++;
	if (f->mismatches > MAX_REPORTS)
		return;
	TH_LOG("call %lu: %s: want %ld/%s, got %ld/%s", f->calls, what,
	       want, want_err ? strerror(want_err) : "ok", got,
	       got_err ? strerror(got_err) : "ok");
}

static void fuzz_prctl(struct __test_metadata *_metadata, struct fuzz *f)
{
	unsigned long arg2, arg3 = 0, arg4 = pick_extra(), arg5 = pick_extra();
	enum ptr_kind kind = PTR_KINDS;
	int want_err, got_err, ret;
	bool valid = false;
	int *out = NULL;
	char what[160];

	switch (rnd_below(12)) {
	case 0:
		arg2 = 4 + rnd_below(100);
		break;
	case 1:
		arg2 = rnd_below(2) ? (1UL << 32) + rnd_below(4) : rnd();
		break;
	default:
		arg2 = rnd_below(4);
		break;
	}
	if (arg2 == PR_GET_NUMA_BALANCING || rnd_below(4) == 0) {
		kind = rnd_below(PTR_KINDS + 1);
		if (kind < PTR_KINDS)
			arg3 = pick_ptr(f, kind, sizeof(int), true, &valid);
		else
			arg3 = pick_extra();
	}
	if (valid) {
		out = (int *)arg3;
		*out = 0x5a5a5a5a;
	}

	if (!f->module || arg4 || arg5)
		want_err = EINVAL;
	else if (arg2 <= PR_SET_NUMA_BALANCING_DEFAULT)
		want_err = arg3 ? EINVAL : 0;
	else if (arg2 == PR_GET_NUMA_BALANCING)
		want_err = valid ? 0 : EFAULT;
	else
		want_err = EINVAL;

	errno = 0;
	ret = prctl(PR_NUMA_BALANCING, arg2, arg3, arg4, arg5);
	got_err = ret ? errno : 0;
	f->prctl_calls++;
	count_result(f, got_err);

	snprintf(what, sizeof(what),
		 "prctl(%#x, %#lx, %#lx [%s], %#lx, %#lx)",
		 PR_NUMA_BALANCING, arg2, arg3,
		 kind < PTR_KINDS ? ptr_names[kind] : "value", arg4, arg5);
	if (ret != (want_err ? -1 : 0) || got_err != want_err) {
		report(_metadata, f, what, want_err ? -1 : 0, want_err, ret,
		       got_err);
		return;
	}
	if (want_err) {
		if (out && *out != 0x5a5a5a5a)
			report(_metadata, f, "failed GET wrote its int",
			       0x5a5a5a5a, 0, *out, 0);
		return;
	}
	f->accepted++;
	if (arg2 <= PR_SET_NUMA_BALANCING_DEFAULT)
		f->mode = arg2;
	else if (*out != f->mode)
		report(_metadata, f, "GET stored", f->mode, 0, *out, 0);
}

static void fuzz_epoll(struct __test_metadata *_metadata, struct fuzz *f)
{
	enum fd_kind fk = rnd_below(3) ? FD_EPOLL : rnd_below(FD_KINDS);
	enum ptr_kind pk = rnd_below(3) ? PTR_RW : rnd_below(PTR_KINDS);
	int idx = rnd_below(N_EPOLL), fd = (int)rnd(), epfd = -1;
	int op = rnd_below(2) ? EPOLL_CTL_MIN_WAIT : EPOLL_CTL_MIN_EVENTS;
	struct epoll_event ev;
	bool bad_value;
	uint64_t usecs;
	int want_err, got_err, ret;
	long want = -1;
	bool valid;
	uintptr_t p;
	char what[160];

	switch (fk) {
	case FD_EPOLL:
		epfd = f->epfd[idx];
		break;
	case FD_EVENTFD:
		epfd = f->efd;
		break;
	case FD_PIPE:
		epfd = f->pipefd[rnd_below(2)];
		break;
	case FD_CLOSED:
		epfd = f->closed_fd;
		break;
	case FD_NEGATIVE:
		epfd = -1 - (int)rnd_below(INT_MAX);
		break;
	default:
		epfd = INT_MAX;
		break;
	}

	p = pick_ptr(f, pk, sizeof(ev), false, &valid);
	if (pk == PTR_RO) {
		/* the prepared read-only events: one per pool value */
		p += rnd_below(N_USECS) * sizeof(ev);
		memcpy(&usecs, (char *)p + offsetof(struct epoll_event, data),
		       sizeof(usecs));
	} else {
		usecs = rnd_below(2) ? usecs_pool[rnd_below(N_USECS)] :
		       rnd_below(2) ? rnd_below((uint64_t)INT_MAX + 1) : rnd();
		if (op == EPOLL_CTL_MIN_WAIT && !rnd_below(4))
			usecs |= EPOLL_MIN_WAIT_AFTER_FIRST;
		if (valid) {
			ev.events = (uint32_t)rnd();
			ev.data.u64 = usecs;
			memcpy((void *)p, &ev, sizeof(ev));
		}
	}

	/* op 4: usecs 0..INT_MAX, plus AFTER_FIRST, ADAPTIVE; op 5: K */
	if (op == EPOLL_CTL_MIN_WAIT)
		bad_value = (uint32_t)usecs > INT_MAX ||
			    usecs >> 32 & ~((EPOLL_MIN_WAIT_AFTER_FIRST |
					      EPOLL_MIN_WAIT_ADAPTIVE) >> 32);
	else
		bad_value = usecs > INT_MAX;
	if (!valid)
		want_err = EFAULT;
	else if (!f->module)
		want_err = EINVAL;
	else if (fk == FD_CLOSED || fk == FD_NEGATIVE || fk == FD_HUGE)
		want_err = EBADF;
	else if (fk != FD_EPOLL || bad_value)
		want_err = EINVAL;
	else
		want_err = 0;
	if (!want_err)
		want = op == EPOLL_CTL_MIN_WAIT ? f->min_wait[idx] :
		       f->min_events[idx];

	errno = 0;
	ret = epoll_ctl(epfd, op, fd, (void *)p);
	got_err = ret < 0 ? errno : 0;
	f->epoll_calls++;
	count_result(f, got_err);

	snprintf(what, sizeof(what),
		 "epoll_ctl(%d [%s], %d, %d, %#lx [%s] value %#llx)", epfd,
		 fd_names[fk], op, fd, (unsigned long)p, ptr_names[pk],
		 valid ? (unsigned long long)usecs : 0ULL);
	if (ret != want || got_err != want_err) {
		report(_metadata, f, what, want, want_err, ret, got_err);
		return;
	}
	if (want_err)
		return;
	f->accepted++;
	if (op == EPOLL_CTL_MIN_WAIT) {
		f->min_wait[idx] = (uint32_t)usecs;
		f->flags[idx] = usecs >> 32;
	} else {
		f->min_events[idx] = usecs;
	}
}

/* Close an instance now and then: its min-wait must go with it. */
static int fuzz_recycle(struct fuzz *f)
{
	int idx = rnd_below(N_EPOLL);

	close(f->epfd[idx]);
	f->epfd[idx] = epoll_create1(EPOLL_CLOEXEC);
	f->min_wait[idx] = 0;
	f->flags[idx] = 0;
	f->min_events[idx] = 0;
	return f->epfd[idx] < 0 ? -errno : 0;
}

/* A child inherits the mode; its exit must give back what it held. */
static int fuzz_fork(struct fuzz *f)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(f->module && numab_get_mode() != f->mode ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EPROTO;
}

static void check_state(struct __test_metadata *_metadata, struct fuzz *f)
{
	struct numab_counters want, now = { 0 };
	int i, set = 0;
	long fdinfo;

	if (f->module) {
		EXPECT_EQ(f->mode, numab_get_mode())
			TH_LOG("after call %lu", f->calls);
		EXPECT_EQ(f->mode, numab_status_mode(0))
			TH_LOG("NumaB_mode after call %lu", f->calls);
	} else {
		EXPECT_EQ(-EINVAL, numab_get_mode());
	}
	for (i = 0; i < N_EPOLL; i++) {
		static const char *const keys[] = {
			NUMAB_FDINFO_KEY, NUMAB_FDINFO_FLAGS_KEY,
			NUMAB_FDINFO_EVENTS_KEY,
		};
		const uint32_t vals[] = {
			f->min_wait[i], f->flags[i], f->min_events[i],
		};
		int k;

		/* each line is there exactly when its value is not 0 */
		for (k = 0; k < 3; k++) {
			fdinfo = numab_fdinfo_long(f->epfd[i], keys[k]);
			EXPECT_EQ(vals[k] ? (long)vals[k] : -ENOENT, fdinfo)
				TH_LOG("fdinfo %s of instance %d after call %lu",
				       keys[k], i, f->calls);
		}
		set += vals[0] || vals[1] || vals[2];
	}
	if (!f->have_counters)
		return;
	want = f->base;
	want.min_wait_instances += set;
	if (f->mode == PR_SET_NUMA_BALANCING_ENABLED) {
		want.enabled_mms++;
		want.key_count++;
	}
	/* a forked child's mm may still be on its way out */
	EXPECT_TRUE(numab_counters_settle(&want, &now, NUMAB_KEY_SETTLE_MS))
		TH_LOG("counters after call %lu: enabled_mms %ld/%ld key_count %ld/%ld min_wait_instances %ld/%ld",
		       f->calls, now.enabled_mms, want.enabled_mms,
		       now.key_count, want.key_count,
		       now.min_wait_instances, want.min_wait_instances);
}

static void fuzz_run(struct __test_metadata *_metadata, bool module,
		     unsigned long calls, unsigned long seconds)
{
	uint64_t seed = env_ulong("NUMAB_FUZZ_SEED", 0);
	int64_t t0 = numab_now_ns();
	struct fuzz f;

	if (!seed)
		seed = (uint64_t)t0 ^ ((uint64_t)getpid() << 32);
	rng_state = seed ? seed : 1;
	ksft_print_msg("seed %#llx (NUMAB_FUZZ_SEED=%#llx reproduces it), up to %lu calls or %lu s\n",
		       (unsigned long long)seed, (unsigned long long)seed,
		       calls, seconds);

	ASSERT_EQ(0, fuzz_setup(&f, module));
	if (module)
		ASSERT_TRUE(f.have_counters) TH_LOG("cannot read %s",
						    NUMAB_DEBUGFS_COUNTERS);
	while (f.calls < calls && numab_ms_since(t0) < (int64_t)seconds * 1000) {
		f.calls++;
		if (rnd_below(2))
			fuzz_prctl(_metadata, &f);
		else
			fuzz_epoll(_metadata, &f);
		if (rnd_below(1000) == 0)
			ASSERT_EQ(0, fuzz_recycle(&f));
		if (rnd_below(2000) == 0)
			EXPECT_EQ(0, fuzz_fork(&f))
				TH_LOG("child did not inherit mode %d", f.mode);
		if (f.calls % CHECK_EVERY == 0)
			check_state(_metadata, &f);
	}
	check_state(_metadata, &f);
	ksft_print_msg("%lu calls (%lu prctl, %lu epoll_ctl) in %lld ms: %lu accepted; ok %lu, EINVAL %lu, EFAULT %lu, EBADF %lu; %lu mismatches\n",
		       f.calls, f.prctl_calls, f.epoll_calls,
		       (long long)numab_ms_since(t0), f.accepted,
		       f.by_errno[0], f.by_errno[1], f.by_errno[2],
		       f.by_errno[3], f.mismatches);
	EXPECT_EQ(0, f.mismatches);
	fuzz_teardown(&f);
}

/* The harness kills a test after FUZZ_TIMEOUT s: NUMAB_FUZZ_SECONDS stays below. */
#define FUZZ_TIMEOUT	900
#define FUZZ_MAX_SECONDS (FUZZ_TIMEOUT - 60)

static unsigned long fuzz_seconds(void)
{
	unsigned long s = env_ulong("NUMAB_FUZZ_SECONDS", 60);

	return s < FUZZ_MAX_SECONDS ? s : FUZZ_MAX_SECONDS;
}

FIXTURE(module_state) {
	bool unloaded;
};

FIXTURE_SETUP(module_state)
{
	ASSERT_TRUE(numab_module_loaded()) TH_LOG(NUMAB_MSG_NO_MODULE);
	self->unloaded = false;
}

FIXTURE_TEARDOWN(module_state)
{
	if (self->unloaded)
		numab_modprobe();
}

TEST_F_TIMEOUT(module_state, with_module, FUZZ_TIMEOUT)
{
	fuzz_run(_metadata, true, env_ulong("NUMAB_FUZZ_CALLS", 200000),
		 fuzz_seconds());
}

/* Without the module every call is EINVAL, or EFAULT for a bad event. */
TEST_F_TIMEOUT(module_state, without_module, FUZZ_TIMEOUT)
{
	ASSERT_TRUE(numab_unload_settles(2000))
		TH_LOG("cannot unload the module");
	self->unloaded = true;
	fuzz_run(_metadata, false, env_ulong("NUMAB_FUZZ_CALLS", 200000) / 10,
		 fuzz_seconds() / 10 + 1);
}

TEST_HARNESS_MAIN
