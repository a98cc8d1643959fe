// SPDX-License-Identifier: GPL-2.0
/*
 * Effective NUMA balancing by kernel.numa_balancing x per-process mode
 * (SPEC section 1, second table), measured.
 *
 * For each cell a child pinned to node 0's CPUs first-touches two 32 MiB
 * buffers (one with small pages, one madvise(MADV_HUGEPAGE)), moves to node
 * 1's CPUs and keeps touching them for a few seconds with a short scan
 * period. Its NUMA faults, PTE updates and migrations show whether it was
 * balanced:
 *
 *   off      no numa_pte_updates / numa_hint_faults growth, no migration
 *   tiering  memory tiering alone: on this guest both nodes are top tier
 *            and change_pte_range() (mm/mprotect.c) skips top-tier pages
 *            unless NUMA_BALANCING_NORMAL is set, so nothing either
 *   normal   PTE updates, hint faults and pages moved to node 1
 *
 * The caller itself is put in DISABLED mode so that, the guest being
 * otherwise idle, the global /proc/vmstat deltas are the child's.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "numab_test_util.h"
#include "numa_nodes.h"

#define SYSCTL_NUMA_BALANCING	"/proc/sys/kernel/numa_balancing"
#define SCAN_DIR		"/sys/kernel/debug/sched/numa_balancing/"

#define BUF_SIZE	(32UL << 20)
#define HPAGE_SIZE	(2UL << 20)
#define PAGE_SZ		4096UL
#define BUF_PAGES	(BUF_SIZE / PAGE_SZ)
#define TOUCH_MS	3000

/* --- global tunables: saved once, restored on every way out ------------ */

static const char *const tunable_path[] = {
	SYSCTL_NUMA_BALANCING,
	SCAN_DIR "scan_delay_ms",
	SCAN_DIR "scan_period_min_ms",
	SCAN_DIR "scan_period_max_ms",
	SCAN_DIR "scan_size_mb",
};

/* Values for the measurement (index 0, the sysctl, is per cell). */
static const long tunable_test[] = { -1, 0, 100, 400, 256 };

#define NR_TUNABLES ARRAY_SIZE(tunable_path)

static long tunable_saved[NR_TUNABLES];
static bool tunable_ok[NR_TUNABLES];

static void restore_tunables(void)
{
	size_t i;
	long v = 0;

	/*
	 * Only write what changed: a run that changed nothing (no module,
	 * say) writes nothing. The sysctl goes last.
	 */
	for (i = NR_TUNABLES; i-- > 0;) {
		if (!tunable_ok[i] || numab_read_long(tunable_path[i], &v) ||
		    v == tunable_saved[i])
			continue;
		numab_write_long(tunable_path[i], tunable_saved[i]);
	}
}

static void __attribute__((constructor)) save_tunables(void)
{
	size_t i;

	for (i = 0; i < NR_TUNABLES; i++)
		tunable_ok[i] = !numab_read_long(tunable_path[i],
						 &tunable_saved[i]);
	atexit(restore_tunables);
}

/* --- counters ----------------------------------------------------------- */

enum { V_PTE, V_HUGE_PTE, V_HINT, V_HINT_LOCAL, V_MIGRATED, NR_VM };

static const char *const vm_name[NR_VM] = {
	"numa_pte_updates", "numa_huge_pte_updates", "numa_hint_faults",
	"numa_hint_faults_local", "numa_pages_migrated",
};

static int read_vmstat(long *v)
{
	int i, ret;

	for (i = 0; i < NR_VM; i++) {
		ret = proc_field_long("/proc/vmstat", vm_name[i], &v[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* AnonHugePages (kB) of the mapping starting at @addr; -1 if not found. */
static long anon_huge_kb(void *addr)
{
	unsigned long start, end;
	bool in_vma = false;
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A VMA header: "start-end perms offset dev inode path" */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (in_vma)
				break;
			in_vma = start == (unsigned long)addr;
			continue;
		}
		if (in_vma && sscanf(line, "AnonHugePages: %ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* --- the measured child --------------------------------------------------- */

struct placement {
	long node[2];	/* pages on node 0 / node 1 */
	long other;	/* elsewhere, or not present */
};

struct cell_result {
	int failed_step;	/* 0: all went well */
	int err;
	struct placement small_before, thp_before, small_after, thp_after;
	int thp_madvise_err;
	long thp_kb, scan_seq, proc_migrated, proc_faults, passes;
};

static int where_are(char *buf, struct placement *pl)
{
	static void *pages[BUF_PAGES];
	static int status[BUF_PAGES];
	unsigned long i;

	for (i = 0; i < BUF_PAGES; i++)
		pages[i] = buf + i * PAGE_SZ;
	/* move_pages(2) with nodes == NULL only reports each page's node */
	if (syscall(SYS_move_pages, 0, BUF_PAGES, pages, NULL, status, 0))
		return -errno;
	memset(pl, 0, sizeof(*pl));
	for (i = 0; i < BUF_PAGES; i++) {
		if (status[i] == 0 || status[i] == 1)
			pl->node[status[i]]++;
		else
			pl->other++;
	}
	return 0;
}

/*
 * Write only: a read first would map the huge zero page, and the write
 * after it would split it into small pages.
 */
static void touch(char *buf)
{
	volatile char *p = buf;
	unsigned long i;

	for (i = 0; i < BUF_SIZE; i += PAGE_SZ)
		p[i] = 1;
}

/*
 * The measurement, in the child. Returns 0, or the number of the step that
 * failed (errno tells why).
 */
static int measure(int mode, const cpu_set_t *n0, const cpu_set_t *n1,
		   struct cell_result *r)
{
	char *small, *raw, *thp;
	int64_t t0;

	if (numab_set_mode(mode))
		return 1;
	if (sched_setaffinity(0, sizeof(*n0), n0))
		return 2;
	sched_yield();

	small = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (small == MAP_FAILED)
		return 3;
	madvise(small, BUF_SIZE, MADV_NOHUGEPAGE);
	raw = mmap(NULL, BUF_SIZE + HPAGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return 4;
	thp = (char *)(((unsigned long)raw + HPAGE_SIZE - 1) &
		       ~(HPAGE_SIZE - 1));
	/* Without THP (checked by its own test) this is one more buffer. */
	r->thp_madvise_err = madvise(thp, BUF_SIZE, MADV_HUGEPAGE) ? errno : 0;
	touch(small);
	touch(thp);
	if (where_are(small, &r->small_before) ||
	    where_are(thp, &r->thp_before))
		return 5;

	if (sched_setaffinity(0, sizeof(*n1), n1))
		return 6;
	sched_yield();
	t0 = numab_now_ns();
	while (numab_ms_since(t0) < TOUCH_MS) {
		touch(small);
		touch(thp);
		r->passes++;
	}

	if (where_are(small, &r->small_after) ||
	    where_are(thp, &r->thp_after))
		return 7;
	r->thp_kb = anon_huge_kb(thp);
	r->scan_seq = sched_field("mm->numa_scan_seq");
	r->proc_migrated = sched_field("numa_pages_migrated");
	r->proc_faults = sched_field("total_numa_faults");
	return 0;
}

static void measured_child(int mode, const cpu_set_t *n0,
			   const cpu_set_t *n1, int out)
{
	struct cell_result r = { 0 };

	r.failed_step = measure(mode, n0, n1, &r);
	r.err = errno;
	_exit(write(out, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
}

/* The THP half of each cell needs madvise(MADV_HUGEPAGE) and THP. */
TEST(thp_available)
{
	char *raw, *thp, mode[128] = "";
	long kb;
	FILE *f;

	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = '\0';
		fclose(f);
	}
	fprintf(stderr, "# transparent_hugepage/enabled: %s%s", mode,
		strchr(mode, '\n') ? "" : "\n");
	raw = mmap(NULL, BUF_SIZE + HPAGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	thp = (char *)(((unsigned long)raw + HPAGE_SIZE - 1) &
		       ~(HPAGE_SIZE - 1));
	ASSERT_EQ(0, madvise(thp, BUF_SIZE, MADV_HUGEPAGE))
		TH_LOG("madvise(MADV_HUGEPAGE): %s (guest kernel without CONFIG_ADVISE_SYSCALLS or CONFIG_TRANSPARENT_HUGEPAGE?)",
		       strerror(errno));
	touch(thp);
	kb = anon_huge_kb(thp);
	EXPECT_LE((long)(HPAGE_SIZE >> 10), kb)
		TH_LOG("no huge page behind the buffer (AnonHugePages %ld kB)",
		       kb);
	munmap(raw, BUF_SIZE + HPAGE_SIZE);
}

/* --- the matrix ----------------------------------------------------------- */

enum expect { OFF, TIERING, NORMAL };

static const char *const expect_name[] = { "off", "tiering", "normal" };

FIXTURE(cell) {
	cpu_set_t n0, n1;
};

FIXTURE_VARIANT(cell) {
	int sysctl;
	int mode;
	enum expect expect;
};

#define CELL(s, m, e)							\
	FIXTURE_VARIANT_ADD(cell, sysctl##s##_##m) {			\
		.sysctl = s,						\
		.mode = PR_SET_NUMA_BALANCING_##m,			\
		.expect = e,						\
	}

CELL(0, DEFAULT, OFF);
CELL(0, DISABLED, OFF);
CELL(0, ENABLED, NORMAL);
CELL(1, DEFAULT, NORMAL);
CELL(1, DISABLED, OFF);
CELL(1, ENABLED, NORMAL);
CELL(2, DEFAULT, TIERING);
CELL(2, DISABLED, OFF);
CELL(2, ENABLED, NORMAL);
CELL(3, DEFAULT, NORMAL);
CELL(3, DISABLED, OFF);
CELL(3, ENABLED, NORMAL);

FIXTURE_SETUP(cell)
{
	size_t i;

	/* Check everything before touching any global setting. */
	ASSERT_MODULE();
	for (i = 0; i < NR_TUNABLES; i++)
		ASSERT_TRUE(tunable_ok[i])
			TH_LOG("cannot read %s", tunable_path[i]);
	ASSERT_EQ(0, node_cpus(0, &self->n0)) TH_LOG("no CPUs on node 0");
	ASSERT_EQ(0, node_cpus(1, &self->n1)) TH_LOG("no CPUs on node 1");
	ASSERT_EQ(0, numab_set_mode(PR_SET_NUMA_BALANCING_DISABLED));

	ASSERT_EQ(0, numab_write_long(SYSCTL_NUMA_BALANCING, variant->sysctl));
	for (i = 1; i < NR_TUNABLES; i++)
		ASSERT_EQ(0, numab_write_long(tunable_path[i],
					      tunable_test[i]))
			TH_LOG("cannot write %s", tunable_path[i]);
}

FIXTURE_TEARDOWN(cell)
{
	restore_tunables();
}

TEST_F(cell, measure)
{
	long before[NR_VM], after[NR_VM], d[NR_VM];
	struct cell_result r;
	int pfd[2], status, i;
	long moved;
	pid_t pid;

	ASSERT_EQ(0, read_vmstat(before))
		TH_LOG("/proc/vmstat lacks NUMA counters (VM_EVENT_COUNTERS?)");
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		measured_child(variant->mode, &self->n0, &self->n1, pfd[1]);
	close(pfd[1]);
	ASSERT_EQ((ssize_t)sizeof(r), read(pfd[0], &r, sizeof(r)));
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, read_vmstat(after));
	for (i = 0; i < NR_VM; i++)
		d[i] = after[i] - before[i];

	ASSERT_EQ(0, r.failed_step)
		TH_LOG("child failed at step %d: %s", r.failed_step,
		       strerror(r.err));

	fprintf(stderr, "# sysctl=%d mode=%s expect=%s\n", variant->sysctl,
		numab_mode_name(variant->mode), expect_name[variant->expect]);
	fprintf(stderr, "#   vmstat: numa_pte_updates +%ld numa_huge_pte_updates +%ld numa_hint_faults +%ld (local +%ld) numa_pages_migrated +%ld\n",
		d[V_PTE], d[V_HUGE_PTE], d[V_HINT], d[V_HINT_LOCAL],
		d[V_MIGRATED]);
	fprintf(stderr, "#   process: mm->numa_scan_seq %ld numa_pages_migrated %ld total_numa_faults %ld, %ld touch passes\n",
		r.scan_seq, r.proc_migrated, r.proc_faults, r.passes);
	fprintf(stderr, "#   small pages on node0/node1/other: before %ld/%ld/%ld after %ld/%ld/%ld\n",
		r.small_before.node[0], r.small_before.node[1],
		r.small_before.other, r.small_after.node[0],
		r.small_after.node[1], r.small_after.other);
	fprintf(stderr, "#   THP buffer (madvise: %s, AnonHugePages %ld kB) on node0/node1/other: before %ld/%ld/%ld after %ld/%ld/%ld\n",
		r.thp_madvise_err ? strerror(r.thp_madvise_err) : "ok",
		r.thp_kb, r.thp_before.node[0], r.thp_before.node[1],
		r.thp_before.other, r.thp_after.node[0], r.thp_after.node[1],
		r.thp_after.other);

	/*
	 * First touch from node 0's CPUs put nothing on node 1. (Pages that
	 * a scan has already marked for a hinting fault do not show up in
	 * move_pages(), so node 0's count may be short.)
	 */
	EXPECT_LT(r.small_before.node[1], (long)BUF_PAGES / 10);
	EXPECT_LT(r.thp_before.node[1], (long)BUF_PAGES / 10);
	EXPECT_LT(0, r.small_before.node[0] + r.thp_before.node[0]);

	moved = r.small_after.node[1] + r.thp_after.node[1];
	if (variant->expect == NORMAL) {
		EXPECT_LT(0, d[V_PTE]) TH_LOG("no NUMA hinting scan");
		EXPECT_LT(0, d[V_HINT]) TH_LOG("no NUMA hinting fault");
		EXPECT_LT(0, moved + d[V_MIGRATED])
			TH_LOG("nothing migrated to node 1");
		if (r.thp_kb >= (long)(HPAGE_SIZE >> 10))
			EXPECT_LT(0, d[V_HUGE_PTE])
				TH_LOG("huge pages were not scanned");
		return;
	}
	EXPECT_EQ(0, d[V_PTE]);
	EXPECT_EQ(0, d[V_HUGE_PTE]);
	EXPECT_EQ(0, d[V_HINT]);
	EXPECT_EQ(0, d[V_MIGRATED]);
	EXPECT_EQ(0, moved) TH_LOG("pages moved to node 1");
	if (r.proc_migrated >= 0)
		EXPECT_EQ(0, r.proc_migrated);
	if (r.proc_faults >= 0)
		EXPECT_EQ(0, r.proc_faults);
}

TEST_HARNESS_MAIN
