# The data plot.sh hands gnuplot, from the programs' CSVs: awk -v kind=KIND
# [-v column=NAME] -v data=FILE -f prepare.awk IN.csv... writes the blocks
# the KIND's .gp script reads (each .gp says its layout) to FILE and
# prints gnuplot assignments (n=3;copy=4256.4;...) on stdout. A missing
# column or nothing to plot: a one-line message on stderr, exit 1.
# Fields are split as RFC 4180 quotes them (a quoted name may hold commas);
# they are strings, so numbers are compared after adding 0.

function fail_at(path, msg) {
	print path ": " msg > "/dev/stderr"
	failed = 1
	exit 1
}

function fail(msg) {
	fail_at(FILENAME, msg)
}

# Split line into f[1..n] honouring double quotes; returns n.
function split_csv(line, f,    n, i, ch, field, quoted) {
	n = 0; field = ""; quoted = 0
	for (i = 1; i <= length(line); i++) {
		ch = substr(line, i, 1)
		if (quoted) {
			if (ch == "\"" && substr(line, i + 1, 1) == "\"") { field = field "\""; i++ }
			else if (ch == "\"") quoted = 0
			else field = field ch
		} else if (ch == "\"") quoted = 1
		else if (ch == ",") { f[++n] = field; field = "" }
		else field = field ch
	}
	f[++n] = field
	return n
}

function need(name) {
	if (!(name in col)) fail("no column '" name "' (" what ")")
	return col[name]
}

function base(path,    b) {
	b = path
	sub(/.*\//, "", b)
	sub(/\.csv$/, "", b)
	return b
}

# A group's points, kept in order of x (insertion: the groups are small).
function add_point(g, x, rest,    k) {
	if (!(g in npts)) { ngroups++; group[ngroups] = g; npts[g] = 0 }
	k = ++npts[g]
	while (k > 1 && px[g, k - 1] + 0 > x + 0) {
		px[g, k] = px[g, k - 1]; prest[g, k] = prest[g, k - 1]; k--
	}
	px[g, k] = x; prest[g, k] = rest
}

function write_groups(min_points,    i, j, g, blocks) {
	blocks = 0
	for (i = 1; i <= ngroups; i++) {
		g = group[i]
		if (npts[g] < min_points) continue
		printf "%s%s\n", (blocks ? "\n\n" : ""), g > data
		for (j = 1; j <= npts[g]; j++) printf "%s\t%s\n", px[g, j], prest[g, j] > data
		blocks++
	}
	return blocks
}

BEGIN {
	what = kind ~ /^macko/ ? "not a macko-spmv bench CSV" : \
	       kind == "roofline" ? "not graph-partition --format csv" : \
	       kind == "train" ? "not a maxk-train --log" : \
	       kind == "sample" ? "not a kernel-sample CSV" : "not a ksmm-tune bench CSV"
}

/^#/ { next }

!(FILENAME in header_done) {
	header_done[FILENAME] = 1
	delete col
	nf = split_csv($0, h)
	for (i = 1; i <= nf; i++) col[h[i]] = i
	path[++nfiles] = FILENAME
	if (kind == "train") {
		label = base(FILENAME) # a comparison's log, log-maxk32: its configuration
		if (match(label, /-(maxk[0-9]+|relu)$/)) label = substr(label, RSTART + 1)
		trainfile[nfiles] = label
		need("epoch"); need("loss"); need("val"); need("test")
	} else if (kind == "sample") {
		label = base(FILENAME)
		# sampling_data/DEVICE_OP_PRECISION_PARTS_PART: the OP
		if (match(label, /_(fp16|bf16|fp32)_[0-9]+_[0-9]+$/)) {
			label = substr(label, 1, RSTART - 1); sub(/^[^_]*_/, "", label)
		}
		need("F_dur(us)"); need("B_dur(us)")
		xc = column != "" ? need(column) : col["F_dur(us)"] - 1
		if (xc < 1) fail("no shape column before F_dur(us)")
		xname[nfiles] = h[xc]
		samplefile[nfiles] = label
	}
	next
}

kind ~ /^macko/ {
	split_csv($0, f)
	if (f[need("kernel")] != "macko") next
	shape = f[need("rows")] "x" f[need("cols")]
	v = f[need("vectors")]; d = f[need("density")]
	copy_sum += f[need("copy_gbs")]; copy_n++
	rest = f[need("speedup_vs_cublas")] "\t" f[need("gbs")]
	if (kind == "macko-density") add_point(shape (v == 1 ? "" : ", " v " vectors"), d, rest)
	else add_point(shape ", density " d, v, rest)
	next
}

kind == "roofline" {
	split_csv($0, f)
	t = f[need("time_us")] * 1e-6; fl = f[need("flops")] + 0; x = f[need("intensity")] + 0
	if (t <= 0 || fl <= 0 || x <= 0) { skipped++; next }
	y = fl / t
	if (!points || x < xlo) xlo = x
	if (!points || x > xhi) xhi = x
	if (!points || y < ylo) ylo = y
	points++
	add_point(f[need("bottleneck")], x, sprintf("%.6g", y))
	next
}

kind == "train" {
	split_csv($0, f)
	i = nfiles
	loss[i] = loss[i] f[col["epoch"]] "\t" f[col["loss"]] "\n"
	if (f[col["val"]] != "" && f[col["test"]] != "")
		score[i] = score[i] f[col["epoch"]] "\t" f[col["val"]] "\t" f[col["test"]] "\n"
	rows[i]++
	next
}

kind == "sample" {
	split_csv($0, f)
	i = nfiles
	x = f[col[xname[i]]]
	fw[i] = fw[i] x "\t" f[col["F_dur(us)"]] "\n"
	bw[i] = bw[i] x "\t" f[col["B_dur(us)"]] "\n"
	rows[i]++
	next
}

kind == "ksmm" {
	split_csv($0, f)
	p = f[need("a")] "," f[need("b")] "," f[need("c")] "," f[need("d")] " B=" f[need("batch")]
	combo = f[need("dtype")] " " f[need("layout")]
	s = f[need("speedup")]
	if (!(p in seenp)) { seenp[p] = 1; pats[++npats] = p }
	if (!(combo in seenc)) { seenc[combo] = 1; combos[++ncombos] = combo }
	val[p, combo] = (s == "" || s == "nan") ? "NaN" : s
	next
}

END {
	if (failed) exit 1
	if (kind ~ /^macko/) {
		n = write_groups(kind == "macko-vectors" ? 2 : 1)
		if (!n) fail(kind == "macko-vectors" ? "no shape and density with more than one vector count" \
						     : "no macko rows")
		printf "n=%d;copy=%.6g;\n", n, copy_sum / copy_n
	} else if (kind == "roofline") {
		if (!points) fail("no operator with FLOPs and a time")
		n = write_groups(1)
		printf "n=%d;xlo=%.6g;xhi=%.6g;ylo=%.6g;skipped=%d;\n", n, xlo, xhi, ylo, skipped
	} else if (kind == "train" || kind == "sample") {
		for (i = 1; i <= nfiles; i++) {
			if (!rows[i]) fail_at(path[i], "no rows")
			sep = i > 1 ? "\n\n" : ""
			if (kind == "train")
				printf "%s%s\n%s\n\n%s\n%s", sep, trainfile[i], loss[i], trainfile[i], score[i] > data
			else
				printf "%s%s forward\n%s\n\n%s backward\n%s", sep, samplefile[i], fw[i], samplefile[i], bw[i] > data
		}
		printf "n=%d;", nfiles
		if (kind == "sample") printf "xlabel=\"%s\";", xname[1]
		printf "\n"
	} else {
		if (!npats) fail("no rows")
		printf "pattern" > data
		for (j = 1; j <= ncombos; j++) printf "\t%s", combos[j] > data
		printf "\n" > data
		for (i = 1; i <= npats; i++) {
			printf "%s", pats[i] > data
			for (j = 1; j <= ncombos; j++)
				printf "\t%s", (((pats[i], combos[j]) in val) ? val[pats[i], combos[j]] : "NaN") > data
			printf "\n" > data
		}
		printf "ncols=%d;npats=%d;\n", ncombos + 1, npats
	}
}
