# SPDX-License-Identifier: GPL-2.0
# gnuplot -c plot-unused.gp DATA PNG
# DATA: "test B_median B_min B_max C_median C_min C_max" (% vs stock).
set terminal pngcairo size 900,450 font ",10" noenhanced
set output ARG2
set title "Instructions per op vs stock (median, bars: min..max over rounds; guest under -icount)"
set ylabel "change vs stock (%)"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set xtics rotate by -30
set grid ytics
set key top left
plot ARG1 using 2:3:4:xtic(1) title "B patched, no module", \
     "" using 5:6:7 title "C patched + module, unused"
