#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark report from the raw results of a `make bench` run: the
# markdown (scripts/bench_report.py) and the PNG plots (scripts/bench-*.gp,
# gnuplot). The output depends on the raw folder only, so `make
# bench-report` regenerates docs/benchmarks.md and docs/bench-*.png from
# docs/bench-raw/ byte for byte.
#
#   scripts/bench-report.sh --raw DIR --md FILE --plots DIR
set -euo pipefail

usage() {
	echo "usage: $0 --raw DIR --md FILE --plots DIR" >&2
}

raw="" md="" plots=""
while (($#)); do
	case "$1" in
	--raw) raw="$2"; shift 2 ;;
	--md) md="$2"; shift 2 ;;
	--plots) plots="$2"; shift 2 ;;
	*) usage; exit 64 ;;
	esac
done
[[ -d $raw && -n $md && -n $plots ]] || { usage; exit 64; }
command -v gnuplot >/dev/null || {
	echo "$0: gnuplot missing (apt-get install gnuplot-nox)" >&2
	exit 1
}

scripts=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
dat=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
trap 'rm -rf -- "$dat"' EXIT
mkdir -p "$plots" "$(dirname -- "$md")"

python3 "$scripts/bench_report.py" "$raw" "$md" "$dat"

# plot NAME DATA...: bench-NAME.png from scripts/bench-NAME.gp, when the
# report wrote its data.
plot() {
	local name=$1 f
	shift
	for f in "$@"; do
		[[ -s $dat/$f ]] || return 0
	done
	gnuplot -c "$scripts/bench-$name.gp" "${@/#/$dat/}" "$plots/bench-$name.png"
}
plot unused bench-unused.dat
plot rr-rates bench-rr-rates.dat
plot minwait-sweep bench-minwait-sweep.dat bench-minwait-sleep.dat
plot numa-probe bench-numa-probe.dat
