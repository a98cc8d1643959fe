# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-rr-rates.gp DATA PNG
# DATA: "rate" then median, min, max of CPU us/request for plain, the
# sleep hack and the min-wait (200 us).
# Points only: the rates between those measured were not, so no line
# suggests where the curves cross. The three modes sit a little apart
# on the (log) load axis so that equal values do not hide each other.
set terminal pngcairo size 900,450 font ",10" noenhanced
set output ARG2
set title "bench_rr: server CPU per request (median, bars: min..max over rounds; guest under -icount)"
set xlabel "offered load (requests/s, log scale; only the rates marked were measured)"
set ylabel "server CPU per request (us)"
set logscale x
set xrange [1700:48000]
set xtics (2000, 4000, 5000, 10000, 20000, 40000)
set yrange [0:*]
set grid
set key below
plot ARG1 using ($1 * 0.96):2:3:4 with yerrorbars lw 2 pt 7 ps 1.3 title "plain epoll_wait()", \
     "" using 1:5:6:7 with yerrorbars lw 2 pt 5 ps 1.3 title "sleep 200 us, then epoll_wait()", \
     "" using ($1 * 1.04):8:9:10 with yerrorbars lw 2 pt 9 ps 1.6 title "EPOLL_CTL_MIN_WAIT 200 us"
