# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-rr-rates.gp DATA PNG
# DATA: "rate" then, for plain, the sleep hack, the fixed min-wait and
# the adaptive one (200 us), the median, min and max of CPU us/request
# and of the p99 latency in us; NaN where a mode did not run at a rate.
# Points only: the rates between those measured were not, so no line
# suggests where the curves cross. The modes sit a little apart on the
# (log) load axis so that equal values do not hide each other.
set terminal pngcairo size 900,800 font ",10" noenhanced
set output ARG2
set multiplot layout 2,1 title "bench_rr, paced, 8 connections (median, bars: min..max over rounds; guest under -icount)"
set xlabel "offered load (requests/s, log scale; only the rates marked were measured)"
set logscale x
set xrange [1700:48000]
set xtics (2000, 4000, 5000, 10000, 20000, 40000)
set grid
set key below
set ylabel "server CPU per request (us)"
set yrange [0:*]
plot ARG1 using ($1 * 0.94):2:3:4 with yerrorbars lw 2 pt 7 ps 1.3 title "plain epoll_wait()", \
     "" using ($1 * 0.98):8:9:10 with yerrorbars lw 2 pt 5 ps 1.3 title "sleep 200 us, then epoll_wait()", \
     "" using ($1 * 1.02):14:15:16 with yerrorbars lw 2 pt 9 ps 1.6 title "EPOLL_CTL_MIN_WAIT 200 us", \
     "" using ($1 * 1.06):20:21:22 with yerrorbars lw 2 pt 11 ps 1.6 title "EPOLL_CTL_MIN_WAIT 200 us + ADAPTIVE"
set ylabel "p99 latency (us, log scale)"
set logscale y
set yrange [5:1000]
plot ARG1 using ($1 * 0.94):5:6:7 with yerrorbars lw 2 pt 7 ps 1.3 title "plain epoll_wait()", \
     "" using ($1 * 0.98):11:12:13 with yerrorbars lw 2 pt 5 ps 1.3 title "sleep 200 us, then epoll_wait()", \
     "" using ($1 * 1.02):17:18:19 with yerrorbars lw 2 pt 9 ps 1.6 title "EPOLL_CTL_MIN_WAIT 200 us", \
     "" using ($1 * 1.06):23:24:25 with yerrorbars lw 2 pt 11 ps 1.6 title "EPOLL_CTL_MIN_WAIT 200 us + ADAPTIVE"
unset multiplot
