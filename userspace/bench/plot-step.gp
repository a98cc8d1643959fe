# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-step.gp DATA PNG
# DATA: a window's start (ms) then, for plain, the sleep hack, the fixed
# and the adaptive min-wait, its CPU us/request and events per call
# (medians over the rounds); NaN where a mode has no such window.
set terminal pngcairo size 900,800 font ",10" noenhanced
set output ARG2
set multiplot layout 2,1 title "bench_rr step load: 2,000 -> 40,000 -> 2,000 requests/s (paced, 8 connections; guest under -icount)"
set xlabel "planned send time (ms of guest time)"
set grid
set key below
set ylabel "server CPU per request (us)"
set yrange [0:*]
plot ARG1 using 1:2 with linespoints lw 1.5 pt 7 ps 0.6 title "plain epoll_wait()", \
     "" using 1:4 with linespoints lw 1.5 pt 5 ps 0.6 title "sleep 200 us, then epoll_wait()", \
     "" using 1:6 with linespoints lw 1.5 pt 9 ps 0.6 title "EPOLL_CTL_MIN_WAIT 200 us", \
     "" using 1:8 with linespoints lw 1.5 pt 11 ps 0.6 title "EPOLL_CTL_MIN_WAIT 200 us + ADAPTIVE"
set ylabel "events per epoll_wait() call"
set yrange [0:*]
plot ARG1 using 1:3 with linespoints lw 1.5 pt 7 ps 0.6 title "plain epoll_wait()", \
     "" using 1:5 with linespoints lw 1.5 pt 5 ps 0.6 title "sleep 200 us, then epoll_wait()", \
     "" using 1:7 with linespoints lw 1.5 pt 9 ps 0.6 title "EPOLL_CTL_MIN_WAIT 200 us", \
     "" using 1:9 with linespoints lw 1.5 pt 11 ps 0.6 title "EPOLL_CTL_MIN_WAIT 200 us + ADAPTIVE"
unset multiplot
