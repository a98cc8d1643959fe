#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: boot the stock and the patched kernel in the same QEMU
# configuration, run the bench suites (bench-guest.sh) in each, rounds
# interleaved (A B C, A B C, ...), and write build/SERIES/bench/results.md
# and build/SERIES/bench/bench-*.png (report.sh).  SERIES is $KSERIES
# (default 6.1), the kernel series as for the Makefile and qemu/run.
#
#   A  stock Debian kernel, same config, no patch (build/SERIES/kernel-stock)
#   B  patched (build/SERIES/kernel), module not loaded
#   C  patched, numab_minwait loaded, no process using either feature
#
# Every guest runs under qemu/run --icount (one vCPU, a memory-only second
# NUMA node): guest time counts instructions, so results do not depend on
# the host's load and boots can run side by side (--jobs).
# The feature suites (epcall, rr, step, memc, redis, nginx, stress, numa)
# need the module: they run on C. Expects `make initramfs kernel-stock
# bench-programs` done (the Makefile's bench target does it).
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 --stock DIR [--quick] [--rounds N] [--jobs N] [--stage DIR]
          [--userspace DIR] [--suites LIST]

  --quick     fewer iterations (under 10 minutes once the kernels are built)
  --suites LIST  only these suites, a comma list of unused, epcall, rr,
              step, memc, redis, nginx, stress, numa (default: all); the
              report says the others are missing
  --rounds N  interleaved rounds per suite (default 3 for the unused-cost
              suite, 2 for the others; --quick: 2 and 2)
  --jobs N    guests booted side by side (default 2, the host's cores)
  --stage DIR      modules of the patched kernel with numab_minwait.ko
                   (default build/SERIES/stage, from make stage)
  --userspace DIR  the project's guest programs
                   (default build/SERIES/userspace)
  --stock DIR      the stock kernel, A: a kernel/build.sh tree (obj/),
                   as make kernel-stock makes build/SERIES/kernel-stock
USAGE
}

bad_usage() {
	echo "$0: $*" >&2
	echo "Try '$0 --help'." >&2
	exit 2
}
need_arg() {
	(($2 >= 2)) || bad_usage "option '$1' needs an argument"
}

quick=0 rounds="" jobs=2 stock="" suites=unused,epcall,rr,step,memc,redis,nginx,stress,numa
series=${KSERIES:-$(awk '!/^#/ && NF { print $1; exit }' "$(dirname -- "${BASH_SOURCE[0]}")/../../kernel/series")}
stage=build/$series/stage userspace=build/$series/userspace
while (($#)); do
	case "$1" in
	--quick) quick=1; shift ;;
	--rounds) need_arg "$1" $#; rounds="$2"; shift 2 ;;
	--jobs) need_arg "$1" $#; jobs="$2"; shift 2 ;;
	--stage) need_arg "$1" $#; stage="$2"; shift 2 ;;
	--userspace) need_arg "$1" $#; userspace="$2"; shift 2 ;;
	--stock) need_arg "$1" $#; stock="$2"; shift 2 ;;
	--suites) need_arg "$1" $#; suites="$2"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
done
[[ -n $stock ]] || bad_usage "--stock is required"
# How the run was asked for, in the report.
invocation="make bench"
((quick)) && invocation+=" QUICK=1"
[[ -z $rounds ]] || invocation+=" (--rounds $rounds)"
declare -A wanted=()
IFS=, read -ra suite_list <<< "$suites"
for suite in "${suite_list[@]}"; do
	case $suite in
	unused | epcall | rr | step | memc | redis | nginx | stress | numa)
		wanted[$suite]=1
		;;
	*) bad_usage "unknown suite '$suite'" ;;
	esac
done
((${#wanted[@]})) || bad_usage "--suites names no suite"
[[ $suites == unused,epcall,rr,step,memc,redis,nginx,stress,numa ]] ||
	invocation+=" (--suites $suites)"

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
out=build/$series/bench
raw=$out/raw
unused_rounds=${rounds:-$((quick ? 2 : 3))}
feature_rounds=${rounds:-2}
guest_quick=()
((quick)) && guest_quick=(--quick)

# Host tools for the report, and the servers and tools for the guest image.
packages=(gnuplot-nox memcached redis-tools stress-ng linux-perf binutils
	python3 wrk libcrypt1 libpcre2-8-0 libssl3 zlib1g)
missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[[ "$status" == installed ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
	echo "bench: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

[[ -e build/$series/kernel/.done && -d $stage/lib/modules && -d $userspace/bin ]] || {
	echo "bench: run 'make initramfs' first (patched kernel, stage, userspace)" >&2
	exit 1
}
[[ -x $out/bin/bench-guest.sh ]] || {
	echo "bench: run 'make bench-programs' first" >&2
	exit 1
}

# One image for every boot, only for the benchmarks (the test image of
# make check stays as it is): the patched kernel's modules (never loaded
# on A or B), the project's programs and libminwait.so, and Debian's
# servers and tools (mkinitramfs installs each ELF of bin/ with its shared
# libraries). redis-tools' redis-check-rdb is redis-server itself: it acts
# by the name it runs under.
kver=$(cat "build/$series/kernel/kernel.release")
image_dir=$out/userspace
rm -rf "$image_dir"
mkdir -p "$image_dir"
cp -a "$userspace/." "$image_dir/"
cp /usr/bin/memcached /usr/bin/redis-benchmark /usr/bin/stress-ng \
	/usr/bin/perf "$image_dir/bin/"
cp /usr/bin/redis-check-rdb "$image_dir/bin/redis-server"
# Debian's nginx binary from its package, unpacked but not installed: the
# nginx-common postinst would start a daemon on this machine. Its shared
# libraries are the packages above.
nginx_version="not run"
if [[ -n ${wanted[nginx]:-} ]]; then
	nginx_deb=$out/nginx-deb
	rm -rf "$nginx_deb"
	mkdir -p "$nginx_deb"
	(cd "$nginx_deb" && apt-get -qq -o APT::Sandbox::User=root download nginx)
	dpkg-deb -x "$nginx_deb"/nginx_*.deb "$nginx_deb/root"
	nginx_version=$(dpkg-deb -f "$nginx_deb"/nginx_*.deb Version)
	cp "$nginx_deb/root/usr/sbin/nginx" /usr/bin/wrk "$image_dir/bin/"
fi
qemu/mkinitramfs --kver "$kver" --stage "$stage" --userspace "$image_dir" \
	--out "$out/initramfs.img"

declare -A kernel_image=(
	[A]=$stock/obj/arch/x86/boot/bzImage
	[B]=build/$series/kernel/obj/arch/x86/boot/bzImage
	[C]=build/$series/kernel/obj/arch/x86/boot/bzImage
)
# norandmaps: no address-space randomization, so that a process costs the
# same instructions in every boot (fork+execl: 0.3% apart between two
# boots with it, 0.01% without).
readonly GUEST=(--icount --nodes 2 --mem 1G --append norandmaps)
qemu_common=("${GUEST[@]}" --timeout 1800
	--initramfs "$out/initramfs.img" --add "$out/bin:/opt/bench")

# boot KERNEL ROUND FILE SUITE...: one guest boot running the suites;
# its BENCH lines, tagged with the kernel, go to FILE.
boot() {
	local k=$1 round=$2 file=$3 suite script="" opts=() rc=0
	shift 3
	for suite in info "$@"; do
		script+="/opt/bench/bench-guest.sh $suite ${guest_quick[*]}; "
	done
	[[ $k == C ]] && opts+=(--preload)
	echo "bench: round $round kernel $k: $*"
	qemu/run "${qemu_common[@]}" --kernel "${kernel_image[$k]}" "${opts[@]}" \
		--log "$out/logs/${file##*/}.log" \
		-- env "BENCH_ROUND=$round" bash -ec "$script" |
		sed -n "s/^BENCH /BENCH kernel=$k /p" >"$file" || rc=$?
	if ((rc)) || ! grep -q "suite=info" "$file"; then
		echo "bench: kernel $k round $round failed (status $rc; log: $out/logs/${file##*/}.log)" >&2
		return 1
	fi
}

rm -rf "$raw" "$out/logs" "$out/failed"
mkdir -p "$raw" "$out/logs"
# The boots, in interleaved order: "KERNEL ROUND FILE SUITE...". The
# feature suites take two boots per round, so that they run side by side.
# only SUITE...: those of SUITE... that --suites names.
only() {
	local suite
	for suite in "$@"; do
		[[ -z ${wanted[$suite]:-} ]] || printf ' %s' "$suite"
	done
}
runs=()
rr_suites=$(only epcall rr step) server_suites=$(only memc redis nginx stress numa)
for ((r = 1; r <= unused_rounds || r <= feature_rounds; r++)); do
	if ((r <= unused_rounds)) && [[ -n ${wanted[unused]:-} ]]; then
		for k in A B C; do
			runs+=("$k $r $raw/unused-$k-$r.txt unused")
		done
	fi
	if ((r <= feature_rounds)); then
		[[ -z $rr_suites ]] ||
			runs+=("C $r $raw/rr-C-$r.txt$rr_suites")
		[[ -z $server_suites ]] ||
			runs+=("C $r $raw/servers-C-$r.txt$server_suites")
	fi
done
start=$(date +%s)
for run in "${runs[@]}"; do
	while (($(jobs -rp | wc -l) >= jobs)); do
		wait -n || true
	done
	# shellcheck disable=SC2086 # "KERNEL ROUND FILE SUITE..."
	{ boot $run || touch "$out/failed"; } &
done
wait
[[ ! -e $out/failed ]] || { echo "bench: a guest run failed" >&2; exit 1; }
echo "bench: guest runs took $(($(date +%s) - start)) s"

# What the report says about this run, kept with the raw lines so that
# report.sh regenerates the same report from them.
{
	echo "command: $invocation"
	echo "finished: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "guest runs: $(($(date +%s) - start)) s wall, $jobs at a time"
	echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB, host kernel $(uname -r)"
	echo "qemu: $(qemu-system-x86_64 --version | head -n1)"
	echo "guest: qemu/run ${GUEST[*]} (1 vCPU; node 1 memory only; no ASLR)"
	echo "host load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	for tool in memcached redis-tools stress-ng linux-perf wrk; do
		echo "package $tool: $(dpkg-query -W -f '${Version}' "$tool")"
	done
	echo "package nginx: $nginx_version"
} >"$raw/run.txt"
"$here/hooks.py" "$stock/obj/vmlinux" "build/$series/kernel/obj/vmlinux" \
	>"$raw/hooks.md"
"$here/report.sh" --raw "$raw" --md "$out/results.md" --plots "$out"
echo "bench: wrote $out/results.md and $out/bench-*.png"
published=docs/bench-raw
[[ $series == 6.1 ]] || published=docs/bench-raw-$series
echo "bench: to publish this run: rm -rf $published/*.txt $published/hooks.md &&" \
	"cp $raw/* $published/ && make bench-report"
