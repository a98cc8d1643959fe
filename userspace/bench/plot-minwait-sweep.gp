# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-minwait-sweep.gp SWEEP SLEEP PNG
# SWEEP, SLEEP: "mode wait_us cpu cpu_min cpu_max p99 p99_min p99_max".
# Two panels, each with its own zero, rather than two y axes on one;
# points only, as only the waits marked were measured.
set terminal pngcairo size 900,600 font ",10" noenhanced
set output ARG3
set multiplot layout 2,1 title "bench_rr at 4000 requests/s (median, bars: min..max over rounds; -icount)"
set grid
set key top right
set xrange [-20:*]
set yrange [0:*]
set ylabel "server CPU per request (us)"
set format x ""
plot ARG1 using 2:3:4:5 with yerrorbars lw 2 pt 7 ps 1.3 title "EPOLL_CTL_MIN_WAIT (0 = plain epoll_wait())", \
     ARG2 using 2:3:4:5 with yerrorbars pt 9 ps 2 title "sleep 200 us hack"
set format x "%g"
set xlabel "minimum wait (us)"
set ylabel "request latency p99 (us)"
plot ARG1 using 2:6:7:8 with yerrorbars lw 2 pt 7 ps 1.3 title "EPOLL_CTL_MIN_WAIT (0 = plain epoll_wait())", \
     ARG2 using 2:6:7:8 with yerrorbars pt 9 ps 2 title "sleep 200 us hack"
unset multiplot
