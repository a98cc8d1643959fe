# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-numa-probe.gp DATA PNG
# DATA: "index quantile" then median, min, max in ns for DEFAULT and
# DISABLED. Points on a log axis (bars would start at an arbitrary floor).
set terminal pngcairo size 900,450 font ",10" noenhanced
set output ARG2
set title "Per-access time, working set on the other node (median, bars: min..max over rounds; guest ns = instructions)"
set ylabel "ns per access (log scale)"
set logscale y
set xrange [-0.5:4.5]
set grid
set key top left
plot ARG1 using ($1 - 0.08):3:4:5:xtic(2) with yerrorlines lw 2 pt 7 title "DEFAULT", \
     "" using ($1 + 0.08):6:7:8 with yerrorlines lw 2 pt 5 title "DISABLED"
