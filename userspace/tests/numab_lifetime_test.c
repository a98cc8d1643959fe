// SPDX-License-Identifier: GPL-2.0
/*
 * The lifetime of the per-process NUMA mode, and what one process's mode
 * costs the others:
 *
 *  - sysctl_off.key_held: the module reports whether it holds its one
 *    reference on the sched_numa_balancing key; it does while an mm is
 *    ENABLED and lets it go a while after the last one goes;
 *  - sysctl_off.toggle_ipis: a user toggling ENABLED/DEFAULT with
 *    kernel.numa_balancing = 0 does not flip the key (kernel text
 *    patching, IPIs to every CPU) at each toggle;
 *  - exec_fail.no_leak: an execve() that fails after the new mm inherited
 *    the mode gives it all back (the same with injected allocation
 *    failures is fault_inject_test's);
 *  - cpuset.mems_rewrite: a cgroup v1 cpuset.mems write that drops the
 *    last reference of an ENABLED mm itself; lockdep must stay quiet
 *    (debug kernel; skipped without cgroup v1 cpusets).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"

#define MODE_DIS	PR_SET_NUMA_BALANCING_DISABLED
#define MODE_EN		PR_SET_NUMA_BALANCING_ENABLED
#define MODE_DEF	PR_SET_NUMA_BALANCING_DEFAULT

#define NOBODY		65534

/* --- kernel.numa_balancing, saved and restored ----------------------------- */

FIXTURE(sysctl_off) {
	long saved;
};

FIXTURE_SETUP(sysctl_off)
{
	self->saved = -1;
	ASSERT_EQ(0, numab_read_long(NUMAB_SYSCTL_NUMA_BALANCING, &self->saved));
	ASSERT_EQ(0, numab_write_long(NUMAB_SYSCTL_NUMA_BALANCING, 0));
}

FIXTURE_TEARDOWN(sysctl_off)
{
	if (self->saved >= 0)
		numab_write_long(NUMAB_SYSCTL_NUMA_BALANCING, self->saved);
}

/* --- key_held ------------------------------------------------------------ */

TEST_F(sysctl_off, key_held)
{
	struct numab_counters c = { 0 };
	struct numab_held h;
	int64_t t0;

	ASSERT_MODULE();
	ASSERT_TRUE(numab_key_settle(&c, NUMAB_KEY_SETTLE_MS));
	ASSERT_EQ(0, c.enabled_mms);
	EXPECT_EQ(0, c.key_held) TH_LOG("key_held missing or wrong");

	ASSERT_EQ(0, numab_held_start(&h, MODE_EN));
	EXPECT_TRUE(numab_key_settle(&c, NUMAB_KEY_SETTLE_MS));
	EXPECT_EQ(1, c.key_held);
	EXPECT_EQ(1, c.key_count);

	t0 = numab_now_ns();
	numab_held_stop(&h);
	EXPECT_TRUE(numab_key_settle(&c, NUMAB_KEY_SETTLE_MS));
	EXPECT_EQ(0, c.key_held);
	EXPECT_EQ(0, c.key_count);
	fprintf(stderr, "# key released %lld ms after the ENABLED mm went\n",
		       (long long)numab_ms_since(t0));
}

/* --- toggle_ipis --------------------------------------------------------- */

#define TOGGLES		2000
/* Counted after the last toggle: the key's release (~1 s) falls within. */
#define WINDOW_MS	1500

/*
 * Function-call IPIs the toggles may cost beyond those of the same number
 * of toggles that never touch the key (DISABLED/DEFAULT), per CPU other
 * than the caller's. A flip of the key patches kernel text: text_poke_bp()
 * synchronises every other CPU three times. Measured in the 4-vCPU guest
 * when each toggle flipped the key: 18,005 CAL IPIs for 2000 toggles, 9 a
 * flip, 3 per other CPU. With the release deferred by about a second, a
 * loop much shorter than that flips the key twice (on at the first
 * ENABLED, off after the last): 6 per other CPU, 26 against 6 and 7
 * without the key in one run. 20 leaves room for the difference in
 * unrelated function calls between runs (TLB shootdowns count as CAL too,
 * and so does about one in each file read here), and is 150 times less
 * than a flip per toggle.
 */
#define CAL_PER_OTHER_CPU	20

/* The CAL row of /proc/interrupts summed over the CPUs, or -1. */
static long cal_ipis(void)
{
	char line[4096], *p, *end;
	long sum = -1;
	FILE *f;

	f = fopen("/proc/interrupts", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "CAL:", 4))
			continue;
		for (p += 4, sum = 0;; p = end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			sum += v;
		}
		break;
	}
	fclose(f);
	return sum;
}

/* In a child: become nobody, then toggle. Exit status 0 when all went. */
static int toggle_as_nobody(int mode)
{
	int i;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ||
	    getuid() != NOBODY)
		return 2;
	for (i = 0; i < TOGGLES; i++)
		if (numab_set_mode(i % 2 ? MODE_DEF : mode))
			return 1;
	return 0;
}

struct toggle_run {
	long cal;		/* CAL IPIs from the fork to the window's end */
	int64_t toggle_ms;	/* from the fork to the child's exit */
};

/*
 * A child of uid nobody toggles @mode/DEFAULT; CAL IPIs are counted until
 * WINDOW_MS after its exit, then the key must settle. The window is slept
 * through: opening and reading files costs function-call IPIs of its own
 * (about one a read here), so no polling in it.
 */
static void toggle_run(struct __test_metadata *_metadata, int mode,
		       struct toggle_run *r)
{
	struct numab_counters now = { 0 };
	long cal0 = cal_ipis();
	int64_t t0 = numab_now_ns();
	int status;
	pid_t pid;

	ASSERT_LE(0, cal0) TH_LOG("no CAL row in /proc/interrupts");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(toggle_as_nobody(mode));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	r->toggle_ms = numab_ms_since(t0);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("%s", WEXITSTATUS(status) == 2 ?
		       "cannot become uid 65534" : "a toggle failed");

	numab_sleep_ms(WINDOW_MS);
	r->cal = cal_ipis() - cal0;
	EXPECT_TRUE(numab_key_settle(&now, NUMAB_KEY_SETTLE_MS))
		TH_LOG("key still held after the last ENABLED mm: key_count %ld key_held %ld",
		       now.key_count, now.key_held);
}

TEST_F_TIMEOUT(sysctl_off, toggle_ipis, 600)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), control, excess;
	struct toggle_run before, toggles, after;
	struct numab_counters base = { 0 }, now = { 0 };

	ASSERT_MODULE();
	ASSERT_TRUE(numab_key_settle(&base, NUMAB_KEY_SETTLE_MS));
	ASSERT_EQ(0, base.enabled_mms)
		TH_LOG("an mm outside the test is ENABLED: the key is held anyway");
	ASSERT_LT(1, cpus) TH_LOG("one CPU: no IPI to count");

	/* The same runs toggling DISABLED, which never touches the key. */
	toggle_run(_metadata, MODE_DIS, &before);
	toggle_run(_metadata, MODE_EN, &toggles);
	toggle_run(_metadata, MODE_DIS, &after);
	ASSERT_TRUE(numab_key_settle(&now, 0));
	EXPECT_EQ(base.key_count, now.key_count);

	control = before.cal > after.cal ? before.cal : after.cal;
	excess = toggles.cal - control;
	fprintf(stderr, "# %d ENABLED/DEFAULT toggles by uid %d in %lld ms: %ld function-call IPIs on %ld CPUs up to %d ms after; DISABLED/DEFAULT: %ld and %ld\n",
		TOGGLES, NOBODY, (long long)toggles.toggle_ms, toggles.cal,
		cpus, WINDOW_MS, before.cal, after.cal);
	EXPECT_GE(CAL_PER_OTHER_CPU * (cpus - 1), excess)
		TH_LOG("an IPI storm: %ld more than without the key", excess);
}

/* --- failed_exec ----------------------------------------------------------- */

/* What a mode out of DEFAULT holds. */
struct held_state {
	struct numab_counters c;
	long refcnt;
};

static bool held_state_back(const struct held_state *base,
			    struct held_state *now)
{
	int ms;

	for (ms = 0; ms <= NUMAB_KEY_SETTLE_MS; ms += 20) {
		now->refcnt = numab_module_refcnt();
		if (numab_key_settle(&now->c, 0) &&
		    now->c.enabled_mms == base->c.enabled_mms &&
		    now->c.key_count == base->c.key_count &&
		    now->c.min_wait_instances == base->c.min_wait_instances &&
		    now->refcnt == base->refcnt)
			return true;
		usleep(20000);
	}
	return false;
}

FIXTURE(exec_fail) {
	char file[PATH_MAX + 32];	/* a file to exec, removed after */
};

FIXTURE_VARIANT(exec_fail) {
	int mode;
};

FIXTURE_VARIANT_ADD(exec_fail, disabled) {
	.mode = MODE_DIS,
};

FIXTURE_VARIANT_ADD(exec_fail, enabled) {
	.mode = MODE_EN,
};

FIXTURE_SETUP(exec_fail)
{
	char exe[PATH_MAX];
	ssize_t n;

	/* beside the test binary: the guest may have no writable /tmp */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	snprintf(self->file, sizeof(self->file), "%s.exec-XXXXXX", exe);
}

FIXTURE_TEARDOWN(exec_fail)
{
	if (!strstr(self->file, "XXXXXX"))
		unlink(self->file);
}

/* In a child: @mode, then execve() @argv[0]; the errno it failed with. */
static int exec_in_mode(int mode, char *const argv[])
{
	char *const envp[] = { NULL };

	if (numab_set_mode(mode))
		return 255;
	execve(argv[0], argv, envp);
	return errno;
}

/*
 * Each of these execve()s fails after the new mm was set up, and so after
 * it inherited the mode: the mm had a user, its release goes through
 * mmput(). Once back, nothing of the mode may be left, and nothing given
 * back twice.
 */
TEST_F(exec_fail, no_leak)
{
	static char big[200 * 1024];	/* > MAX_ARG_STRLEN (32 pages) */
	struct held_state base = { 0 }, now = { 0 };
	struct {
		const char *what;
		char *argv[3];
		int err;
	} cases[] = {
		{ "no such file", { "/nonexistent/numab-exec" }, ENOENT },
		{ "unknown format", { self->file }, ENOEXEC },
		{ "argument too long", { "/proc/self/exe", big }, E2BIG },
		{ "a directory", { "/" }, EACCES },
	};
	/* printable: no request_module() for a binfmt handler */
	static const char garbage[] = "not an executable\n";
	int fd, status, i;
	pid_t pid;

	ASSERT_MODULE();
	memset(big, 'x', sizeof(big) - 1);
	fd = mkstemp(self->file);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", self->file, strerror(errno));
	ASSERT_EQ((ssize_t)sizeof(garbage),
		  write(fd, garbage, sizeof(garbage)));
	ASSERT_EQ(0, fchmod(fd, 0755));
	close(fd);

	ASSERT_TRUE(numab_key_settle(&base.c, NUMAB_KEY_SETTLE_MS));
	base.refcnt = numab_module_refcnt();
	ASSERT_LE(0, base.refcnt);
	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(exec_in_mode(variant->mode, cases[i].argv));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(cases[i].err, WEXITSTATUS(status))
			TH_LOG("%s: execve failed with %s", cases[i].what,
			       strerror(WEXITSTATUS(status)));
		EXPECT_TRUE(held_state_back(&base, &now))
			TH_LOG("%s: enabled_mms %+ld key_count %+ld module refcnt %+ld",
			       cases[i].what,
			       now.c.enabled_mms - base.c.enabled_mms,
			       now.c.key_count - base.c.key_count,
			       now.refcnt - base.refcnt);
	}
}

/* --- cpuset_mems_rewrite ---------------------------------------------------- */

/*
 * cgroup v1 cpuset, memory_migrate = 0: a cpuset.mems write rebinds the
 * memory policies of each task of the cpuset. update_tasks_nodemask() does
 * it with cpu_hotplug_lock (read) and cpuset_mutex held:
 *
 *	mm = get_task_mm(task);
 *	mpol_rebind_mm(mm, ...);	mmap_write_lock, every VMA
 *	mmput(mm);			memory_migrate = 0: right here
 *
 * A process that exits while its mm is being rebound waits in exit_mm()
 * for mmap_lock; all its threads queue there. When the rebind ends they
 * are handed the lock, and the cpuset code goes on to the next task of
 * the list: another thread of the same process, woken but not yet run,
 * so its ->mm is still set. get_task_mm() takes a reference, the rebind
 * waits for the exiting threads, which drop theirs, and the mmput() after
 * that rebind is the last one: __mmput() runs inline, under
 * cpu_hotplug_lock and cpuset_mutex. Releasing the mode there must take
 * neither cpu_hotplug_lock again (static_branch_dec() does) nor a lock
 * that is held elsewhere around cpus_read_lock().
 *
 * Many VMAs make each rebind long, so that exits land in one. Many threads:
 * they are all handed the lock at once, more of them than there are CPUs,
 * so the cpuset code finds one that has not run yet (with 4 threads the
 * old series' lock cycle never showed in 10 s; with 16 it did).
 * lockdep reports what goes wrong on the console (qemu/run fails the run
 * on it); the test also checks that lockdep is still on afterwards.
 */
#define CPUSET_SECONDS	10
#define CPUSET_PROCS	3	/* exiting processes at a time */
#define CPUSET_THREADS	16	/* tasks per process: more than CPUs */
#define CPUSET_VMAS	2000	/* pages made into separate VMAs */

FIXTURE(cpuset) {
	char mnt[64];
	char dir[96];
	bool mounted, made;
	pid_t spawner;
};

FIXTURE_SETUP(cpuset)
{
	self->mounted = self->made = false;
	self->spawner = 0;
	self->mnt[0] = self->dir[0] = '\0';
}

FIXTURE_TEARDOWN(cpuset)
{
	int i;

	if (self->spawner > 0) {
		kill(self->spawner, SIGKILL);
		waitpid(self->spawner, NULL, 0);
	}
	/* the cpuset empties as its exited tasks are released */
	for (i = 0; self->made && i < 250; i++) {
		if (!rmdir(self->dir) || errno != EBUSY)
			break;
		usleep(20000);
	}
	if (self->mounted)
		umount2(self->mnt, 0);
	if (self->mnt[0])
		rmdir(self->mnt);
}

static int write_str(const char *dir, const char *name, const char *val)
{
	char path[160];
	int fd, ret = 0;
	ssize_t len = strlen(val);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

static int read_str(const char *dir, const char *name, char *buf, size_t len)
{
	char path[160];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* lockdep's debug_locks: 1 while it checks, 0 once it reported; -1 none. */
static int lockdep_on(void)
{
	long v;

	return proc_field_long("/proc/lockdep_stats", "debug_locks", &v) ? -1 : v;
}

static void *parked_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * An ENABLED process (inherited) with many VMAs and a few threads, which
 * exits by itself within @ms.
 */
static void short_lived(unsigned int ms)
{
	long pg = sysconf(_SC_PAGESIZE);
	pthread_t th;
	char *p;
	int i;

	p = mmap(NULL, 2 * CPUSET_VMAS * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	/* every other page read-only: no two neighbours merge */
	for (i = 0; i < CPUSET_VMAS; i++)
		if (mprotect(p + 2 * i * pg, pg, PROT_READ))
			_exit(1);
	for (i = 1; i < CPUSET_THREADS; i++)
		if (pthread_create(&th, NULL, parked_thread, NULL))
			_exit(1);
	if (numab_get_mode() != MODE_EN)
		_exit(1);
	numab_sleep_ms(ms);
	_exit(0);
}

/*
 * In the cpuset: ENABLED, keep CPUSET_PROCS short-lived processes going
 * until @end_ns. Exit status 0, or 1 if one failed.
 */
static int spawner(const char *dir, int64_t end_ns)
{
	unsigned int seed = getpid();
	int running = 0, bad = 0, status;
	char pid[32];
	pid_t c;

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write_str(dir, "tasks", pid) || numab_set_mode(MODE_EN))
		return 2;
	while (numab_now_ns() < end_ns || running) {
		while (running < CPUSET_PROCS && numab_now_ns() < end_ns) {
			c = fork();
			if (c < 0)
				return 2;
			if (!c)
				short_lived(rand_r(&seed) % 50);
			running++;
		}
		if (wait(&status) < 0)
			return 2;
		running--;
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	return bad;
}

TEST_F_TIMEOUT(cpuset, mems_rewrite, 300)
{
	struct held_state base = { 0 }, now = { 0 };
	char mems[64], cpus[64], *mems_alt[2];
	long writes = 0, spawned_ok;
	int status, lockdep;
	int64_t end_ns;

	ASSERT_MODULE();
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/numab-cpuset-XXXXXX");
	if (!mkdtemp(self->mnt)) {
		self->mnt[0] = '\0';
		SKIP(return, "cannot make a mount point in /tmp: %s",
		     strerror(errno));
	}
	if (mount("cgroup", self->mnt, "cgroup", 0, "cpuset"))
		SKIP(return, "no cgroup v1 cpuset (mount: %s)",
		     strerror(errno));
	self->mounted = true;
	ASSERT_EQ(0, read_str(self->mnt, "cpuset.mems", mems, sizeof(mems)));
	ASSERT_EQ(0, read_str(self->mnt, "cpuset.cpus", cpus, sizeof(cpus)));
	if (!strchr(mems, '-') && !strchr(mems, ','))
		SKIP(return, "one memory node (%s): no mems to rewrite", mems);

	snprintf(self->dir, sizeof(self->dir), "%s/numab", self->mnt);
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	self->made = true;
	ASSERT_EQ(0, write_str(self->dir, "cpuset.cpus", cpus));
	ASSERT_EQ(0, write_str(self->dir, "cpuset.mems", mems));
	ASSERT_EQ(0, write_str(self->dir, "cpuset.memory_migrate", "0"));
	mems_alt[0] = "0";
	mems_alt[1] = mems;

	lockdep = lockdep_on();
	ASSERT_TRUE(numab_key_settle(&base.c, NUMAB_KEY_SETTLE_MS));
	base.refcnt = numab_module_refcnt();

	end_ns = numab_now_ns() + CPUSET_SECONDS * 1000000000LL;
	fflush(stdout);
	fflush(stderr);
	self->spawner = fork();
	ASSERT_LE(0, self->spawner);
	if (!self->spawner)
		_exit(spawner(self->dir, end_ns));

	/* rewrite cpuset.mems until the spawner and its processes are gone */
	while (waitpid(self->spawner, &status, WNOHANG) == 0) {
		ASSERT_EQ(0, write_str(self->dir, "cpuset.mems",
				       mems_alt[writes % 2]));
		writes++;
	}
	self->spawner = 0;
	ASSERT_TRUE(WIFEXITED(status));
	spawned_ok = WEXITSTATUS(status);
	EXPECT_EQ(0, spawned_ok) TH_LOG("%s", spawned_ok == 2 ?
		"the spawner could not join the cpuset or fork" :
		"a process in the cpuset failed");
	fprintf(stderr, "# %ld cpuset.mems writes in %d s while ENABLED processes with %d VMAs and %d tasks exited\n",
		       writes, CPUSET_SECONDS, 2 * CPUSET_VMAS, CPUSET_THREADS);

	if (lockdep >= 0)
		EXPECT_EQ(lockdep, lockdep_on())
			TH_LOG("lockdep reported a problem (see the console)");
	EXPECT_TRUE(held_state_back(&base, &now))
		TH_LOG("enabled_mms %+ld key_count %+ld module refcnt %+ld",
		       now.c.enabled_mms - base.c.enabled_mms,
		       now.c.key_count - base.c.key_count,
		       now.refcnt - base.refcnt);
}

TEST_HARNESS_MAIN
