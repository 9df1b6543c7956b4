#!/usr/bin/env bats
# scripts/plot/plot.sh: each kind of picture drawn with gnuplot from a CSV
# the programs wrote (here, on the CPU; the GPU benchmarks' CSVs are the
# measured ones in bench/data), checked as SVG and PNG by
# tests/bats/ref/check_picture.py: well-formed, the titles, labels and
# series, the points each series should have, the colours.
load helpers

P=$REPO/scripts/plot/plot.sh
MODELS=/work/shared/models
MACKO=$REPO/bench/data/macko-h200-2026-11-25.csv
KSMM=$REPO/bench/data/ksmm-2026-11-27-h100/bench-default-configs.csv

check() { # check FILE ARGS...: tests/bats/ref/check_picture.py
	run "$PY" "$REPO/tests/bats/ref/check_picture.py" "$@"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$output" = ok ]
}

setup() {
	T=$(mktemp -d "${BATS_TMPDIR:-/tmp}/spkit-bats.XXXXXX")
	command -v gnuplot >/dev/null || skip "gnuplot is not installed (scripts/deps.sh installs it)"
}

@test "roofline: a point per operator with FLOPs and a time, by class, under the GPU's roofs; SVG and PNG" {
	"$BIN/graph-partition" "$MODELS/resnet18.onnx" -b 32 -f csv -o "$T/r.csv"
	"$P" roofline "$T/r.svg" "$T/r.csv"
	count() { awk -F, -v c="$1" 'NR > 1 && $15 == c && $6 > 0 && $16 > 0' "$T/r.csv" | wc -l; }
	[ "$(count compute_bound)" -gt 0 ] && [ "$(count memory_bound)" -gt 0 ]
	check "$T/r.svg" --size 900x600 --text Roofline --text "NVIDIA H200 SXM, fp32" \
		--text "arithmetic intensity (FLOP/byte)" --text "attained FLOP/s (roofline estimate)" \
		--text "matrix peak 67 TFLOP/s, 4800 GB/s" --text "other ops 66.9 TFLOP/s" \
		--points compute_bound=$(($(count compute_bound) + 1)) \
		--points memory_bound=$(($(count memory_bound) + 1)) \
		--points latency_bound=$(($(count latency_bound) + 1)) --colour 1b6ca8 --colour d1495b
	"$P" roofline "$T/r.png" "$T/r.csv" --size 640x480
	check "$T/r.png" --size 640x480 --colour 1b6ca8 --colour d1495b
	# another GPU and data type: its roofs and name
	"$BIN/graph-partition" "$MODELS/mobilenet_v2.onnx" --dtype bf16 --hardware "$REPO/configs/hardware/a100.yaml" -f csv -o "$T/m.csv"
	"$P" roofline "$T/m.svg" "$T/m.csv" --hardware a100 --dtype bf16 --title "MobileNet-V2"
	name=$(sed -n 's/^name: //p' "$REPO/configs/hardware/a100.yaml")
	peak=$(awk '$1 == "bf16:" { printf "%.0f", $2 }' "$REPO/configs/hardware/a100.yaml")
	check "$T/m.svg" --text MobileNet-V2 --text "$name, bf16" --text "matrix peak $peak TFLOP/s"
}

@test "train: loss and scores per epoch, a colour per maxk-train run (MaxK against ReLU)" {
	"$PY" "$REPO/tests/bats/ref/gnn_dataset.py" "$T/ds"
	"$BIN/maxk-train" "$T/ds" --hidden 16 --layers 2 --kernel-mode cpu --epochs 12 -q \
		--nonlinear maxk,relu --maxk 4 --eval-every 3 --log "$T/log.csv" >/dev/null
	"$P" train "$T/t.svg" "$T/log-maxk4.csv" "$T/log-relu.csv" --metric accuracy
	check "$T/t.svg" --size 1200x520 --text "Training curves" --text "training loss" \
		--text "accuracy (solid: validation, dashed: test)" --text epoch --text maxk4 \
		--text relu --colour 1b6ca8 --colour d1495b
	# the loss line has a vertex per epoch, the scores one per evaluated epoch
	$PY - "$T/t.svg" <<'PY'
import re, sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
groups = [g for g in ET.parse(sys.argv[1]).getroot().iter(S + "g")
          if g.find(S + "title") is not None and g.find(S + "title").text == "maxk4"]
vertices = sorted(len(re.findall(r"[ML]", p.get("d"))) for g in groups for p in g.iter(S + "path"))
# each series' path, after its key sample (a 2-vertex line): loss 12 epochs, val 4 evaluations
assert 12 in vertices and 4 in vertices, vertices
PY
	"$P" train "$T/t.png" "$T/log-relu.csv"
	check "$T/t.png" --size 1200x520 --colour 1b6ca8
	# a log is named by its file, a comparison's by its configuration
	cp "$T/log-relu.csv" "$T/baseline.csv"
	cp "$T/log-maxk4.csv" "$T/run-7-maxk4.csv"
	"$P" train "$T/t2.svg" "$T/baseline.csv" "$T/run-7-maxk4.csv"
	check "$T/t2.svg" --text baseline --text maxk4
}

@test "sample: forward and backward time against a shape column, a colour per operator" {
	for op in layernorm gelu; do
		"$BIN/kernel-sample" "$REPO/configs/kernel_sampling/test/$op.yml" --device cpu \
			--output-dir "$T/ks" -q
	done
	files=("$T"/ks/sampling_data/*.csv)
	[ "${#files[@]}" -eq 2 ]
	"$P" sample "$T/s.svg" "${files[@]}"
	rows() { tail -n +2 "$T"/ks/sampling_data/*_"$1"_*.csv | wc -l; }
	xcol=$(head -1 "$T"/ks/sampling_data/*_layernorm_*.csv | awk -F, '{ for (i = 1; i <= NF; i++) if ($i == "F_dur(us)") print $(i - 1) }')
	check "$T/s.svg" --size 900x600 --text "kernel-sample: operator times" --text "time (us)" \
		--text "$xcol" --points "layernorm forward=$(($(rows layernorm) + 1))" \
		--points "gelu backward=$(($(rows gelu) + 1))" --colour 1b6ca8 --colour d1495b
	# another column on the x axis
	col=$(head -1 "$T"/ks/sampling_data/*_layernorm_*.csv | cut -d, -f1)
	"$P" sample "$T/s2.svg" "$T"/ks/sampling_data/*_layernorm_*.csv --column "$col"
	check "$T/s2.svg" --text "$col"
	run "$P" sample "$T/s3.svg" "${files[@]}" --column nosuch
	[ "$status" -eq 1 ]
	[[ $output == "plot.sh: error: "*"no column 'nosuch' (not a kernel-sample CSV)" ]]
}

@test "macko-density and macko-vectors: speed-up and bandwidth, a line per shape (the H200 bench CSV)" {
	"$P" macko-density "$T/d.svg" "$MACKO"
	shapes=$(awk -F, 'NR > 1 && $6 == "macko" && $5 == 1 { print $2 "x" $3 }' "$MACKO" | sort -u)
	args=()
	for s in $shapes; do
		n=$(awk -F, -v s="$s" 'NR > 1 && $6 == "macko" && $5 == 1 && $2 "x" $3 == s' "$MACKO" | wc -l)
		args+=(--points "$s=$((2 * (n + 1)))") # two panels
	done
	check "$T/d.svg" --size 1200x520 --text "MACKO SpMV against cuBLAS, by density" \
		--text "speed-up over cuBLAS (x)" --text "bandwidth (GB/s)" --text density \
		--text "28672x8192, 8 vectors" --text cuBLAS --text "device copy" "${args[@]}"
	"$P" macko-vectors "$T/v.png" "$MACKO"
	check "$T/v.png" --size 1200x520 --colour 1b6ca8 --colour d1495b
	"$P" macko-vectors "$T/v.svg" "$MACKO"
	check "$T/v.svg" --text "28672x8192, density 0.5" --points "28672x8192, density 0.5=$((2 * (3 + 1)))"
	# one vector count only: nothing to draw against it
	head -20 "$MACKO" > "$T/one.csv"
	run "$P" macko-vectors "$T/x.svg" "$T/one.csv"
	[ "$status" -eq 1 ]
	[[ $output == "plot.sh: error: "*"one.csv: no shape and density with more than one vector count" ]]
}

@test "ksmm: a cluster of bars per pattern and batch, a bar per data type and layout (the H100 bench CSV)" {
	"$P" ksmm "$T/k.svg" "$KSMM"
	check "$T/k.svg" --text "ksmm-tune: speed-up per pattern" --text "4,64,64,16 B=25088" \
		--text "fp32 bsl" --text "bf16 bsf" --text baseline --colour 1b6ca8
	pats=$(awk -F, 'NR > 1 { print $2 "," $3 "," $4 "," $5 " " $1 }' "$KSMM" | sort -u | wc -l)
	[ "$(grep -c '^pattern' <<< "$(awk -v kind=ksmm -v data=/dev/stdout -f "$REPO/scripts/plot/prepare.awk" "$KSMM")")" = 1 ]
	[ "$(awk -v kind=ksmm -v data="$T/k.dat" -f "$REPO/scripts/plot/prepare.awk" "$KSMM")" = "ncols=7;npats=$pats;" ]
	[ "$(wc -l < "$T/k.dat")" = $((pats + 1)) ]
}

@test "quoted CSV fields: a node name holding commas and quotes stays one field" {
	"$BIN/graph-partition" "$MODELS/resnet18.onnx" -b 32 -f csv -o "$T/r.csv"
	# rename the first conv to a name that needs quoting
	awk -F, 'NR == 2 { $1 = "\"conv, \"\"first\"\"\"" } { print }' OFS=, "$T/r.csv" > "$T/q.csv"
	awk -v kind=roofline -v data="$T/a.dat" -f "$REPO/scripts/plot/prepare.awk" "$T/r.csv" > "$T/a.vars"
	awk -v kind=roofline -v data="$T/b.dat" -f "$REPO/scripts/plot/prepare.awk" "$T/q.csv" > "$T/b.vars"
	cmp "$T/a.dat" "$T/b.dat"
	cmp "$T/a.vars" "$T/b.vars"
}

@test "errors: one line, exit 2 for usage and 1 for bad input, no output file left" {
	"$BIN/graph-partition" "$MODELS/resnet18.onnx" -f csv -o "$T/r.csv"
	run "$P"
	assert_error 2 plot.sh "no KIND given"
	run "$P" pie "$T/o.svg" "$T/r.csv"
	assert_error 2 plot.sh "KIND 'pie' is not one of macko-density, macko-vectors, roofline, train, sample, ksmm"
	run "$P" roofline "$T/o.pdf" "$T/r.csv"
	assert_error 2 plot.sh "OUT '$T/o.pdf' must end in .svg or .png"
	run "$P" roofline "$T/o.svg"
	assert_error 2 plot.sh "no IN.csv given"
	run "$P" roofline "$T/o.svg" "$T/r.csv" --dtype fp64
	assert_error 2 plot.sh "--dtype: 'fp64' is not one of fp32, tf32, fp16, bf16, int8"
	run "$P" roofline "$T/o.svg" "$T/r.csv" --size big
	assert_error 2 plot.sh "--size: 'big' is not WxH"
	run "$P" roofline "$T/o.svg" "$T/r.csv" --bogus
	assert_error 2 plot.sh "unknown option '--bogus'"
	run "$P" roofline "$T/o.svg" "$T/r.csv" --title
	assert_error 2 plot.sh "option '--title' needs a value"
	run "$P" roofline "$T/o.svg" "$T/r.csv" --column ''
	assert_error 2 plot.sh "--column: the value is empty"
	run "$P" roofline "$T/o.svg" "$T/missing.csv"
	assert_error 1 plot.sh "$T/missing.csv: cannot read it"
	run "$P" roofline "$T/o.svg" "$T/r.csv" --hardware tpu
	assert_error 1 plot.sh "--hardware: 'tpu' is neither a file nor a name in configs/hardware"
	run "$P" train "$T/o.svg" "$T/r.csv"
	assert_error 1 plot.sh "$T/r.csv: no column 'epoch' \(not a maxk-train --log\)"
	run "$P" roofline "$T/o.svg" "$T/r.csv" # batch 1 on the H200: every op has a time
	[ "$status" -eq 0 ]
	rm "$T/o.svg"
	head -1 "$T/r.csv" > "$T/empty.csv"
	run "$P" roofline "$T/o.svg" "$T/empty.csv"
	assert_error 1 plot.sh "$T/empty.csv: no operator with FLOPs and a time"
	run "$P" roofline "$T/nodir/o.svg" "$T/r.csv"
	assert_error 1 plot.sh "$T/nodir/o.svg: cannot write in folder '$T/nodir'"
	mkdir "$T/nognuplot" # bash and dirname, no gnuplot
	ln -s "$(command -v bash)" "$(command -v dirname)" "$T/nognuplot/"
	PATH="$T/nognuplot" run "$P" roofline "$T/o.svg" "$T/r.csv"
	assert_error 1 plot.sh "gnuplot is not installed \(Debian: apt-get install gnuplot-nox\)"
	assert_only_files "$T" r.csv empty.csv nognuplot
}

@test "--help lists every kind and option" {
	run "$P" --help
	[ "$status" -eq 0 ]
	for w in macko-density macko-vectors roofline train sample ksmm --hardware --dtype --column --metric --title --size; do
		[[ $output == *"$w"* ]]
	done
}
