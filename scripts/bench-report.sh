#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the BENCH lines that scripts/bench.sh collected into a markdown
# report (results.md) and gnuplot PNGs (bench-unused.png,
# bench-minwait-sweep.png, bench-numa-probe.png).
#
#   scripts/bench-report.sh --raw DIR --hooks FILE --command CMD --out DIR
#
# Every number is a median over the interleaved rounds; the unused-cost
# ratios are paired by round (kernel K in round r over stock in round r)
# and shown with their min..max over the rounds.
set -euo pipefail

usage() {
	echo "usage: $0 --raw DIR --hooks FILE --command CMD --out DIR" >&2
}

raw="" hooks="" command="" out=""
while (($#)); do
	case "$1" in
	--raw) raw="$2"; shift 2 ;;
	--hooks) hooks="$2"; shift 2 ;;
	--command) command="$2"; shift 2 ;;
	--out) out="$2"; shift 2 ;;
	*) usage; exit 64 ;;
	esac
done
[[ -d $raw && -r $hooks && -n $command && -n $out ]] || { usage; exit 64; }
command -v gnuplot >/dev/null || { echo "$0: gnuplot missing (apt-get install gnuplot-nox)" >&2; exit 1; }

mkdir -p "$out"
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB, host kernel $(uname -r), $(qemu-system-x86_64 --version | head -n1)"

python3 - "$raw" "$hooks" "$command" "$out" "$machine" "$(date -u '+%Y-%m-%d %H:%M UTC')" <<'PY'
import glob
import math
import os
import statistics
import subprocess
import sys

raw, hooks, command, out, machine, date = sys.argv[1:7]

rows = []
for path in sorted(glob.glob(os.path.join(raw, "*.txt"))):
    with open(path) as f:
        for line in f:
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            rows.append(kv)


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def select(**want):
    return [r for r in rows if all(r.get(k) == v for k, v in want.items())]


def med(rs, key):
    vals = [num(r.get(key)) for r in rs]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def spread(rs, key):
    vals = [num(r.get(key)) for r in rs]
    vals = [v for v in vals if v is not None]
    return (min(vals), max(vals)) if vals else (None, None)


def fmt(v, digits=1):
    if v is None:
        return "n/a"
    return f"{v:.{digits}f}"


md = []
w = md.append
w("# Benchmarks\n")
w(f"Command: `{command}`  ")
w(f"Date: {date}  ")
w(f"Machine: {machine}  ")
w("Guest: `qemu/run --cpus 2 --nodes 2 --mem 1G` (one vCPU per NUMA node), "
  "TCG, the same initramfs for every boot.\n")
w("**Under TCG guest time is emulated**: QEMU translates guest code, so "
  "absolute times are many times those of real hardware and move with the "
  "host's load. Counts (context switches, faults, epoll_wait calls, "
  "events per call, hint faults, migrations) are what the guest kernel "
  "did and are exact; times are best read as ratios between kernels or "
  "modes measured in the same run, interleaved. Hardware counters "
  "(instructions) do not exist under TCG: perf_event_open of "
  "PERF_COUNT_HW_INSTRUCTIONS fails in the guest, shown as n/a.\n")

info = select(suite="info")
for k, label in (("A", "stock Debian 6.1, same config, no patch"),
                 ("B", "patched, module not loaded"),
                 ("C", "patched, numab_minwait loaded, unused")):
    i = [r for r in info if r.get("kernel") == k]
    if i:
        r = i[0]
        w(f"- **{k}** {label}: release `{r.get('kernel')}`, "
          f"numa_balancing={r.get('numa_balancing')}, module "
          f"{r.get('module')}, counters `{r.get('counters')}`")
w("")

# --- 1. cost when unused ------------------------------------------------
w("## 1. Cost when unused\n")
tests = ["pipe", "pingpong", "getppid", "fork", "execl", "epoll", "fault",
         "cpuloop"]
desc = {
    "pipe": "pipe throughput (512 B write+read)",
    "pingpong": "pipe ping-pong, 2 processes, 1 CPU",
    "getppid": "getppid syscall",
    "fork": "fork + _exit + waitpid",
    "execl": "fork + execl + waitpid",
    "epoll": "epoll_wait(-1), always-ready eventfd",
    "fault": "page fault (mmap, touch, munmap)",
    "cpuloop": "CPU loop, NUMA balancing on (tick path)",
}
unused = select(suite="unused")
rounds = sorted({r["round"] for r in unused}, key=int)
w(f"{len(rounds)} rounds, each booting A, B, C in turn; every test pinned "
  f"to CPU 0 with a fixed iteration count, best of {unused[0].get('repeats')} within a boot. "
  "Ratio = time per op of the "
  "kernel over stock's in the same round; median [min..max] over the "
  "rounds, as a change in percent (+ is slower). A's own spread is "
  "(max-min)/median of its times over the rounds: the noise floor. "
  "A slow phase of the host that spans one boot but not the next moves "
  "the per-round ratios; the ratio of the kernels' medians over the "
  "rounds (last two columns) is less sensitive to one such round.\n")
w("| test | ctx sw/op A / B / C | faults/op A / B / C | A time/op (median) "
  "| A spread | B vs A | C vs A | B/A of medians | C/A of medians |")
w("|---|---|---|---|---|---|---|---|---|")
ratio_meds = {"B": [], "C": []}
med_ratios = {"B": [], "C": []}
plot_rows = []
for t in tests:
    per = {k: select(suite="unused", test=t, kernel=k) for k in "ABC"}
    if not per["A"]:
        continue
    cs = " / ".join(fmt(med(per[k], "cs_per_op"), 3) for k in "ABC")
    fl = " / ".join(fmt(med(per[k], "faults_per_op"), 3) for k in "ABC")
    a_med = med(per["A"], "ns_per_op")
    lo, hi = spread(per["A"], "ns_per_op")
    cells = []
    plot = [t]
    for k in "BC":
        ratios = []
        for rnd in rounds:
            a = [num(r["ns_per_op"]) for r in per["A"] if r["round"] == rnd]
            b = [num(r["ns_per_op"]) for r in per[k] if r["round"] == rnd]
            if a and b:
                ratios.append(b[0] / a[0])
        if not ratios:
            cells.append("n/a")
            plot += ["0", "0", "0"]
            continue
        m = statistics.median(ratios)
        ratio_meds[k].append(m)
        cells.append(f"{(m - 1) * 100:+.2f}% [{(min(ratios) - 1) * 100:+.1f}.."
                     f"{(max(ratios) - 1) * 100:+.1f}]")
        plot += [f"{(m - 1) * 100:.3f}", f"{(min(ratios) - 1) * 100:.3f}",
                 f"{(max(ratios) - 1) * 100:.3f}"]
    plot_rows.append(plot)
    of_meds = []
    for k in "BC":
        k_med = med(per[k], "ns_per_op")
        if k_med and a_med:
            med_ratios[k].append(k_med / a_med)
            of_meds.append(f"{(k_med / a_med - 1) * 100:+.2f}%")
        else:
            of_meds.append("n/a")
    unit = "ns"
    w(f"| {desc[t]} | {cs} | {fl} | {fmt(a_med)} {unit} | "
      f"{(hi - lo) / a_med * 100:.1f}% | {cells[0]} | {cells[1]} | "
      f"{of_meds[0]} | {of_meds[1]} |")


def geomean_change(xs):
    if not xs:
        return "n/a"
    g = math.exp(sum(math.log(x) for x in xs) / len(xs))
    return f"{(g - 1) * 100:+.2f}%"


tot = [geomean_change(ratio_meds[k]) for k in "BC"]
tot += [geomean_change(med_ratios[k]) for k in "BC"]
w(f"| **total (geometric mean)** | | | | | **{tot[0]}** | **{tot[1]}** | "
  f"**{tot[2]}** | **{tot[3]}** |")
w("\n![time per op vs stock](bench-unused.png)\n")
with open(os.path.join(out, "bench-unused.dat"), "w") as f:
    for p in plot_rows:
        f.write(" ".join(p) + "\n")

w("### Hook sites in the built kernels (objdump)\n")
with open(hooks) as f:
    w(f.read())

# --- 2. min-wait ----------------------------------------------------------
w("## 2. The min-wait win\n")
rr = select(suite="rr")
if rr:
    r0 = rr[0]
    w(f"`bench_rr`: a server thread (epoll, {r0.get('conns')} unix "
      "socket connections) and a client thread sending requests at a "
      "steady rate, 4 s of requests per run (2 s with QUICK=1), both "
      "pinned to CPU 0: across two vCPUs, TCG's cross-CPU "
      "wakeups took tens to hundreds of milliseconds, which no server "
      "would see on hardware. Kernel C; every mode in each of the rounds "
      "(order rotated per round). Server-side counts from "
      "getrusage(RUSAGE_THREAD) of the server thread; latency measured by "
      "the client (send to echo received). Medians over the rounds; "
      "CPU/req with [min..max]. At 4000 requests/s a 200 us wait mostly "
      "ends with requests ready; at 2000/s mostly with none, where the "
      "sleep hack sleeps twice per call and a min-wait once.\n")
    w("| req/s offered | mode | req/s | epoll_wait/s | events/call | "
      "vol cs/req | invol cs/req | CPU us/req | p50 us | p99 us | "
      "p99.9 us |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    modes = [("plain", "0", "plain epoll_wait"),
             ("sleep", "200", "sleep 200us + epoll_wait"),
             ("minwait", "50", "EPOLL_CTL_MIN_WAIT 50us"),
             ("minwait", "100", "EPOLL_CTL_MIN_WAIT 100us"),
             ("minwait", "200", "EPOLL_CTL_MIN_WAIT 200us"),
             ("minwait", "500", "EPOLL_CTL_MIN_WAIT 500us")]
    rates = sorted({r["rate"] for r in rr}, key=int, reverse=True)
    meds = {}
    for rate in rates:
        for mode, us, label in modes:
            rs = select(suite="rr", rate=rate, mode=mode, wait_us=us)
            if not rs:
                continue
            meds[(rate, mode, us)] = m = {k: med(rs, k) for k in rs[0]}
            lo, hi = spread(rs, "cpu_us_per_req")
            w(f"| {rate} | {label} | {fmt(m['req_per_s'], 0)} | "
              f"{fmt(m['epoll_calls_per_s'], 0)} | "
              f"{fmt(m['events_per_call'], 2)} | "
              f"{fmt(m['vcs_per_req'], 3)} | {fmt(m['ivcs_per_req'], 3)} | "
              f"{fmt(m['cpu_us_per_req'], 2)} [{fmt(lo, 2)}..{fmt(hi, 2)}] | "
              f"{fmt(m['lat_p50_us'])} | {fmt(m['lat_p99_us'])} | "
              f"{fmt(m['lat_p999_us'])} |")
    w("")
    for rate in rates:
        s, mw = meds.get((rate, "sleep", "200")), meds.get((rate, "minwait", "200"))
        if not (s and mw):
            continue

        def change(key):
            return (mw[key] / s[key] - 1) * 100 if s[key] else float("nan")
        w(f"Min-wait 200us vs the sleep hack at {rate} requests/s: context "
          f"switches/req {change('cs_per_req'):+.1f}%, CPU/req "
          f"{change('cpu_us_per_req'):+.1f}%, p99 {change('lat_p99_us'):+.1f}%, "
          f"throughput {change('req_per_s'):+.1f}%.\n")
    sweep = rates[0]
    with open(os.path.join(out, "bench-minwait-sweep.dat"), "w") as f:
        for mode, us in (("plain", "0"), ("minwait", "50"), ("minwait", "100"),
                         ("minwait", "200"), ("minwait", "500")):
            if (sweep, mode, us) in meds:
                m = meds[(sweep, mode, us)]
                f.write(f"{us} {m['cpu_us_per_req']} {m['lat_p99_us']}\n")
    with open(os.path.join(out, "bench-minwait-sleep.dat"), "w") as f:
        s = meds.get((sweep, "sleep", "200"))
        if s:
            f.write(f"200 {s['cpu_us_per_req']} {s['lat_p99_us']}\n")
    w(f"![CPU per request and p99 against the min-wait, {sweep} requests/s]"
      "(bench-minwait-sweep.png)\n")
else:
    w("Missing: no bench_rr results.\n")

w("### memcached (unmodified, from Debian) with and without libminwait.so\n")
memc = select(suite="memc")
if memc and all("missing" not in r for r in memc):
    r0 = memc[0]
    w(f"`memcached -t 1` (one worker thread) on CPU 0, started "
      f"plain or with `LD_PRELOAD=libminwait.so MINWAIT_US=200`; "
      f"`bench_memc` (a small static client: `get` of 100 stored keys "
      f"over {r0.get('conns')} unix-socket connections, "
      f"{r0.get('rate')} requests/s, {r0.get('requests')} per run) also on "
      "CPU 0. Server counts are all memcached threads, from "
      "/proc/PID/task/*/{stat,status}; its CPU time has clock-tick "
      "(4 ms) resolution. Kernel C, medians over the rounds.\n")
    w("| memcached | req/s | vol cs/req | invol cs/req | CPU us/req | "
      "p50 us | p99 us | p99.9 us |")
    w("|---|---|---|---|---|---|---|---|")
    for shim, label in (("none", "plain"), ("minwait200", "libminwait.so, 200us")):
        rs = select(suite="memc", shim=shim)
        if rs:
            w(f"| {label} | {fmt(med(rs, 'req_per_s'), 0)} | "
              f"{fmt(med(rs, 'server_vcs_per_req'), 3)} | "
              f"{fmt(med(rs, 'server_ivcs_per_req'), 3)} | "
              f"{fmt(med(rs, 'server_cpu_us_per_req'), 2)} | "
              f"{fmt(med(rs, 'lat_p50_us'))} | {fmt(med(rs, 'lat_p99_us'))} | "
              f"{fmt(med(rs, 'lat_p999_us'))} |")
    w("")
else:
    w("Missing: memcached did not run in the guest.\n")

# --- 3. NUMA ----------------------------------------------------------------
w("## 3. NUMA balancing per process\n")
numa = select(suite="numa")
if numa:
    r0 = numa[0]
    w(f"`bench_numa`: {r0.get('mib')} MiB first touched from CPU 1 (node 1), "
      f"then used from CPU 0 (node 0) for {r0.get('seconds')} s; "
      "kernel.numa_balancing=1, scan delay and minimum period 100 ms; "
      "kernel C. DISABLED is `prctl(PR_NUMA_BALANCING, "
      "PR_SET_NUMA_BALANCING_DISABLED)`. Hint faults and migrations are "
      "the guest's /proc/vmstat deltas (nothing else runs). Medians over "
      "the rounds.\n")
    w("Latency probe: one timed touch per page, page after page "
      "(clock_gettime around each; the floor is TCG's clock read).\n")
    w("| mode | accesses | > 10 us | > 100 us | p50 ns | p99 ns | p99.9 ns "
      "| p99.99 ns | max us | hint faults | pages migrated "
      "| pages on node 0 at the end |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    probe = {}
    for mode in ("default", "disabled"):
        rs = select(suite="numa", test="probe", mode=mode)
        if not rs:
            continue
        q = [med(rs, k) for k in ("acc_p50_ns", "acc_p99_ns",
                                  "acc_p999_ns", "acc_p9999_ns")]
        mx = med(rs, "acc_max_us")
        probe[mode] = q + [mx * 1000]
        w(f"| {mode.upper()} | {fmt(med(rs, 'accesses'), 0)} | "
          f"{fmt(med(rs, 'over_10us'), 0)} | {fmt(med(rs, 'over_100us'), 0)} | "
          + " | ".join(fmt(v, 0) for v in q) +
          f" | {fmt(mx)} | {fmt(med(rs, 'hint_faults'), 0)} | "
          f"{fmt(med(rs, 'pages_migrated'), 0)} | "
          f"{fmt(med(rs, 'pages_on_home_node'), 0)} of {r0.get('pages')} |")
    if len(probe) == 2:
        with open(os.path.join(out, "bench-numa-probe.dat"), "w") as f:
            for i, label in enumerate(("p50", "p99", "p99.9", "p99.99",
                                       "max")):
                f.write(f"{label} {probe['default'][i]} "
                        f"{probe['disabled'][i]}\n")
    w("\n![per-access time quantiles](bench-numa-probe.png)\n")
    w("Memory-bound job on the wrong node (sum and write back the whole set, "
      "pass after pass). QEMU gives remote memory the same speed as local "
      "memory, so migration cannot pay off here: what shows is only the "
      "cost side (hint faults, migrations) of DEFAULT, not its win on real "
      "NUMA hardware.\n")
    w("| mode | MiB/s | hint faults | pages migrated | pages on node 0 at the end |")
    w("|---|---|---|---|---|")
    for mode in ("default", "disabled"):
        rs = select(suite="numa", test="stream", mode=mode)
        if rs:
            lo, hi = spread(rs, "mib_per_s")
            w(f"| {mode.upper()} | {fmt(med(rs, 'mib_per_s'))} "
              f"[{fmt(lo)}..{fmt(hi)}] | {fmt(med(rs, 'hint_faults'), 0)} | "
              f"{fmt(med(rs, 'pages_migrated'), 0)} | "
              f"{fmt(med(rs, 'pages_on_home_node'), 0)} of {r0.get('pages')} |")
    w("")
else:
    w("Missing: no bench_numa results.\n")

with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(md) + "\n")
PY

# The plots: each from the .dat files written above, when there is data.
cd "$out"
if [[ -s bench-unused.dat ]]; then
	gnuplot <<'GP'
set terminal pngcairo size 900,450 font ",10" noenhanced
set output "bench-unused.png"
set title "Time per op vs stock (median, min..max over rounds); under TCG"
set ylabel "change vs stock (%)"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set xtics rotate by -30
set grid ytics
set key top left
plot "bench-unused.dat" using 2:3:4:xtic(1) title "B patched, no module", \
     "" using 5:6:7 title "C patched + module, unused"
GP
fi
if [[ -s bench-minwait-sweep.dat ]]; then
	gnuplot <<'GP'
set terminal pngcairo size 900,450 font ",10" noenhanced
set output "bench-minwait-sweep.png"
set title "bench_rr at 4000 requests/s: server CPU per request and p99 (median over rounds; under TCG)"
set xlabel "EPOLL_CTL_MIN_WAIT (us); 0 = plain epoll_wait"
set ylabel "server CPU per request (us)"
set y2label "request latency p99 (us)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set key below
plot "bench-minwait-sweep.dat" using 1:2 with linespoints lw 2 pt 7 title "CPU/req, min-wait", \
     "" using 1:3 axes x1y2 with linespoints lw 2 pt 5 dt 2 title "p99, min-wait", \
     "bench-minwait-sleep.dat" using 1:2 with points pt 9 ps 2 title "CPU/req, sleep 200us hack", \
     "" using 1:3 axes x1y2 with points pt 11 ps 2 title "p99, sleep 200us hack"
GP
fi
if [[ -s bench-numa-probe.dat ]]; then
	gnuplot <<'GP'
set terminal pngcairo size 900,450 font ",10" noenhanced
set output "bench-numa-probe.png"
set title "Per-access time of a working set on the other node (median over rounds; under TCG)"
set ylabel "ns (log scale)"
set logscale y
set style data histogram
set style histogram clustered gap 2
set style fill solid 0.6 border -1
set grid ytics
set key top left
plot "bench-numa-probe.dat" using 2:xtic(1) title "DEFAULT", \
     "" using 3 title "DISABLED"
GP
fi
