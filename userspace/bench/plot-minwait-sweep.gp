# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-minwait-sweep.gp SWEEP SLEEP PNG
# SWEEP, SLEEP: "mode wait_us cpu cpu_min cpu_max p99 p99_min p99_max".
set terminal pngcairo size 900,450 font ",10" noenhanced
set output ARG3
set title "bench_rr at 4000 requests/s: server CPU per request and p99 (median, bars: min..max over rounds; -icount)"
set xlabel "EPOLL_CTL_MIN_WAIT (us); 0 = plain epoll_wait()"
set ylabel "server CPU per request (us)"
set y2label "request latency p99 (us)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set key below
plot ARG1 using 2:3:4:5 with yerrorlines lw 2 pt 7 title "CPU/req, min-wait", \
     "" using 2:6:7:8 axes x1y2 with yerrorlines lw 2 pt 5 dt 2 title "p99, min-wait", \
     ARG2 using 2:3:4:5 with yerrorbars pt 9 ps 2 title "CPU/req, sleep 200 us hack", \
     "" using 2:6:7:8 axes x1y2 with yerrorbars pt 11 ps 2 title "p99, sleep 200 us hack"
