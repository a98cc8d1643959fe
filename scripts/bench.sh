#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: boot the stock and the patched kernel in the same QEMU
# configuration, run the bench suites of userspace/bench/ in each, rounds
# interleaved (A B C, A B C, ...), and write build/bench/results.md and
# build/bench/bench-*.png (scripts/bench-report.sh).
#
#   A  stock Debian 6.1, same config, no patch (build/kernel-stock)
#   B  patched (build/kernel), module not loaded
#   C  patched, numab_minwait loaded, no process using either feature
#
# The min-wait, memcached and NUMA suites need the module: they run on C.
# Expects `make initramfs bench-programs` done (the Makefile's bench
# target does it); builds the stock kernel itself (cached).
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 [--quick] [--rounds N] [--stage DIR] [--userspace DIR] [--stock DIR]

  --quick     fewer iterations and rounds (under 10 minutes once the
              kernels are built)
  --rounds N  interleaved rounds per suite (default 5; --quick: 5 for the
              unused-cost suite, 3 for the others)
  --stage DIR      modules of the patched kernel with numab_minwait.ko
                   (default build/stage, from make stage)
  --userspace DIR  the project's guest programs (default build/userspace)
  --stock DIR      a built kernel tree (obj/) to use as A instead of
                   building build/kernel-stock
USAGE
}

invocation="scripts/bench.sh${*:+ $*}"
quick=0 rounds="" stage=build/stage userspace=build/userspace stock=""
while (($#)); do
	case "$1" in
	--quick) quick=1; shift ;;
	--rounds) rounds="$2"; shift 2 ;;
	--stage) stage="$2"; shift 2 ;;
	--userspace) userspace="$2"; shift 2 ;;
	--stock) stock="$2"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 64 ;;
	esac
done

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=build/bench
raw=$out/raw
unused_rounds=${rounds:-5}
feature_rounds=${rounds:-$((quick ? 3 : 5))}
guest_quick=()
((quick)) && guest_quick=(--quick)

# Host tools for the report and the real server for the guest image.
packages=(gnuplot-nox memcached binutils python3)
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

[[ -e build/kernel/.done && -d $stage/lib/modules && -d $userspace/bin ]] || {
	echo "bench: run 'make initramfs' first (patched kernel, stage, userspace)" >&2
	exit 1
}
[[ -x $out/bin/bench-guest.sh ]] || {
	echo "bench: run 'make bench-programs' first" >&2
	exit 1
}

if [[ -z $stock ]]; then
	scripts/build-kernel.sh --name kernel-stock --link build/kernel-stock \
		--fragment qemu/guest.config
	stock=build/kernel-stock
fi

# One image for every boot: the patched kernel's modules (never loaded on
# A or B), the project's programs and libminwait.so, and memcached with its
# shared libraries (mkinitramfs installs each ELF of bin/ with them).
kver=$(cat build/kernel/kernel.release)
image_dir=$out/userspace
rm -rf "$image_dir"
mkdir -p "$image_dir"
cp -a "$userspace/." "$image_dir/"
cp /usr/bin/memcached "$image_dir/bin/"
qemu/mkinitramfs --kver "$kver" --stage "$stage" --userspace "$image_dir" \
	--out "$out/initramfs.img"

declare -A kernel_image=(
	[A]=$stock/obj/arch/x86/boot/bzImage
	[B]=build/kernel/obj/arch/x86/boot/bzImage
	[C]=build/kernel/obj/arch/x86/boot/bzImage
)
qemu_common=(--cpus 2 --nodes 2 --mem 1G --timeout 900
	--initramfs "$out/initramfs.img" --add "$out/bin:/opt/bench")

# boot KERNEL ROUND FILE SUITE...: one guest boot running the suites;
# its BENCH lines, tagged with the kernel, go to FILE.
boot() {
	local k=$1 round=$2 file=$3 suite script="" opts=()
	shift 3
	for suite in info "$@"; do
		script+="/opt/bench/bench-guest.sh $suite ${guest_quick[*]}; "
	done
	[[ $k == C ]] && opts+=(--preload)
	echo "bench: round $round kernel $k: $*"
	qemu/run "${qemu_common[@]}" --kernel "${kernel_image[$k]}" "${opts[@]}" \
		-- env "BENCH_ROUND=$round" bash -ec "$script" |
		sed -n "s/^BENCH /BENCH kernel=$k /p" >"$file"
	grep -q "suite=info" "$file" || {
		echo "bench: no results from kernel $k round $round" >&2
		exit 1
	}
}

rm -rf "$raw"
mkdir -p "$raw"
start=$(date +%s)
for ((r = 1; r <= unused_rounds; r++)); do
	for k in A B C; do
		boot "$k" "$r" "$raw/unused-$k-$r.txt" unused
	done
done
for ((r = 1; r <= feature_rounds; r++)); do
	boot C "$r" "$raw/features-C-$r.txt" rr memc numa
done
echo "bench: guest runs took $(($(date +%s) - start)) s"

scripts/bench-hooks.sh "$stock/obj/vmlinux" build/kernel/obj/vmlinux \
	>"$out/hooks.md"
scripts/bench-report.sh --raw "$raw" --hooks "$out/hooks.md" \
	--command "$invocation (host load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))" \
	--out "$out"
echo "bench: wrote $out/results.md and $out/bench-*.png"
