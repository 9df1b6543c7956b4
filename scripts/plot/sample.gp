# kernel-sample's operator timings (sampling_data CSVs, or merged ones):
# forward (filled) and backward (open) time against one shape column, a
# colour per operator; log-log, as the sweeps double their shapes.
# Data (plot.sh sample): for file i, block 2i (title line, then x and
# F_dur(us)) and block 2i+1 (title line, then x and B_dur(us)), separated by
# two blank lines.
# Variables: out, width, height, heading, n, xlabel.
load dir."common.gp"
set logscale xy
set xlabel xlabel
set ylabel "time (us)"
set title heading font ",15"
set key top left
plot for [i=0:n-1] data index 2*i using 1:2 with points ls (i % 8 + 1) title columnheader(1) noenhanced, \
	for [i=0:n-1] data index 2*i+1 using 1:2 with points ls (i % 8 + 1) pt 6 title columnheader(1) noenhanced
