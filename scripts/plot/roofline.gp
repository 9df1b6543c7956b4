# A roofline chart from graph-partition --format csv: each operator at its
# arithmetic intensity (FLOP per byte) and the FLOP/s its roofline time
# gives it, coloured by bottleneck class, under the GPU's roofs: memory
# bandwidth times intensity, and the peaks of the matrix units (at the data
# type) and of the other ops.
# Data (plot.sh roofline): blocks separated by two blank lines, one per
# class, each a title line, then rows: intensity, FLOP/s, name.
# Variables: out, width, height, heading, n, bw (bytes/s), peak, vector
# (FLOP/s), dtype, hw (the GPU's name).
load dir."common.gp"
set logscale xy
set format y "10^{%L}"
set format x "10^{%L}"
set xlabel "arithmetic intensity (FLOP/byte)"
set ylabel "attained FLOP/s (roofline estimate)"
set title heading."\n{/*0.8 ".hw.", ".dtype."}" font ",15"
set key top left
set samples 400
set xrange [xmin:xmax]
set yrange [ymin:ymax]
roof(x, p) = (bw * x < p ? bw * x : p)
plot roof(x, peak) with lines lc rgb "#222222" lw 2.5 title sprintf("matrix peak %.0f TFLOP/s, %.0f GB/s", peak / 1e12, bw / 1e9), \
	roof(x, vector) with lines lc rgb "#777777" dt 2 lw 2 title sprintf("other ops %.1f TFLOP/s", vector / 1e12), \
	for [i=0:n-1] data index i using 1:2 with points ls (i % 8 + 1) title columnheader(1) noenhanced
