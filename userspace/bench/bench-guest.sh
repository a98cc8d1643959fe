#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest bench driver: runs one suite of the bench programs (next to this
# script, /opt/bench) and prints one "BENCH suite=S key=value..." line per
# measurement, for bench.sh to collect. Never loads a module: the
# host boots kernel C with qemu/run --preload. Made for a one-vCPU guest
# under qemu/run --icount (guest time = instructions): every program runs
# on CPU 0.
#
#   bench-guest.sh info|unused|epcall|rr|step|memc|redis|nginx|stress|numa
#                  [--quick]
#
# info    kernel release, NUMA balancing, whether the module is loaded and
#         its counters (no process may be using either feature)
# unused  each bench_unused test, best of 5 (--quick: 3)
# epcall  bench_epcall: one epoll_wait() that returns at once, plain and
#         with a minimum wait
# rr      bench_rr (8 connections): with a paced client, the min-wait sweep
#         at 4000 requests/s, the modes at 2000/s, and plain, sleep hack
#         and min-wait at 5000, 20000 and 40000/s; with Poisson arrivals,
#         the modes at 2000/s and the batch-target sweep at 4000/s; in an
#         order that rotates with $BENCH_ROUND
# step    bench_rr (8 connections, paced) under a step load: 500 ms at
#         2000 requests/s, 500 ms at 40000, 500 ms at 2000 (--quick: 200
#         ms each); plain, sleep hack, fixed and adaptive min-wait; one line
#         per 20 ms window besides the run's
# memc    memcached (one worker thread) driven by bench_memc at 2000/s
# redis   redis-server driven by redis-benchmark (8, then 32 clients, GET
#         and SET)
# nginx   nginx (one process, one worker connection loop) on the guest's
#         loopback, driven by wrk -t1 -c8 (a closed loop of 8 connections)
#         memc, redis and nginx: without libminwait.so, and with it in each
#         mode
# stress  stress-ng's epoll, prctl and numa stressors (plain, and in a
#         process whose NUMA mode is ENABLED; epoll also under libminwait.so),
#         and perf bench epoll wait/ctl; then the module's counters
# numa    bench_numa probe and stream, DEFAULT and DISABLED, working set
#         first placed on node 1 and used from CPU 0 (node 0)
set -euo pipefail

BIN=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
readonly BIN
readonly LIBMINWAIT=/opt/numab/lib/libminwait.so
readonly MEMC_SOCK=/run/bench-memcached.sock
readonly REDIS_SOCK=/run/bench-redis.sock
readonly NGINX_DIR=/tmp/bench-nginx
readonly NGINX_PORT=8080
readonly NUMA_DEBUGFS=/sys/kernel/debug/sched/numa_balancing
readonly COUNTERS=/sys/kernel/debug/numab_minwait/counters
# libminwait.so's modes, as "label env...": every server runs in each.
readonly SHIMS=(
	"none"
	"minwait200 MINWAIT_US=200"
	"minwait200-first MINWAIT_US=200 MINWAIT_FLAGS=after-first"
	"minwait200-k8 MINWAIT_US=200 MINWAIT_EVENTS=8"
	"minwait200-adaptive MINWAIT_US=200 MINWAIT_FLAGS=adaptive"
)

suite=${1:-}
quick=0
case ${2:-} in
"") ;;
--quick) quick=1 ;;
*) echo "$0: unknown option '$2'" >&2; exit 2 ;;
esac
round=${BENCH_ROUND:-0}

# scale FULL QUICK: the iteration count for this mode.
scale() {
	if ((quick)); then echo "$2"; else echo "$1"; fi
}

emit() {
	printf 'BENCH suite=%s round=%s %s\n' "$suite" "$round" "$*"
}

# rotate N ITEMS...: ITEMS starting at index N modulo their count.
rotate() {
	local n=$1
	shift
	local items=("$@") i
	for ((i = 0; i < ${#items[@]}; i++)); do
		printf '%s\n' "${items[(i + n) % ${#items[@]}]}"
	done
}

counters() {
	local c=none
	[[ -r $COUNTERS ]] && c=$(tr '\n ' ',=' < "$COUNTERS") && c=${c%,}
	echo "$c"
}

suite_info() {
	local loaded=no
	[[ -d /sys/module/numab_minwait ]] && loaded=yes
	emit "kernel=$(uname -r) numa_balancing=$(cat /proc/sys/kernel/numa_balancing)" \
		"nodes_online=$(cat /sys/devices/system/node/online)" \
		"nodes_with_cpus=$(cat /sys/devices/system/node/has_cpu)" \
		"cpus=$(nproc) module=$loaded counters=$(counters)" \
		"clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
}

suite_unused() {
	local tests=(
		"pipe 30000"
		"pingpong 5000"
		"getppid 300000"
		"fork 1000"
		"execl 200"
		"epoll 200000"
		"epollpp 5000"
		"fault 16384"
		"cpuloop 100000000"
	)
	local t repeats
	repeats=$(scale 5 3)
	for t in "${tests[@]}"; do
		# shellcheck disable=SC2086 # "name iters"
		emit "$("$BIN/bench_unused" $t 0 "$repeats")"
	done
}

suite_epcall() {
	local spec iters
	iters=$(scale 100000 50000)
	# "[-k K] ITEMS MAXEVENTS MODE": each call returns at once (its batch
	# target, maxevents or K, is ready).
	while read -r spec; do
		# shellcheck disable=SC2086 # options and words
		emit "$("$BIN/bench_epcall" $spec 200 "$iters" 3)"
	done < <(rotate "$round" "1 1 plain" "1 1 minwait" "1 1 minwait-first" \
		"8 8 plain" "8 8 minwait" "8 8 minwait-first" \
		"2 8 plain" "-k 2 2 8 minwait" "-k 2 2 8 minwait-first")
}

suite_rr() {
	local conns=8 rate spec seconds rates=() i
	seconds=$(scale 2 1)
	# CPU per request at these rates moves by a few percent with the run's
	# phase against the 4 ms tick: each mode runs three times (--quick: once).
	for ((i = 0; i < $(scale 3 1); i++)); do
		for rate in 5000 20000 40000; do
			rates+=("$rate plain 0" "$rate sleep 200" "$rate minwait 200"
				"$rate minwait-adaptive 200")
		done
		# The same server watching edge-triggered: no level-triggered
		# items left on the ready list for the next call to re-check.
		for rate in 20000 40000; do
			rates+=("$rate -e plain 0" "$rate -e sleep 200"
				"$rate -e minwait 200")
		done
	done
	# Not measured: the first run of a boot warms what the others find warm.
	"$BIN/bench_rr" plain 0 "$conns" 20000 20000 > /dev/null
	# "RATE [-p] [-e] [-k K] MODE WAIT_US" (-p: Poisson arrivals, -e:
	# edge-triggered)
	while read -r rate spec; do
		# shellcheck disable=SC2086 # options and words
		emit "$("$BIN/bench_rr" $spec "$conns" "$rate" \
			"$((rate * seconds))")"
	done < <(rotate "$round" \
		"4000 plain 0" "4000 sleep 200" "4000 minwait 50" \
		"4000 minwait 100" "4000 minwait 200" "4000 minwait 500" \
		"2000 plain 0" "2000 sleep 200" "2000 minwait 200" \
		"2000 minwait-first 200" "2000 minwait-adaptive 200" \
		"${rates[@]}" \
		"2000 -p plain 0" "2000 -p sleep 200" "2000 -p minwait 200" \
		"2000 -p minwait-first 200" "2000 -p minwait-adaptive 200" \
		"4000 -p plain 0" "4000 -p sleep 200" "4000 -p minwait 200" \
		"4000 -p minwait-adaptive 200" \
		"4000 -p -k 2 minwait 200" "4000 -p -k 4 minwait 200" \
		"4000 -p -k 8 minwait 200" "4000 -p minwait-first 200" \
		"4000 -p -k 2 minwait-first 200" \
		"4000 -p -k 4 minwait-first 200" \
		"4000 -p -k 8 minwait-first 200")
}

suite_step() {
	local spec out line
	while read -r spec; do
		# shellcheck disable=SC2086 # "MODE WAIT_US"
		out=$("$BIN/bench_rr" -s 40000 $spec 8 2000 "$(scale 1000 400)")
		while read -r line; do
			emit "$line"
		done <<< "$out"
	done < <(rotate "$round" "plain 0" "sleep 200" "minwait 200" \
		"minwait-adaptive 200")
}

# wait_socket PATH: until PATH is a socket (5 s at most).
wait_socket() {
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -S $1 ]] && return 0
		sleep 0.1
	done
	echo "bench-guest: no socket $1" >&2
	return 1
}

# shim_refused FILE: 1 when libminwait.so warned in FILE, the server's
# stderr (the kernel refused its settings: the server ran without them).
shim_refused() {
	if grep -q '^libminwait:' "$1"; then echo 1; else echo 0; fi
}

# memc_run LABEL [ENV...]: one memcached run, started with ENV.
memc_run() {
	local label=$1 pid out err=/tmp/memcached.err
	shift
	rm -f -- "$MEMC_SOCK"
	[[ $label == none ]] || set -- LD_PRELOAD="$LIBMINWAIT" "$@"
	env "$@" memcached -u root -t 1 -m 64 -s "$MEMC_SOCK" 2> "$err" &
	pid=$!
	wait_socket "$MEMC_SOCK"
	out=$("$BIN/bench_memc" "$MEMC_SOCK" "$pid" 8 2000 "$(scale 8000 4000)" 0)
	kill "$pid"
	wait "$pid" || true
	emit "server=memcached shim=$label shim_refused=$(shim_refused "$err") $out"
}

# redis_run CLIENTS LABEL [ENV...]: one redis-server run, started with
# ENV, and redis-benchmark's own figures with CLIENTS connections (CSV:
# test, rps, avg, min, p50, p95, p99, max latency in ms) beside the
# server's counters over the benchmark.
redis_run() {
	local clients=$1 label=$2 pid before after csv err=/tmp/redis.err
	local requests
	shift 2
	requests=$(scale 20000 10000)
	rm -f -- "$REDIS_SOCK"
	[[ $label == none ]] || set -- LD_PRELOAD="$LIBMINWAIT" "$@"
	env "$@" redis-server --port 0 --unixsocket "$REDIS_SOCK" --save '' \
		--appendonly no > /dev/null 2> "$err" &
	pid=$!
	wait_socket "$REDIS_SOCK"
	before=$("$BIN/bench_procstat" "$pid")
	csv=$(redis-benchmark -s "$REDIS_SOCK" -c "$clients" -n "$requests" \
		-t set,get --csv)
	after=$("$BIN/bench_procstat" "$pid")
	kill "$pid"
	wait "$pid" || true
	# Per test: its figures; the server's counters cover both tests.
	local test rps avg p50 p95 p99 max
	while IFS=, read -r test rps avg _ p50 p95 p99 max; do
		[[ $test == '"test"' ]] && continue
		emit "server=redis shim=$label shim_refused=$(shim_refused "$err")" \
			"test=${test//\"/} clients=$clients requests=$requests" \
			"rps=${rps//\"/} lat_avg_ms=${avg//\"/} lat_p50_ms=${p50//\"/}" \
			"lat_p95_ms=${p95//\"/} lat_p99_ms=${p99//\"/}" \
			"lat_max_ms=${max//\"/} server_requests=$((requests * 2))" \
			"server_before=${before// /,} server_after=${after// /,}"
	done <<< "$csv"
}

# listens_on PID PORT: whether a socket of PID listens on 127.0.0.1:PORT
# (read from /proc, as the guest has no ss or netstat): a stray server
# on the port would be measured instead.
listens_on() {
	local pid=$1 hex inode fd
	hex=$(printf '0100007F:%04X' "$2")
	while read -r inode; do
		for fd in "/proc/$pid/fd/"*; do
			[[ $(readlink "$fd" 2> /dev/null) == "socket:[$inode]" ]] &&
				return 0
		done
	done < <(awk -v a="$hex" '$2 == a && $4 == "0A" { print $10 }' \
		/proc/net/tcp)
	return 1
}

# wait_listen PID PORT: until PID listens on PORT (5 s at most); fails at
# once if PID has exited.
wait_listen() {
	local i
	for ((i = 0; i < 50; i++)); do
		listens_on "$1" "$2" && return 0
		kill -0 "$1" 2> /dev/null || return 1
		sleep 0.1
	done
	return 1
}

# nginx_conf: one process serving a fixed 3-byte body from memory, nothing
# written per request, every path it would write under $NGINX_DIR. Run
# as root, nginx looks up its default user (www-data), which the guest
# has not: it is told to stay root.
nginx_conf() {
	local d=$NGINX_DIR
	mkdir -p "$d"
	cat > "$d/nginx.conf" <<CONF
daemon off;
master_process off;
user root;
worker_processes 1;
error_log stderr warn;
pid $d/nginx.pid;
events { worker_connections 64; use epoll; }
http {
	access_log off;
	client_body_temp_path $d/body;
	proxy_temp_path $d/proxy;
	fastcgi_temp_path $d/fastcgi;
	uwsgi_temp_path $d/uwsgi;
	scgi_temp_path $d/scgi;
	server {
		listen 127.0.0.1:$NGINX_PORT;
		location / { return 200 "ok\\n"; }
	}
}
CONF
}

# nginx_run CONNS LABEL [ENV...]: one nginx run, started with ENV, and
# wrk's figures with CONNS connections (requests, requests/s, latency
# percentiles in us, errors) beside the server's counters over the run.
# A run that cannot be made (nginx did not start, wrk failed or printed
# no figures) is a line saying so, and the other runs go on.
nginx_run() {
	local conns=$1 label=$2 pid before after out figures err=/tmp/nginx.err
	local seconds rc=0
	shift 2
	seconds=$(scale 2 1)
	[[ $label == none ]] || set -- LD_PRELOAD="$LIBMINWAIT" "$@"
	env "$@" nginx -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e stderr \
		2> "$err" &
	pid=$!
	if ! wait_listen "$pid" "$NGINX_PORT"; then
		kill "$pid" 2> /dev/null || true
		wait "$pid" || true
		echo "bench-guest: nginx did not listen: $(cat "$err")" >&2
		emit "server=nginx shim=$label conns=$conns failed=nginx-start"
		return 0
	fi
	before=$("$BIN/bench_procstat" "$pid")
	out=$(wrk -t1 -c "$conns" -d "${seconds}s" --latency \
		"http://127.0.0.1:$NGINX_PORT/") || rc=$?
	after=$("$BIN/bench_procstat" "$pid")
	kill "$pid"
	wait "$pid" || true
	figures=$(awk '
		function us(v) {
			if (v ~ /us$/) return v + 0
			if (v ~ /ms$/) return v * 1000
			return v * 1000000
		}
		$1 == "50%" { p50 = us($2) }
		$1 == "99%" { p99 = us($2) }
		$2 == "requests" && $3 == "in" { n = $1 }
		$1 == "Requests/sec:" { rps = $2 }
		/Socket errors:/ { gsub(/,/, ""); errs = $4 + $6 + $8 + $10 }
		/Non-2xx/ { bad = $NF }
		END {
			if (!n || rps == "" || p99 == "") exit 1
			printf "requests=%s rps=%s lat_p50_us=%s lat_p99_us=%s", \
				n, rps, p50, p99
			printf " socket_errors=%d non2xx=%d", errs, bad
		}' <<< "$out") || rc=1
	if ((rc)); then
		echo "bench-guest: wrk failed ($rc): $out" >&2
		emit "server=nginx shim=$label conns=$conns failed=wrk"
		return 0
	fi
	emit "server=nginx shim=$label shim_refused=$(shim_refused "$err")" \
		"conns=$conns seconds=$seconds $figures" \
		"server_before=${before// /,} server_after=${after// /,}"
}

suite_memc() {
	local shim
	while read -r shim; do
		# shellcheck disable=SC2086 # "label env..."
		memc_run $shim
	done < <(rotate "$round" "${SHIMS[@]}")
}

# A closed loop of 8 clients, and of 32: more than a fixed batch target
# of 8 expects.
suite_redis() {
	local shim clients
	for clients in 8 32; do
		while read -r shim; do
			# shellcheck disable=SC2086 # "label env..."
			redis_run "$clients" $shim
		done < <(rotate "$round" "${SHIMS[@]}")
	done
}

# The issue's load: wrk -t1 -c8, a closed loop of 8 connections over the
# loopback, which the guest brings up itself.
suite_nginx() {
	local shim
	busybox ip link set lo up
	nginx_conf
	while read -r shim; do
		# shellcheck disable=SC2086 # "label env..."
		nginx_run 8 $shim
	done < <(rotate "$round" "${SHIMS[@]}")
}

# stress_run LABEL STRESSOR OPS [WRAPPER...]: one stress-ng stressor; its
# own metrics line (bogo ops, real/usr/sys seconds, bogo ops/s) or why it
# skipped.
stress_run() {
	local label=$1 stressor=$2 ops=$3 out metrics rc=0
	shift 3
	out=$("$@" stress-ng "--$stressor" 1 "--$stressor-ops" "$ops" \
		--metrics-brief 2>&1) || rc=$?
	metrics=$(awk -v s="$stressor" '$2 == "metrc:" && $4 == s {
		printf "bogo_ops=%s real_s=%s usr_s=%s sys_s=%s ops_per_s=%s",
			$5, $6, $7, $8, $9 }' <<< "$out")
	# stress-ng's reason, e.g. "numa: no NUMA nodes found, skipping test".
	[[ -n $metrics ]] || metrics="skipped=$(grep -m1 'skipping' <<< "$out" |
		sed 's/.*\] [a-z-]*: //; s/[^A-Za-z0-9]\{1,\}/-/g')"

	emit "tool=stress-ng run=$label stressor=$stressor status=$rc $metrics"
}

suite_stress() {
	local stressor ops
	for stressor in "epoll $(scale 4000 2000)" "prctl $(scale 1000 500)" \
		"numa $(scale 20 10)"; do
		# shellcheck disable=SC2086 # "name ops"
		{
			stress_run plain $stressor
			stress_run numa-enabled $stressor numab-run --enable --
		}
	done
	ops=$(scale 4000 2000)
	stress_run minwait200 epoll "$ops" env LD_PRELOAD="$LIBMINWAIT" \
		MINWAIT_US=200
	local out
	out=$(perf bench epoll wait -t 1 -r "$(scale 2 1)" 2>&1)
	emit "tool=perf-bench-epoll-wait threads=1" \
		"$(awk '/^Averaged/ { gsub(/[%),]/, "", $5)
			printf "ops_per_s=%s spread_pct=%s", $2, $5 }' <<< "$out")"
	out=$(perf bench epoll ctl -t 1 -r "$(scale 2 1)" 2>&1)
	emit "tool=perf-bench-epoll-ctl threads=1" \
		"$(awk '/^Averaged/ { printf "%s_ops=%s ", tolower($3), $2 }' <<< "$out")"
	emit "tool=counters-after counters=$(counters)"
}

suite_numa() {
	local mib=64 seconds mode test
	seconds=$(scale 3 2)
	echo 1 > /proc/sys/kernel/numa_balancing
	# Scan soon and often, so that a few seconds show the steady state.
	echo 100 > "$NUMA_DEBUGFS/scan_delay_ms"
	echo 100 > "$NUMA_DEBUGFS/scan_period_min_ms"
	for test in probe stream; do
		while read -r mode; do
			emit "$("$BIN/bench_numa" "$test" "$mode" "$mib" "$seconds" 0 1)"
		done < <(rotate "$round" default disabled)
	done
}

case $suite in
	info | unused | epcall | rr | step | memc | redis | nginx | stress | numa)
		"suite_$suite"
		;;
	*)
		echo "$0: unknown suite '$suite'" >&2
		echo "usage: $0 info|unused|epcall|rr|step|memc|redis|nginx|stress|numa [--quick]" >&2
		exit 2
		;;
esac
