# ksmm-tune bench: the tuned Kronecker-sparse kernel's speed-up over the
# best dense baseline, a cluster of bars per pattern (and batch), a bar per
# data type and layout; the dashed line is parity.
# Data (plot.sh ksmm): a header line (pattern, then one column per data
# type and layout), then a row per pattern; NaN where not measured.
# Variables: out, width, height, heading, ncols (columns of the table).
load dir."common.gp"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border lc rgb "#333333"
set boxwidth 0.9
set bmargin 9
set rmargin 12
set xtics rotate by -35 left font ",10" nomirror
set ylabel "speed-up over the best dense baseline (x)"
set yrange [0:*]
set title heading font ",15"
set key top right
set datafile missing "NaN"
plot for [i=2:ncols] data using i:xtic(1) ls (i - 1) title columnheader(i) noenhanced, \
	1 with lines lc rgb "#888888" dt 2 lw 1.5 title "baseline"
