# Training curves from maxk-train --log files (MaxK against ReLU, say): the
# loss per epoch, and the validation (solid) and test (dashed) scores at
# each evaluated epoch, a colour per run.
# Data (plot.sh train): for run i, block 2i (title line, then epoch, loss)
# and block 2i+1 (title line, then epoch, val, test), separated by two
# blank lines. Variables: out, width, height, heading, n (runs), metric.
load dir."common.gp"
set multiplot layout 1, 2 title heading font ",15"
set xlabel "epoch"
set ylabel "training loss"
set title "loss"
set key top right
plot for [i=0:n-1] data index 2*i using 1:2 with lines ls (i % 8 + 1) title columnheader(1) noenhanced
set ylabel metric
set title metric." (solid: validation, dashed: test)"
set key bottom right
plot for [i=0:n-1] data index 2*i+1 using 1:2 with lines ls (i % 8 + 1) title columnheader(1) noenhanced, \
	for [i=0:n-1] data index 2*i+1 using 1:3 with lines ls (i % 8 + 1) dt 2 notitle
unset multiplot
