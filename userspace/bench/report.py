# SPDX-License-Identifier: GPL-2.0
"""Turn the raw results of bench.sh into the benchmark report.

    python3 report.py RAW_DIR MD_FILE DAT_DIR

RAW_DIR holds the BENCH lines of every guest boot (*.txt), run.txt (how
and where the run was made), hooks.md (hooks.py) and,
optionally, summary.md (a person's reading of the run, included as is).
Writes the markdown report to MD_FILE and the plot data to DAT_DIR (for
the gnuplot scripts plot-*.gp). The output depends on RAW_DIR
only: the same raw files give the same report, byte for byte.
"""

import glob
import itertools
import math
import os
import re
import statistics
import sys

REFUSED = "n/a (kernel refuses)"


def load(raw):
    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "*.txt"))):
        if os.path.basename(path) == "run.txt":
            continue
        with open(path) as f:
            for line in f:
                if not line.startswith("BENCH "):
                    continue
                row = {}
                for key, _, value in (w.partition("=")
                                      for w in line.split()[1:] if "=" in w):
                    # An info line's second kernel= is the release.
                    if key == "kernel" and key in row:
                        key = "release"
                    row[key] = value
                if row.get("suite") == "rr":
                    row.setdefault("arrivals", "paced")
                    row.setdefault("trigger", "lt")
                rows.append(row)
    return rows


def read_run(raw):
    run = {}
    path = os.path.join(raw, "run.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition(": ")
                run[key] = value
    return run


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class Rows:
    def __init__(self, rows):
        self.rows = rows

    def select(self, **want):
        return [r for r in self.rows
                if all(r.get(k) == v for k, v in want.items())]


def vals(rs, key):
    return [v for v in (num(r.get(key)) for r in rs) if v is not None]


def med(rs, key):
    v = vals(rs, key)
    return statistics.median(v) if v else None


def rng(rs, key):
    v = vals(rs, key)
    return (min(v), max(v)) if v else (None, None)


def spread_pct(rs, key):
    """(max - min) / median over the rounds, in percent."""
    v = vals(rs, key)
    m = med(rs, key)
    if not v or not m:
        return None
    return (max(v) - min(v)) / m * 100


def fmt(v, digits=1):
    return "n/a" if v is None else f"{v:.{digits}f}"


def refused(rs):
    return any("refused" in r for r in rs)


def cell(rs, key, digits=1, spread=False):
    """Median over the rounds, with [min..max] when asked."""
    if not rs:
        return "not run"
    if refused(rs):
        return REFUSED
    m = med(rs, key)
    if not spread or m is None:
        return fmt(m, digits)
    lo, hi = rng(rs, key)
    if len(vals(rs, key)) < 2:
        return fmt(m, digits)
    return f"{fmt(m, digits)} [{fmt(lo, digits)}..{fmt(hi, digits)}]"


def server_usage(rs, requests_key):
    """Each row's server CPU us and voluntary context switches per
    request (srv_cpu_us, srv_vcs), from the server's counters taken
    before and after the load."""
    for r in rs:
        b = dict(kv.split("=") for kv in r["server_before"].split(","))
        a = dict(kv.split("=") for kv in r["server_after"].split(","))
        n = float(r[requests_key])
        r["srv_cpu_us"] = str((float(a["cpu_ns"]) - float(b["cpu_ns"])) /
                              1e3 / n)
        r["srv_vcs"] = str((float(a["vcs"]) - float(b["vcs"])) / n)


def pct(x, digits=3):
    return f"{(x - 1) * 100:+.{digits}f}%"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def rounds_of(rs):
    return sorted({r["round"] for r in rs}, key=int)


# --- the report --------------------------------------------------------------

# What summary.md may not quote outside `code`: a decimal, a percentage
# or a thousands-separated count is a measured figure.
MEASURED_FIGURE = re.compile(r"\d+\.\d+|\d+ ?%|\d{1,3},\d{3}")

UNUSED_TESTS = [
    ("pipe", "pipe throughput (512 B write+read)"),
    ("pingpong", "pipe ping-pong, 2 processes"),
    ("getppid", "getppid syscall"),
    ("fork", "fork + _exit + waitpid"),
    ("execl", "fork + execl + waitpid"),
    ("epoll", "epoll_wait(-1), always-ready eventfd"),
    ("epollpp", "ping-pong, each side in epoll_wait() on its pipe"),
    ("fault", "page fault (mmap, touch, munmap)"),
    ("cpuloop", "CPU loop, NUMA balancing on (tick path)"),
]


def mode_label(mode, wait_us, min_events="0"):
    if mode == "plain":
        label = "plain epoll_wait()"
    elif mode == "sleep":
        label = f"sleep hack: nanosleep {wait_us} us, then epoll_wait()"
    elif mode == "minwait":
        label = f"EPOLL_CTL_MIN_WAIT {wait_us} us"
    elif mode == "minwait-adaptive":
        label = f"EPOLL_CTL_MIN_WAIT {wait_us} us + ADAPTIVE"
    else:
        label = f"EPOLL_CTL_MIN_WAIT {wait_us} us + AFTER_FIRST"
    if min_events not in (None, "0"):
        label += f", EPOLL_CTL_MIN_EVENTS {min_events}"
    return label


def series_of(db):
    """The kernel series of the run, from its kernels' releases."""
    for r in db.select(suite="info"):
        m = re.match(r"(\d+\.\d+)(?:[.-]|$)", r.get("release", ""))
        if m:
            return m.group(1)
    return "6.1"


class Report:
    def __init__(self, raw, dat):
        self.db = Rows(load(raw))
        self.run = read_run(raw)
        self.raw = raw
        self.dat = dat
        self.md = []
        self.unused_total = None
        self.series = series_of(self.db)

    def series_paths(self):
        """The build folder, hook series and published raw folder of the
        run's kernel series."""
        if self.series == "6.1":
            return "build/6.1", "hooks.patch", "docs/bench-raw/"
        return (f"build/{self.series}", f"hooks-{self.series}.patch",
                f"docs/bench-raw-{self.series}/")

    def w(self, *lines):
        self.md.extend(line for line in lines if line is not None)

    def dat_file(self, name, lines):
        with open(os.path.join(self.dat, name), "w") as f:
            f.write("".join(line + "\n" for line in lines))

    # -- header -----------------------------------------------------------

    def intro(self):
        published = self.series_paths()[2]
        title = "" if self.series == "6.1" else f" ({self.series} kernels)"
        self.w(f"# Benchmarks{title}", "",
               "`make bench` measures, side by side in one run, what the "
               "hook series costs when nothing uses it and what the two "
               "features do when something does. It is not part of `make "
               "check`. This page is generated: `make bench-report` "
               "rewrites it, and its plots, from the raw results of the "
               f"run in `{published}`; the results come first, how they "
               "are measured after them.", "")

    def method(self):
        run = self.run
        build, patch, published = self.series_paths()
        other = "6.12" if self.series == "6.1" else "6.1"
        self.w("## How the run is made", "",
               "```sh",
               "make bench           # ~16 min on the 2-core dev box, "
               "kernels built",
               "make bench QUICK=1   # fewer runs: ~7 min, from a clean "
               "clone with the kernels cached",
               "make bench SUITES=redis ROUNDS=3   # some suites only, "
               "3 rounds",
               "make bench-report    # this page again from "
               f"{published}",
               "```", "",
               "It builds what it needs (the patched kernel, module and "
               "guest programs through `make initramfs`; the stock kernel "
               "through `make kernel-stock`, "
               "cached like the other; the static bench programs of "
               f"`userspace/bench/` into `{build}/bench/bin`), makes one "
               "guest "
               "image for every boot (the project's image plus Debian's "
               "`memcached`, `redis-server`, `redis-benchmark`, `nginx`, "
               "`wrk`, `stress-ng` and `perf`, only in the bench image), boots each kernel "
               f"and writes `{build}/bench/results.md` and "
               f"`{build}/bench/bench-*.png` from the raw `BENCH` lines in "
               f"`{build}/bench/raw/`. To publish a run, copy its raw "
               f"folder to `{published}` and run `make bench-report`. "
               f"The figures here are of the {self.series} kernels; "
               f"`make KSERIES={other} bench` runs the same suites on "
               f"{other} (into `build/{other}/`). The guest kernels "
               "allocate with SLUB (6.1's tinyconfig picks SLOB, whose "
               "first-fit scan costs more the more small objects live, "
               "so that 6.1's figures moved from boot to boot; 6.12 "
               "keeps tinyconfig's SLUB_TINY).",
               "",
               "| kernel | what |", "|---|---|",
               f"| A | stock Debian {self.series} "
               f"(`linux-source-{self.series}`), same "
               "`kernel/guest.config`, no patch |",
               f"| B | patched (`{patch}`), `numab_minwait` not loaded |",
               "| C | patched, `numab_minwait` loaded (`qemu/run "
               "--preload`), no process using either feature unless the "
               "test says so |", "")
        self.w("### How the figures are measured", "",
               "Every guest runs under `qemu/run --icount`: QEMU's TCG with "
               "`-icount shift=0,sleep=off,align=off`, one vCPU, and a "
               "second NUMA node with memory and no CPU (`--nodes 2`), "
               "booted with `norandmaps` (no address-space randomization, "
               "so that a process costs the same in every boot). The "
               "guest's clock then counts the instructions it executes, "
               "**1 ns per instruction**, and skips idle time. Every time "
               "below is guest time: a count of instructions (user and "
               "kernel, interrupts included), the same whatever the host's "
               "load, so boots run two at a time. It measures path "
               "length, which is what a load-and-branch hook or a "
               "per-event wake-up adds; it does not model caches, TLBs, "
               "branch prediction or memory stalls (every instruction "
               "costs the same), so it says nothing about the cache "
               "footprint of a change, and absolute times are not those of "
               "real hardware. A guest of two vCPUs does not boot under "
               "`-icount` with QEMU 7.2 (the second vCPU stops being run "
               "while the boot CPU waits for it), hence one vCPU: server "
               "and client share it, as they did before. No plain-TCG "
               "wall-clock figure is kept: those moved by 8-82% between "
               "runs on this host, and TCG's wall time is the emulator's "
               "work, which models the guest's caches no better.", "",
               "Counts (context switches, faults, epoll_wait calls, events "
               "per call, hint faults, migrations) are what the guest "
               "kernel did. CPU time per request is the server thread's "
               "CPU clock (`CLOCK_THREAD_CPUTIME_ID`, the scheduler's "
               "runtime in ns; for memcached, redis and nginx the process CPU "
               "clock of the server); `getrusage()` of the same thread "
               "reports the same runtime in microseconds "
               "(check: section 2). Each suite runs in several rounds, "
               "each round a separate boot, its modes in an order that "
               "rotates per round; a figure is the median over the rounds, "
               "with [min..max] where shown, and *spread* is "
               "(max - min) / median.", "")
        self.w("### The run", "")
        for key in ("command", "finished", "guest runs", "machine", "qemu",
                    "guest", "host load average at the end"):
            if key in run:
                self.w(f"- {key}: {run[key]}")
        pkgs = [f"{k[len('package '):]} {v}" for k, v in sorted(run.items())
                if k.startswith("package ")]
        if pkgs:
            self.w(f"- Debian packages in the guest: {', '.join(pkgs)}")
        for k, label in (("A", "stock"), ("B", "patched, no module"),
                         ("C", "patched + module")):
            i = self.db.select(suite="info", kernel=k)
            if i:
                r = i[0]
                self.w(f"- {k} ({label}): `{r.get('release')}`, "
                       f"numa_balancing={r.get('numa_balancing')}, nodes "
                       f"{r.get('nodes_online')} (CPUs on node "
                       f"{r.get('nodes_with_cpus')}), module "
                       f"{r.get('module')}, counters "
                       f"`{r.get('counters')}`")
        self.w("")

    def results_first(self):
        """The answer before the method: the figures the sections below
        measure, computed from the same rows, then a person's reading."""
        out = ["## Results first", "",
               "Medians over the rounds, guest time under `-icount` "
               "(instructions); the sections below give the spreads and "
               "the method. M = 200 us.", ""]
        if self.unused_total:
            b, c = self.unused_total
            out += [f"- Cost when unused (geometric mean of the section 1 "
                    f"tests): {pct(b)} patched, {pct(c)} with the module "
                    "loaded.", ""]
        modes = (("plain", 0, "plain"), ("sleep", 200, "sleep hack"),
                 ("minwait", 200, "fixed M"),
                 ("minwait-adaptive", 200, "adaptive"))
        # Only the modes this run measured (older runs: no adaptive).
        modes = [m for m in modes if self.rr_sel(5000, m[0], m[1])]
        rows = []
        for rate, arrivals in ((2000, "paced"), (5000, "paced"),
                               (20000, "paced"), (40000, "paced"),
                               (4000, "poisson")):
            cells = []
            for mode, us, _ in modes:
                rs = self.rr_sel(rate, mode, us, arrivals=arrivals)
                cells.append("" if not rs or refused(rs) else
                             f"{fmt(med(rs, 'cpu_us_per_req'), 2)} / "
                             f"{fmt(med(rs, 'lat_p99_us'))}")
            if any(cells):
                rows.append(f"| {rate} req/s {arrivals} | " +
                            " | ".join(cells) + " |")
        if rows:
            out += ["`bench_rr` (8 connections, one vCPU): server CPU us "
                    "per request / p99 latency us.", "",
                    "| load | " + " | ".join(m[2] for m in modes) + " |",
                    "|---" * (len(modes) + 1) + "|", *rows, ""]
        out += self.results_bullets()
        rows = []
        for clients in self.redis_clients():
            for shim, label in self.SHIM_LABELS:
                rs = self.db.select(suite="redis", shim=shim, test="SET",
                                    clients=clients)
                if not rs or any(r.get("shim_refused") == "1"
                                 for r in rs) or "srv_cpu_us" not in rs[0]:
                    continue
                rows.append(f"| {label} | {clients} | "
                            f"{fmt(med(rs, 'rps'), 0)} | "
                            f"{fmt(med(rs, 'srv_cpu_us'), 2)} |")
        if rows:
            out += ["`redis-benchmark` SET (closed loop), Debian's "
                    "redis-server unmodified:", "",
                    "| redis | clients | requests/s | server CPU us/req |",
                    "|---|---|---|---|", *rows, ""]
        rows = []
        for shim, label in self.SHIM_LABELS:
            rs = [r for r in self.db.select(suite="nginx", shim=shim)
                  if "failed" not in r]
            if not rs or any(r.get("shim_refused") == "1"
                             for r in rs) or "srv_cpu_us" not in rs[0]:
                continue
            rows.append(f"| {label} | {rs[0].get('conns')} | "
                        f"{fmt(med(rs, 'rps'), 0)} | "
                        f"{fmt(med(rs, 'srv_cpu_us'), 2)} |")
        if rows:
            out += ["`wrk` against Debian's nginx (closed loop), "
                    "unmodified:", "",
                    "| nginx | connections | requests/s | server CPU "
                    "us/req |", "|---|---|---|---|", *rows, ""]
        summary = os.path.join(self.raw, "summary.md")
        if os.path.exists(summary):
            with open(summary) as f:
                text = f.read().rstrip("\n")
            # A person's reading, not a second copy of the figures: those
            # are computed above from the rows, and follow a re-run.
            figure = MEASURED_FIGURE.search(re.sub(r"`[^`]*`", "", text))
            if figure:
                sys.exit(f"{summary}: quotes a measured figure "
                         f"('{figure.group(0)}'); let report.py compute it")
            out += [text, ""]
        return out

    def results_bullets(self):
        """What the min-wait costs against plain epoll_wait() and the
        sleep hack, as the sections below measure it."""
        out = []
        calls = []
        for items, maxev, k in (("1", "1", "0"), ("8", "8", "0"),
                                ("2", "8", "2")):
            sel = dict(suite="epcall", items=items, maxevents=maxev)
            base = self.db.select(mode="plain", **sel)
            mw = self.db.select(mode="minwait", min_events=k, **sel)
            if base and mw and not refused(mw):
                what = (f"{items} ready, maxevents {maxev}" +
                        (f", K = {k}" if k != "0" else ""))
                calls.append(f"{what}: {pct(med(mw, 'ns_per_call') / med(base, 'ns_per_call'), 1)}")
        if calls:
            out += ["- One `epoll_wait()` that returns at once, with a "
                    "min-wait set, against plain: " + "; ".join(calls) +
                    " (section 2).", ""]
        hack = []
        for rate in (5000, 20000, 40000):
            s = self.rr_sel(rate, "sleep", 200)
            mw = self.rr_sel(rate, "minwait", 200)
            p = self.rr_sel(rate, "plain", 0)
            if not (s and mw and p) or refused(mw):
                continue
            hack.append(f"{rate} req/s: CPU per request "
                        f"{pct(med(mw, 'cpu_us_per_req') / med(p, 'cpu_us_per_req'), 1)}"
                        f" against plain, "
                        f"{pct(med(mw, 'cpu_us_per_req') / med(s, 'cpu_us_per_req'), 1)}"
                        f" against the sleep hack, "
                        f"{fmt(med(mw, 'events_per_call'), 2)} events per "
                        f"call (plain {fmt(med(p, 'events_per_call'), 2)})")
        if hack:
            out += ["- Fixed M = 200 us, paced: " + "; ".join(hack) + ".",
                    ""]
        return out

    # -- 1. unused -------------------------------------------------------------

    def unused(self):
        self.w("## 1. Cost when unused", "")
        un = self.db.select(suite="unused")
        if not un:
            self.w("Missing: no bench_unused results.", "")
            return
        rounds = rounds_of(un)
        self.w(f"`bench_unused`, {len(rounds)} rounds, each booting A, B "
               f"and C in turn; every test a fixed number of iterations, "
               f"fastest of {un[0].get('repeats')} within a boot. Time per "
               "op is guest time: instructions. B vs A and C vs A: the "
               "kernel's time per op over stock's in the same round, "
               "median [min..max] over the rounds, as a change in percent "
               "(+ is more instructions). A's spread: of its own times over "
               "the rounds. The total is the geometric mean over the tests "
               "of the median ratios, with [min..max] of the per-round "
               "geometric means.", "")
        self.w("| test | ctx sw/op A / B / C | faults/op A / B / C | A ns/op "
               "| A spread | B vs A | C vs A |",
               "|---|---|---|---|---|---|---|")
        med_ratio = {"B": [], "C": []}
        per_round = {"B": {}, "C": {}}
        plot = []
        for test, desc in UNUSED_TESTS:
            per = {k: self.db.select(suite="unused", test=test, kernel=k)
                   for k in "ABC"}
            if not per["A"]:
                continue
            cs = " / ".join(fmt(med(per[k], "cs_per_op"), 3) for k in "ABC")
            fl = " / ".join(fmt(med(per[k], "faults_per_op"), 3)
                            for k in "ABC")
            cells = []
            line = [test]
            for k in "BC":
                ratios = []
                for rnd in rounds:
                    a = vals([r for r in per["A"] if r["round"] == rnd],
                             "ns_per_op")
                    b = vals([r for r in per[k] if r["round"] == rnd],
                             "ns_per_op")
                    if a and b:
                        ratios.append(b[0] / a[0])
                        per_round[k].setdefault(rnd, []).append(b[0] / a[0])
                if not ratios:
                    cells.append("n/a")
                    line += ["0", "0", "0"]
                    continue
                m = statistics.median(ratios)
                med_ratio[k].append(m)
                cells.append(f"{pct(m)} [{pct(min(ratios))}.."
                             f"{pct(max(ratios))}]")
                line += [f"{(x - 1) * 100:.4f}"
                         for x in (m, min(ratios), max(ratios))]
            plot.append(" ".join(line))
            self.w(f"| `{test}`: {desc} | {cs} | {fl} | "
                   f"{fmt(med(per['A'], 'ns_per_op'), 2)} | "
                   f"{fmt(spread_pct(per['A'], 'ns_per_op'), 3)}% | "
                   f"{cells[0]} | {cells[1]} |")
        tot = []
        for k in "BC":
            if not med_ratio[k]:
                tot.append("n/a")
                continue
            rg = [geomean(v) for _, v in sorted(per_round[k].items())
                  if len(v) == len(med_ratio[k])]
            tot.append(f"**{pct(geomean(med_ratio[k]))}**" +
                       (f" [{pct(min(rg))}..{pct(max(rg))}]" if rg else ""))
        self.w(f"| **total (geometric mean)** | | | | | {tot[0]} | "
               f"{tot[1]} |", "")
        if med_ratio["B"] and med_ratio["C"]:
            self.unused_total = (geomean(med_ratio["B"]),
                                 geomean(med_ratio["C"]))
        self.dat_file("bench-unused.dat", plot)
        self.w("![instructions per op vs stock](bench-unused.png)", "")
        self.w("### Hook sites in the built kernels (objdump)", "")
        hooks = os.path.join(self.raw, "hooks.md")
        if os.path.exists(hooks):
            with open(hooks) as f:
                self.w(f.read().rstrip("\n"), "")

    # -- 2. min-wait -----------------------------------------------------------

    def epcall(self):
        ep = self.db.select(suite="epcall")
        self.w("### One epoll_wait() call that returns at once", "")
        if not ep:
            self.w("Missing: no bench_epcall results.", "")
            return
        self.w(f"`bench_epcall`: ITEMS always-ready eventfds (counter 1, "
               f"never read) on one instance, "
               f"{ep[0].get('iters')} calls of `epoll_wait(maxevents, "
               "timeout -1)` in a loop, fastest of 3 within a boot; each "
               "call returns at once because its batch target (maxevents, "
               "or K) is ready. Guest ns per call = instructions, loop "
               "included; kernel C, median [min..max] over the rounds.",
               "")
        self.w("| ready items | maxevents | instance | ns (instructions) "
               "per call | vs plain |", "|---|---|---|---|---|")
        for items, maxev in (("1", "1"), ("8", "8"), ("2", "8")):
            base = med(self.db.select(suite="epcall", items=items,
                                      maxevents=maxev, mode="plain"),
                       "ns_per_call")
            for mode in ("plain", "minwait", "minwait-first"):
                for k in ("0", items):
                    rs = self.db.select(suite="epcall", items=items,
                                        maxevents=maxev, mode=mode,
                                        min_events=k)
                    if not rs or (k != "0" and k == maxev):
                        continue
                    label = ("plain" if mode == "plain" else
                             mode_label(mode, rs[0]["wait_us"], k))
                    m = med(rs, "ns_per_call")
                    vs = ("" if mode == "plain" or refused(rs) or not base
                          else pct(m / base))
                    self.w(f"| {items} | {maxev} | {label} | "
                           f"{cell(rs, 'ns_per_call', 2, True)} | {vs} |")
        self.w("")

    def rr_row(self, rs, rate, label, arrivals="paced"):
        c = [f"{rate} {arrivals}"]
        if not rs and label.endswith("ADAPTIVE"):
            # Runs older than the adaptive wait have no such rows.
            return None
        if not rs:
            return "| " + " | ".join(c + [label] + ["not run"] * 8) + " |"
        if refused(rs):
            r = rs[0]
            why = f"{REFUSED}: {r.get('refused')} {r.get('errno')}"
            return "| " + " | ".join(c + [label, why] + [""] * 7) + " |"
        return "| " + " | ".join(c + [
            label, cell(rs, "events_per_call", 2),
            cell(rs, "vcs_per_req", 3), cell(rs, "ivcs_per_req", 3),
            cell(rs, "cpu_us_per_req", 3, True),
            cell(rs, "lat_p50_us"), cell(rs, "lat_p99_us"),
            cell(rs, "lat_p999_us"),
            cell(rs, "req_per_s", 0)]) + " |"

    RR_HEAD = ("| req/s, arrivals | mode | events/call | vol cs/req | invol cs/req | "
               "CPU us/req [min..max] | p50 us | p99 us | p99.9 us | "
               "req/s done |",
               "|---|---|---|---|---|---|---|---|---|---|")

    def rr_sel(self, rate, mode, wait_us, k="0", arrivals="paced",
               trigger="lt"):
        return self.db.select(suite="rr", rate=str(rate), mode=mode,
                              wait_us=str(wait_us), min_events=k,
                              arrivals=arrivals, trigger=trigger)

    def rr_edge(self):
        """The same rates with an edge-triggered server: what is left of
        the minimum wait's cost without level-triggered items for each
        call to re-check."""
        rows = [(rate, mode, us) for rate in (20000, 40000)
                for mode, us in (("plain", 0), ("sleep", 200),
                                 ("minwait", 200))]
        if not any(self.rr_sel(r, m, u, trigger="et") for r, m, u in rows):
            return
        self.w("### The same server, edge-triggered", "")
        self.w("Level-triggered items that a call returned stay on the ready "
               "list, and the next call has to poll them again: the sleep "
               "hack's call does it once, after its sleep; a call with a "
               "minimum wait does it before it sleeps (an item found drained "
               "then must not count towards the batch, nor end the wait with "
               "a wakeup that finds nothing), and polls the item again when "
               "it is signalled during the wait. Watching the same "
               "connections with `EPOLLET` leaves nothing to re-check: what "
               "is left between the two is the sleep hack's extra system "
               "call per epoll_wait().", "")
        self.w(*self.RR_HEAD)
        for rate, mode, us in rows:
            self.w(self.rr_row(self.rr_sel(rate, mode, us, trigger="et"),
                               rate, mode_label(mode, us) + ", EPOLLET"))
        self.w("")
        for rate in (20000, 40000):
            s = self.rr_sel(rate, "sleep", 200, trigger="et")
            mw = self.rr_sel(rate, "minwait", 200, trigger="et")
            if not (s and mw) or refused(mw):
                continue
            self.w(f"- {rate} req/s, EPOLLET: min-wait 200 us vs the sleep "
                   f"hack: CPU/req "
                   f"{pct(med(mw, 'cpu_us_per_req') / med(s, 'cpu_us_per_req'))}"
                   f"; events/call {fmt(med(mw, 'events_per_call'), 2)} vs "
                   f"{fmt(med(s, 'events_per_call'), 2)}; p99 "
                   f"{fmt(med(mw, 'lat_p99_us'))} vs "
                   f"{fmt(med(s, 'lat_p99_us'))} us.")
        ratios = []
        for rate in (20000, 40000):
            s = self.rr_sel(rate, "sleep", 200, trigger="et")
            mw = self.rr_sel(rate, "minwait", 200, trigger="et")
            if s and mw and not refused(mw):
                ratios.append(med(mw, "cpu_us_per_req") /
                              med(s, "cpu_us_per_req"))
        et = (f"in the edge-triggered rows it costs {pct(min(ratios), 1)} "
              f"to {pct(max(ratios), 1)} against the hack"
              if ratios else "the edge-triggered rows did not run")
        self.w("", "**The floor.** At the same timer slack the two sleep "
               "once per batch, wake once, and deliver the same events in "
               "one scan. What the minimum wait saves is the sleep hack's "
               "second system call per epoll_wait() (the nanosleep: entry, "
               "exit, setting up its hrtimer); what it adds is the crossing "
               "of each sleeping call into the module that times the wait "
               "(the waiter's registration under ep->lock, the module's "
               f"hrtimer): {et}, a few hundred instructions either way "
               "against a batch that costs 20,000 to 35,000. A "
               "level-triggered server adds to it: the items the previous "
               "call returned are polled before the wait and again when "
               "signalled, where the hack polls them once. Under `-icount` "
               "a system call costs its instructions only, and this guest "
               "kernel has no speculative-execution mitigations built in; "
               "on hardware with them (page-table isolation, retpolines, "
               "IBRS) a system call costs several times more, and so does "
               "the one the minimum wait saves.", "")

    def rr_adaptive(self):
        """The adaptive wait against its goals: plain's cost where nothing
        batches, the fixed M's where waiting pays."""
        lines = []
        for rate, arrivals in ((2000, "paced"), (5000, "paced"),
                               (20000, "paced"), (40000, "paced"),
                               (2000, "poisson"), (4000, "poisson")):
            ad = self.rr_sel(rate, "minwait-adaptive", 200,
                             arrivals=arrivals)
            p = self.rr_sel(rate, "plain", 0, arrivals=arrivals)
            mw = self.rr_sel(rate, "minwait", 200, arrivals=arrivals)
            if not (ad and p) or refused(ad):
                continue
            line = (f"- {rate} req/s {arrivals}: adaptive (M = 200 us) "
                    f"CPU/req vs plain "
                    f"{pct(med(ad, 'cpu_us_per_req') / med(p, 'cpu_us_per_req'))}")
            if mw and not refused(mw):
                line += (", vs the fixed M "
                         f"{pct(med(ad, 'cpu_us_per_req') / med(mw, 'cpu_us_per_req'))}")
            line += (f"; p99 {fmt(med(ad, 'lat_p99_us'))} us (plain "
                     f"{fmt(med(p, 'lat_p99_us'))}); events/call "
                     f"{fmt(med(ad, 'events_per_call'), 2)}.")
            lines.append(line)
        if lines:
            self.w(*lines, "")

    def rr(self):
        rr = self.db.select(suite="rr")
        self.w("## 2. The minimum wait", "")
        self.epcall()
        self.w("### Request/response: CPU per request against the sleep "
               "hack", "")
        if not rr:
            self.w("Missing: no bench_rr results.", "")
            return
        r0 = rr[0]
        self.w(f"`bench_rr`: a server thread (epoll, {r0.get('conns')} "
               "unix-socket connections, each event read and echoed) and a "
               "client thread sending 16-byte requests and timing each "
               "echo, both on the one vCPU. *paced*: request k at start + "
               "k / rate; *Poisson*: exponential gaps of mean 1 / rate, the "
               "same pseudo-random sequence in every run; "
               f"{int(num(r0['requests']) / num(r0['rate']))} s of "
               "requests per run. Timer slack of both threads "
               f"{r0.get('timer_slack_ns')} ns (`PR_SET_TIMERSLACK`, the "
               "same in every mode: the sleep hack's nanosleep and the "
               "minimum wait both end when asked, where a default 50 us "
               "slack would stretch the hack's 200 us to up to 250 us). "
               "Server counts: `getrusage(RUSAGE_THREAD)` of the server "
               "thread; CPU: its thread CPU clock. Kernel C; median over "
               "the runs of a row, CPU with [min..max]: one run per round, "
               "and for the rows at 5000, 20000 and 40000 requests/s "
               "several runs per round (how much a server does per "
               "request at these rates depends on how the run's phase "
               "meets the 4 ms tick, which differs from run to run).", "")
        self.w(*self.RR_HEAD)
        for rate in (5000, 20000, 40000):
            for mode, us in (("plain", 0), ("sleep", 200), ("minwait", 200),
                             ("minwait-adaptive", 200)):
                self.w(self.rr_row(self.rr_sel(rate, mode, us), rate,
                                   mode_label(mode, us)))
        self.w("")
        self.rr_adaptive()
        # Per rate, for each of the four modes: CPU us/request and p99 us,
        # each median, min, max; NaN (no point) where a mode did not run
        # at that rate.
        plot = []
        for rate in (2000, 4000, 5000, 20000, 40000):
            line = [str(rate)]
            for mode, us in (("plain", 0), ("sleep", 200), ("minwait", 200),
                             ("minwait-adaptive", 200)):
                rs = self.rr_sel(rate, mode, us)
                for key in ("cpu_us_per_req", "lat_p99_us"):
                    lo, hi = rng(rs, key) if rs and not refused(rs) \
                        else (None, None)
                    line += (["NaN"] * 3 if lo is None else
                             [f"{med(rs, key):.4f}", f"{lo:.4f}",
                              f"{hi:.4f}"])
            if set(line[1:]) != {"NaN"}:
                plot.append(" ".join(line))
        for rate in (5000, 20000, 40000):
            s = self.rr_sel(rate, "sleep", 200)
            mw = self.rr_sel(rate, "minwait", 200)
            p = self.rr_sel(rate, "plain", 0)
            if not (s and mw and p) or refused(mw):
                continue
            self.w(f"- {rate} req/s: min-wait 200 us vs the sleep hack: "
                   f"CPU/req {pct(med(mw, 'cpu_us_per_req') / med(s, 'cpu_us_per_req'))}, "
                   f"vs plain {pct(med(mw, 'cpu_us_per_req') / med(p, 'cpu_us_per_req'))}; "
                   f"events/call {fmt(med(mw, 'events_per_call'), 2)} vs "
                   f"{fmt(med(s, 'events_per_call'), 2)}; p99 "
                   f"{fmt(med(mw, 'lat_p99_us'))} vs "
                   f"{fmt(med(s, 'lat_p99_us'))} us.")
        self.w("", "![server CPU per request and p99 latency against the "
               "offered load (2000 to 40000 requests/s, paced) for plain "
               "epoll_wait(), the sleep hack, the fixed and the adaptive "
               "minimum wait](bench-rr-rates.png)", "")
        self.dat_file("bench-rr-rates.dat", plot)
        self.rr_edge()

        self.w("### Low load: the timer from the first event", "")
        self.w("At 2000 requests/s a paced request comes every 500 us: no "
               "200 us window, from the call's start or from the first "
               "event, ever holds two, so only bursts can batch. Poisson "
               "arrivals have them: a second request follows within "
               "200 us a third of the time.", "")
        self.w(*self.RR_HEAD)
        for arrivals in ("paced", "poisson"):
            for mode, us in (("plain", 0), ("sleep", 200), ("minwait", 200),
                             ("minwait-first", 200),
                             ("minwait-adaptive", 200)):
                self.w(self.rr_row(self.rr_sel(2000, mode, us, "0",
                                               arrivals), 2000,
                                   mode_label(mode, us), arrivals))
        self.w("")

        self.w("### The sweep at 4000 requests/s: the minimum wait M", "")
        self.w(*self.RR_HEAD)
        sweep = []
        for mode, us in (("plain", 0), ("sleep", 200), ("minwait", 50),
                         ("minwait", 100), ("minwait", 200),
                         ("minwait", 500)):
            rs = self.rr_sel(4000, mode, us)
            self.w(self.rr_row(rs, 4000, mode_label(mode, us)))
            if rs and not refused(rs):
                lo, hi = rng(rs, "cpu_us_per_req")
                plo, phi = rng(rs, "lat_p99_us")
                sweep.append(f"{mode} {us} {med(rs, 'cpu_us_per_req'):.4f} "
                             f"{lo:.4f} {hi:.4f} {med(rs, 'lat_p99_us'):.1f} "
                             f"{plo:.1f} {phi:.1f}")
        self.w("", "![CPU per request and p99 against the minimum wait, "
               "4000 requests/s](bench-minwait-sweep.png)", "")
        self.dat_file("bench-minwait-sweep.dat",
                      [s for s in sweep if not s.startswith("sleep")])
        self.dat_file("bench-minwait-sleep.dat",
                      [s for s in sweep if s.startswith("sleep")])
        self.w("### The batch target K at 4000 requests/s, Poisson arrivals",
               "")
        self.w("EPOLL_CTL_MIN_EVENTS K ends the minimum wait once K items "
               "are ready (K = 0: maxevents, 64 here).", "")
        self.w(*self.RR_HEAD)
        for mode, us, k in (("plain", 0, "0"), ("sleep", 200, "0"),
                            ("minwait", 200, "0"), ("minwait", 200, "2"),
                            ("minwait", 200, "4"), ("minwait", 200, "8"),
                            ("minwait-first", 200, "0"),
                            ("minwait-first", 200, "2"),
                            ("minwait-first", 200, "4"),
                            ("minwait-first", 200, "8")):
            self.w(self.rr_row(self.rr_sel(4000, mode, us, k, "poisson"),
                               4000, mode_label(mode, us, k), "poisson"))
        self.w("")
        self.agreement(rr)

    def agreement(self, rr):
        rounds = rounds_of(rr)
        self.w("### Do two runs agree?", "")
        if len(rounds) < 2:
            self.w("One round only: nothing to compare.", "")
            return
        keys = [("events_per_call", "events/call"),
                ("cs_per_req", "cs/req"), ("cpu_us_per_req", "CPU/req"),
                ("lat_p50_us", "p50"), ("lat_p99_us", "p99"),
                ("lat_p999_us", "p99.9")]
        groups = {}
        for r in rr:
            if "refused" in r:
                continue
            groups.setdefault((r["rate"], r["arrivals"], r["trigger"],
                               r["mode"], r["wait_us"], r["min_events"]),
                              []).append(r)
        self.w(f"Each round is a separate boot running the whole suite "
               f"({len(rounds)} rounds). The largest spread, (max - min) / "
               f"median, of a row's runs over the {len(groups)} bench_rr "
               "rows that ran, and the row where it is:", "")
        self.w("| figure | largest spread | row |", "|---|---|---|")
        for key, label in keys:
            worst = max(((spread_pct(rs, key) or 0.0, g)
                         for g, rs in groups.items()), default=None)
            if worst is None:
                continue
            rate, arrivals, trigger, mode, us, k = worst[1]
            edge = ", EPOLLET" if trigger == "et" else ""
            self.w(f"| {label} | {worst[0]:.2f}% | {rate} req/s "
                   f"{arrivals}, {mode_label(mode, us, k)}{edge} |")
        diffs = [abs(num(r["ru_cpu_us_per_req"]) / num(r["cpu_us_per_req"])
                     - 1) for rs in groups.values() for r in rs
                 if num(r.get("ru_cpu_us_per_req")) and
                 num(r.get("cpu_us_per_req"))]
        if diffs:
            self.w("", "CPU per request from `getrusage(RUSAGE_THREAD)` "
                   "(microsecond resolution, summed over a run) against "
                   "the thread CPU clock (ns): largest difference "
                   f"{max(diffs) * 100:.3f}% over {len(diffs)} runs. Under "
                   "`-icount` the kernel's runtime accounting is exact; "
                   "only the user/system split of rusage is tick-sampled.")
        self.w("")

    # -- step load ------------------------------------------------------------

    STEP_MODES = (("plain", "0"), ("sleep", "200"), ("minwait", "200"),
                  ("minwait-adaptive", "200"))
    STEP_TOLERANCE = 0.10

    def step_series(self, mode, wait_us):
        """Per window start (ms): the medians over the rounds of CPU us
        per request, events per call and p99 us, and the planned load."""
        by_t = {}
        for r in self.db.select(suite="step", mode=mode, wait_us=wait_us):
            if "t_ms" in r:
                by_t.setdefault(int(r["t_ms"]), []).append(r)
        return {t: (med(rs, "win_cpu_us_per_req"),
                    med(rs, "win_events_per_call"),
                    med(rs, "win_lat_p99_us"), int(rs[0]["load"]))
                for t, rs in sorted(by_t.items())}

    def step_phases(self, series):
        """The phases as (first window ms, end ms, load), in order."""
        phases = []
        for t, (_, _, _, load) in series.items():
            if phases and phases[-1][2] == load:
                phases[-1][1] = t
            else:
                phases.append([t, t, load])
        window = self.step_window()
        return [(a, b + window, load) for a, b, load in phases]

    def step_window(self):
        rows = [r for r in self.db.select(suite="step") if "window_ms" in r]
        return int(rows[0]["window_ms"]) if rows else 0

    def step_settle(self, series, phase):
        """Steady CPU per request and p99 of a phase (medians of its
        second half's windows), and the time from its start to the end
        of the first of the first two adjacent windows that both cost
        within STEP_TOLERANCE of that CPU figure (None: never)."""
        start, end, _ = phase
        ts = [t for t in series if start <= t < end]
        half = ts[len(ts) // 2:]
        steady = statistics.median(series[t][0] for t in half)
        p99 = statistics.median(series[t][2] for t in half)
        window = self.step_window()
        settle = None
        for a, b in zip(ts, ts[1:]):
            if b - a == window and all(abs(series[t][0] / steady - 1) <= self.STEP_TOLERANCE
                   for t in (a, b)):
                settle = a + window - start
                break
        return steady, p99, settle

    def step(self):
        rows = [r for r in self.db.select(suite="step") if "t_ms" in r]
        self.w("### A step load: 2,000 -> 40,000 -> 2,000 requests/s", "")
        if not rows:
            self.w("Missing: the step load did not run.", "")
            return
        r0 = rows[0]
        window = self.step_window()
        self.w(f"`bench_rr -s {r0.get('step_rate')}` ({r0.get('conns')} "
               f"connections, paced): {r0.get('phase_ms')} ms at "
               f"{r0.get('rate')} requests/s, {r0.get('phase_ms')} ms at "
               f"{r0.get('step_rate')}, {r0.get('phase_ms')} ms at "
               f"{r0.get('rate')} again, one run per mode per round. The "
               f"server charges what it does to {window} ms windows of "
               "planned send time (it reads its thread CPU clock once per "
               "window, when it first serves a request of the next one); "
               "each window's figure is the median over the rounds. "
               "*Steady*: the median of the phase's second half. "
               "*Settled after*: from the step to the end of the first "
               "of the first two windows in a row that both cost within "
               f"{self.STEP_TOLERANCE * 100:.0f}% of the phase's steady "
               "CPU per request (the goal: 100 ms).", "")
        self.w("| mode | phase | load req/s | steady CPU us/req | steady "
               "p99 us | settled after ms |", "|---|---|---|---|---|---|")
        plot = {}
        for mode, us in self.STEP_MODES:
            series = self.step_series(mode, us)
            if refused(self.db.select(suite="step", mode=mode, wait_us=us)):
                self.w(f"| {mode_label(mode, us)} | | | {REFUSED} | | |")
                continue
            if not series:
                continue
            plot[mode] = series
            for i, phase in enumerate(self.step_phases(series)):
                steady, p99, settle = self.step_settle(series, phase)
                after = ("(start)" if i == 0 else
                         "never" if settle is None else str(settle))
                self.w(f"| {mode_label(mode, us)} | {i + 1} | {phase[2]} | "
                       f"{fmt(steady, 2)} | {fmt(p99)} | {after} |")
        self.w("", "![server CPU per request and events per call, per "
               f"{window} ms window, through the step "
               "load](bench-step.png)", "")
        lines = []
        for t in sorted({t for series in plot.values() for t in series}):
            line = [str(t)]
            for mode, _ in self.STEP_MODES:
                v = plot.get(mode, {}).get(t)
                line += (["NaN"] * 2 if v is None else
                         [f"{v[0]:.4f}", f"{v[1]:.3f}"])
            lines.append(" ".join(line))
        self.dat_file("bench-step.dat", lines)

    # -- servers and tools --------------------------------------------------

    SHIM_LABELS = (("none", "plain"),
                   ("minwait200", "libminwait.so, MINWAIT_US=200"),
                   ("minwait200-first", "libminwait.so, MINWAIT_US=200 "
                    "MINWAIT_FLAGS=after-first"),
                   ("minwait200-k8", "libminwait.so, MINWAIT_US=200 "
                    "MINWAIT_EVENTS=8"),
                   ("minwait200-adaptive", "libminwait.so, MINWAIT_US=200 "
                    "MINWAIT_FLAGS=adaptive"))

    def redis_clients(self):
        """The redis-benchmark client counts of the run, fewest first."""
        return sorted({r.get("clients") for r in
                       self.db.select(suite="redis")}, key=int)

    def servers(self):
        self.w("## 3. Servers nobody here wrote", "")
        self.w("Debian's binaries, unmodified, with and without "
               "`libminwait.so` (LD_PRELOAD into the server only) in each "
               "of its modes. A mode the kernel refuses (the shim then "
               "warns and the server runs without a minimum wait) shows "
               f"as {REFUSED}.", "")
        memc = self.db.select(suite="memc")
        self.w("### memcached", "")
        if memc:
            r0 = memc[0]
            self.w(f"`memcached -t 1` (one worker thread) and `bench_memc` "
                   f"(a paced client: `get` of 100 stored keys over "
                   f"{r0.get('conns')} unix-socket connections, "
                   f"{r0.get('rate')} requests/s, {r0.get('requests')} per "
                   "run). Server: all memcached threads (context switches "
                   "from /proc/PID/task/*/status, CPU from its process CPU "
                   "clock). Latency: the client's, send to reply.", "")
            self.w("| memcached | req/s | vol cs/req | invol cs/req | "
                   "CPU us/req [min..max] | p50 us | p99 us | p99.9 us |",
                   "|---|---|---|---|---|---|---|---|")
            for shim, label in self.SHIM_LABELS:
                rs = self.db.select(suite="memc", shim=shim)
                if not rs:
                    continue
                if any(r.get("shim_refused") == "1" for r in rs):
                    self.w(f"| {label} | {REFUSED} | | | | | | |")
                    continue
                self.w(f"| {label} | {cell(rs, 'req_per_s', 0)} | "
                       f"{cell(rs, 'server_vcs_per_req', 3)} | "
                       f"{cell(rs, 'server_ivcs_per_req', 3)} | "
                       f"{cell(rs, 'server_cpu_us_per_req', 3, True)} | "
                       f"{cell(rs, 'lat_p50_us')} | {cell(rs, 'lat_p99_us')} "
                       f"| {cell(rs, 'lat_p999_us')} |")
            self.w("")
        else:
            self.w("Missing: memcached did not run in the guest.", "")

        redis = self.db.select(suite="redis")
        self.w("### redis", "")
        if not redis:
            self.w("Missing: redis did not run in the guest.", "")
            return
        r0 = redis[0]
        clients = self.redis_clients()
        self.w(f"`redis-server` (unix socket, no persistence) driven by "
               f"`redis-benchmark -c N -n {r0.get('requests')} -t set,get` "
               f"with N = {' and '.join(clients)} (closed loop: each client "
               "sends its next request when the reply is in). Its own "
               "figures: requests/s and latency percentiles in guest time; "
               "beside them the server's counters over both tests "
               "(process CPU clock, context switches of all threads), per "
               "request.", "")
        self.w("| redis | clients | test | requests/s | p50 ms | p99 ms | "
               "max ms | server vol cs/req | server CPU us/req |",
               "|---|---|---|---|---|---|---|---|---|")
        for n_clients, (shim, label), test in itertools.product(
                clients, self.SHIM_LABELS, ("SET", "GET")):
            rs = self.db.select(suite="redis", shim=shim, test=test,
                                clients=n_clients)
            if not rs:
                continue
            if any(r.get("shim_refused") == "1" for r in rs):
                self.w(f"| {label} | {n_clients} | {test} | {REFUSED} "
                       "| | | | | |")
                continue
            server_usage(rs, "server_requests")
            self.w(f"| {label} | {n_clients} | {test} | "
                   f"{cell(rs, 'rps', 0, True)} | "
                   f"{cell(rs, 'lat_p50_ms', 3)} | "
                   f"{cell(rs, 'lat_p99_ms', 3)} | "
                   f"{cell(rs, 'lat_max_ms', 3)} | "
                   f"{cell(rs, 'srv_vcs', 3)} | "
                   f"{cell(rs, 'srv_cpu_us', 3, True)} |")
        self.w("")

    def nginx(self):
        rows = self.db.select(suite="nginx")
        self.w("### nginx", "")
        if not rows:
            self.w("Missing: nginx did not run in the guest.", "")
            return
        r0 = rows[0]
        self.w(f"Debian's `nginx` in one process (`master_process off`, "
               f"one worker), on the guest's loopback, answering every "
               f"request with a 3-byte body from memory (`return 200`, no "
               f"access log), driven by `wrk -t1 -c {r0.get('conns')} -d "
               f"{r0.get('seconds')}s --latency` (a closed loop: each "
               "connection sends its next request when the reply is in). "
               "wrk's figures in guest time; beside them the server's "
               "counters over the run, per request. vs plain: requests/s "
               "over plain's, medians.", "")
        self.w("| nginx | conns | requests/s | vs plain | p50 us | p99 us "
               "| errors | server vol cs/req | server CPU us/req |",
               "|---|---|---|---|---|---|---|---|---|")
        base = [r for r in self.db.select(suite="nginx", shim="none")
                if "failed" not in r]
        for shim, label in self.SHIM_LABELS:
            rs = self.db.select(suite="nginx", shim=shim)
            failed = [r["failed"] for r in rs if "failed" in r]
            rs = [r for r in rs if "failed" not in r]
            if failed:
                self.w(f"| {label} | {r0.get('conns')} | "
                       f"{len(failed)} run(s) failed: "
                       f"{', '.join(sorted(set(failed)))} | | | | | | |")
            if not rs:
                continue
            if any(r.get("shim_refused") == "1" for r in rs):
                self.w(f"| {label} | {r0.get('conns')} | {REFUSED} "
                       "| | | | | | |")
                continue
            server_usage(rs, "requests")
            errors = sum(int(r.get("socket_errors", 0)) +
                         int(r.get("non2xx", 0)) for r in rs)
            ratio = (pct(med(rs, "rps") / med(base, "rps"), 1)
                     if base and med(base, "rps") else "n/a")
            self.w(f"| {label} | {r0.get('conns')} | "
                   f"{cell(rs, 'rps', 0, True)} | {ratio} | "
                   f"{cell(rs, 'lat_p50_us', 0)} | "
                   f"{cell(rs, 'lat_p99_us', 0)} | {errors} | "
                   f"{cell(rs, 'srv_vcs', 3)} | "
                   f"{cell(rs, 'srv_cpu_us', 3, True)} |")
        self.w("")

    def stress(self):
        st = self.db.select(suite="stress")
        self.w("### stress-ng and perf bench epoll (kernel C, module "
               "loaded)", "")
        if not st:
            self.w("Missing: no stress results.", "")
            return
        self.w("A sanity and regression run: one instance of each "
               "stressor, a fixed number of bogo ops; `numa-enabled` runs "
               "it under `numab-run --enable` (per-process NUMA balancing "
               "ENABLED, inherited by its children); the epoll stressor "
               "also under `libminwait.so` (MINWAIT_US=200). stress-ng's "
               "own figures, in guest time; a run that breaks the kernel "
               "fails the whole bench (qemu/run looks for splats).", "")
        self.w("| tool | run | stressor | exit status | bogo ops | real s "
               "| bogo ops/s (real) |", "|---|---|---|---|---|---|---|")
        seen = []
        for r in st:
            key = (r.get("tool"), r.get("run"), r.get("stressor"))
            if r.get("tool") != "stress-ng" or key in seen:
                continue
            seen.append(key)
            rs = self.db.select(suite="stress", tool="stress-ng",
                                run=key[1], stressor=key[2])
            status = "/".join(sorted({x.get("status") for x in rs}))
            if any("skipped" in x for x in rs):
                self.w(f"| stress-ng | {key[1]} | {key[2]} | {status} | "
                       f"skipped: {rs[0]['skipped'].replace('-', ' ')} | | |")
                continue
            self.w(f"| stress-ng | {key[1]} | {key[2]} | {status} | "
                   f"{cell(rs, 'bogo_ops', 0)} | {cell(rs, 'real_s', 2)} | "
                   f"{cell(rs, 'ops_per_s', 1, True)} |")
        self.w("")
        wait = self.db.select(suite="stress", tool="perf-bench-epoll-wait")
        ctl = self.db.select(suite="stress", tool="perf-bench-epoll-ctl")
        if wait or ctl:
            self.w("`perf bench epoll` (Debian's linux-perf), one thread:",
                   "")
            if wait:
                self.w(f"- `wait`: {cell(wait, 'ops_per_s', 0, True)} "
                       "operations/s")
            if ctl:
                self.w(f"- `ctl`: ADD {cell(ctl, 'add_ops', 0, True)}, "
                       f"MOD {cell(ctl, 'mod_ops', 0, True)}, DEL "
                       f"{cell(ctl, 'del_ops', 0, True)} operations per run")
        after = self.db.select(suite="stress", tool="counters-after")
        if after:
            self.w("- the module's counters after the stress runs: " +
                   ", ".join(sorted({f"`{r.get('counters')}`"
                                     for r in after})))
        self.w("")

    # -- 4. NUMA ---------------------------------------------------------------

    def numa(self):
        self.w("## 4. NUMA balancing per process", "")
        numa = self.db.select(suite="numa")
        if not numa:
            self.w("Missing: no bench_numa results.", "")
            return
        r0 = numa[0]
        self.w(f"`bench_numa`: {r0.get('mib')} MiB first touched under "
               "`MPOL_BIND` to node 1 (the memory-only node), then used "
               f"from CPU 0 (node 0) for {r0.get('seconds')} s of guest "
               "time; kernel.numa_balancing=1, scan delay and minimum "
               "period 100 ms; kernel C. DISABLED is "
               "`prctl(PR_NUMA_BALANCING, PR_SET_NUMA_BALANCING_DISABLED)`."
               " Hint faults and migrations are the guest's /proc/vmstat "
               "deltas. Median [min..max] over the rounds.", "")
        self.w("Latency probe: one timed touch per page, page after page "
               "(clock_gettime around each). In guest time a touch is the "
               "instructions it ran: the floor is the clock reads, a hint "
               "fault or a migration adds its kernel path.", "")
        self.w("| mode | accesses | > 10 us | p50 ns | p99 ns | p99.9 ns | "
               "p99.99 ns | max us | hint faults | pages migrated | pages "
               "on node 0 at the end |",
               "|---|---|---|---|---|---|---|---|---|---|---|")
        qk = ("acc_p50_ns", "acc_p99_ns", "acc_p999_ns", "acc_p9999_ns")
        probe = {}
        for mode in ("default", "disabled"):
            rs = self.db.select(suite="numa", test="probe", mode=mode)
            if not rs:
                continue
            probe[mode] = rs
            self.w(f"| {mode.upper()} | {cell(rs, 'accesses', 0)} | "
                   f"{cell(rs, 'over_10us', 0)} | " +
                   " | ".join(cell(rs, k, 0, True) for k in qk) +
                   f" | {cell(rs, 'acc_max_us', 1, True)} | "
                   f"{cell(rs, 'hint_faults', 0)} | "
                   f"{cell(rs, 'pages_migrated', 0)} | "
                   f"{cell(rs, 'pages_on_home_node', 0)} of "
                   f"{r0.get('pages')} |")
        if len(probe) == 2:
            lines = []
            for i, (k, label) in enumerate(zip(qk + ("acc_max_us",),
                                               ("p50", "p99", "p99.9",
                                                "p99.99", "max"))):
                scale = 1000 if k == "acc_max_us" else 1
                row = [str(i), label]
                for mode in ("default", "disabled"):
                    lo, hi = rng(probe[mode], k)
                    row += [f"{med(probe[mode], k) * scale:.0f}",
                            f"{lo * scale:.0f}", f"{hi * scale:.0f}"]
                lines.append(" ".join(row))
            self.dat_file("bench-numa-probe.dat", lines)
        self.w("", "![per-access time quantiles](bench-numa-probe.png)", "")
        self.w("Memory-bound job on the wrong node (sum and write back the "
               "whole set, pass after pass). Without a cache model remote "
               "memory is as fast as local, so migration cannot pay off "
               "here: what shows is the instruction cost of DEFAULT's "
               "hint faults and migrations, not its win on real NUMA "
               "hardware.", "")
        self.w("| mode | MiB/s (guest time) | hint faults | pages migrated "
               "| pages on node 0 at the end |", "|---|---|---|---|---|")
        for mode in ("default", "disabled"):
            rs = self.db.select(suite="numa", test="stream", mode=mode)
            if rs:
                self.w(f"| {mode.upper()} | {cell(rs, 'mib_per_s', 1, True)}"
                       f" | {cell(rs, 'hint_faults', 0)} | "
                       f"{cell(rs, 'pages_migrated', 0)} | "
                       f"{cell(rs, 'pages_on_home_node', 0)} of "
                       f"{r0.get('pages')} |")
        self.w("")

    def write(self, path):
        self.intro()
        start = len(self.md)
        self.method()
        self.unused()
        self.rr()
        self.step()
        self.servers()
        self.nginx()
        self.stress()
        self.numa()
        self.md[start:start] = self.results_first()
        text = "\n".join(self.md).rstrip("\n") + "\n"
        with open(path, "w") as f:
            f.write(text)


def main():
    if len(sys.argv) != 4:
        print(f"usage: {sys.argv[0]} RAW_DIR MD_FILE DAT_DIR", file=sys.stderr)
        sys.exit(2)
    raw, md, dat = sys.argv[1:]
    Report(raw, dat).write(md)


if __name__ == "__main__":
    main()
