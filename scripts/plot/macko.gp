# MACKO SpMV against cuBLAS (macko-spmv bench CSVs): the speed-up and the
# bandwidth MACKO attains, against density or vector count, a line per
# group (a matrix shape; with vectors, a shape and density).
# Data (plot.sh macko-density|macko-vectors): blocks separated by two blank
# lines, each a title line, then rows: x, speedup_vs_cublas, gbs.
# Variables: out, width, height, heading, n (blocks), xlabel, logx (1: log
# x), copy (the device-copy bandwidth the CSV measured, GB/s).
load dir."common.gp"
set multiplot layout 1, 2 title heading font ",15"
if (logx) { set logscale x 2 } else { unset logscale x }
set xlabel xlabel
set ylabel "speed-up over cuBLAS (x)"
set title "MACKO speed-up"
set key top right
plot for [i=0:n-1] data index i using 1:2 with linespoints ls (i % 8 + 1) title columnheader(1) noenhanced, \
	1 with lines lc rgb "#888888" dt 2 lw 1.5 title "cuBLAS"
set ylabel "bandwidth (GB/s)"
set title "MACKO bandwidth"
set key bottom right
set yrange [0:*]
plot for [i=0:n-1] data index i using 1:3 with linespoints ls (i % 8 + 1) title columnheader(1) noenhanced, \
	copy with lines lc rgb "#888888" dt 2 lw 1.5 title sprintf("device copy %.0f GB/s", copy)
unset multiplot
