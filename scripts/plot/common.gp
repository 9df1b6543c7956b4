# Shared by every plot: the terminal from the output's extension (SVG, or
# PNG through cairo when gnuplot has it), a white background, light grids.
# Set by plot.sh: out (the output path), width and height (pixels), heading.
if (out[strlen(out)-3:] eq ".svg") {
	set terminal svg size width, height dynamic enhanced font "Helvetica,13" background "white"
} else {
	if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
		set terminal pngcairo size width, height enhanced font "Helvetica,11" background "white"
	} else {
		set terminal png size width, height font "Helvetica,11" background "white"
	}
}
set output out
set encoding utf8
set datafile separator "\t"
set grid lc rgb "#dddddd"
set key top left opaque box lc rgb "#bbbbbb"
set border lc rgb "#444444"
set style line 1 lc rgb "#1b6ca8" lw 2 pt 7 ps 0.8
set style line 2 lc rgb "#d1495b" lw 2 pt 5 ps 0.8
set style line 3 lc rgb "#2a9d8f" lw 2 pt 9 ps 0.9
set style line 4 lc rgb "#e9a03b" lw 2 pt 11 ps 0.9
set style line 5 lc rgb "#6a4c93" lw 2 pt 13 ps 0.9
set style line 6 lc rgb "#555555" lw 2 pt 3 ps 0.9
set style line 7 lc rgb "#8ab17d" lw 2 pt 4 ps 0.9
set style line 8 lc rgb "#b5838d" lw 2 pt 6 ps 0.9
set style increment user
