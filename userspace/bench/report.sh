#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark report from the raw results of a `make bench` run: the
# markdown (report.py) and the PNG plots (plot-*.gp, gnuplot). The output
# depends on the raw folder only, so `make bench-report` regenerates
# docs/benchmarks.md and docs/bench-*.png from docs/bench-raw/ byte for
# byte.
#
#   userspace/bench/report.sh --raw DIR --md FILE --plots DIR
set -euo pipefail

usage() {
	echo "usage: $0 --raw DIR --md FILE --plots DIR"
}
bad_usage() {
	echo "$0: $*" >&2
	usage >&2
	exit 2
}

raw="" md="" plots=""
while (($#)); do
	(($# >= 2)) || bad_usage "option '$1' needs an argument"
	case "$1" in
	--raw) raw="$2"; shift 2 ;;
	--md) md="$2"; shift 2 ;;
	--plots) plots="$2"; shift 2 ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
done
[[ -d $raw ]] || bad_usage "--raw DIR is required (a folder)"
[[ -n $md && -n $plots ]] || bad_usage "--md and --plots are required"
command -v gnuplot >/dev/null || {
	echo "$0: gnuplot missing (apt-get install gnuplot-nox)" >&2
	exit 1
}

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
dat=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
trap 'rm -rf -- "$dat"' EXIT
mkdir -p "$plots" "$(dirname -- "$md")"

python3 "$here/report.py" "$raw" "$md" "$dat"

# plot NAME DATA...: bench-NAME.png from plot-NAME.gp, when the
# report wrote its data.
plot() {
	local name=$1 f
	shift
	for f in "$@"; do
		[[ -s $dat/$f ]] || return 0
	done
	gnuplot -c "$here/plot-$name.gp" "${@/#/$dat/}" "$plots/bench-$name.png"
}
plot unused bench-unused.dat
plot rr-rates bench-rr-rates.dat
plot step bench-step.dat
plot minwait-sweep bench-minwait-sweep.dat bench-minwait-sleep.dat
plot numa-probe bench-numa-probe.dat
