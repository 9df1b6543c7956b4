#!/usr/bin/env bash
# The programs' GPU modes from the command line, as a user runs them: what
# the Bats tests can only check up to "no usable CUDA device" on a machine
# without a GPU. Speaks TAP, like the cmocka suites beside it; make test-gpu
# and scripts/gpu-check.sh run it with SPKIT_BIN set to the programs' folder.
set -u
BIN=${SPKIT_BIN:?SPKIT_BIN must name the folder of the programs}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
n=0 failed=0

# check NAME COMMAND...: one TAP line; the command's output is shown on failure
check() {
	local name=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}

# column FILE NAME: the column's values, one a line (the header names it)
column() {
	awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
		c { print $c }' "$1"
}

bench_csv_is_complete() {
	local header
	"$BIN/macko-spmv" bench --rows 2048 --cols 2048 --density 0.3 --reps 5 --warmup 1 \
		--kernels macko,cublas --flush -o a.csv || return 1
	header=$(head -n 1 a.csv)
	[ "$header" = "gpu,rows,cols,density,vectors,kernel,median_us,min_us,max_us,reps,flush,bytes,gbs,copy_gbs,pct_of_copy,speedup_vs_cublas,rel_err" ] ||
		{ echo "header: $header"; return 1; }
	[ "$(column a.csv kernel | tr '\n' ' ')" = "macko cublas " ] || { cat a.csv; return 1; }
	# every result checked against the CPU reference, and timed
	column a.csv rel_err | awk '$1 >= 1e-3 || $1 != $1 + 0 { bad = 1 } END { exit bad }' ||
		{ cat a.csv; return 1; }
	column a.csv median_us | awk '$1 <= 0 { bad = 1 } END { exit bad }'
}
check "macko-spmv bench: the CSV's header, one row per kernel asked for, each checked" \
	bench_csv_is_complete

append_keeps_one_header() {
	"$BIN/macko-spmv" bench --rows 500 --cols 700 --reps 2 --warmup 0 --kernels macko \
		-o b.csv || return 1
	"$BIN/macko-spmv" bench --rows 1000 --cols 3000 --density 0.2 --vectors 3 --reps 3 \
		--warmup 1 --kernels cusparse,cublas --no-flush --append -o b.csv || return 1
	[ "$(grep -c '^gpu,' b.csv)" -eq 1 ] || { cat b.csv; return 1; }
	[ "$(column b.csv kernel | tr '\n' ' ')" = "macko cublas cusparse " ] || { cat b.csv; return 1; }
	[ "$(tail -n 1 b.csv | cut -d, -f2-6,11)" = "1000,3000,0.2,3,cusparse,0" ] || { cat b.csv; return 1; }
}
check "macko-spmv bench --append: rows added under the one header; --no-flush recorded" \
	append_keeps_one_header

matrix_file_is_benched() {
	"$BIN/macko-compress" -q --random 700x900 --density 0.4 --seed 3 -o m.npz || return 1
	"$BIN/macko-spmv" bench --matrix m.npz --vectors 8 --reps 3 --warmup 1 --kernels macko \
		>stdout.csv || return 1
	[ "$(sed -n 2p stdout.csv | cut -d, -f2,3,5,6)" = "700,900,8,macko" ] || { cat stdout.csv; return 1; }
}
check "macko-spmv bench --matrix, CSV on stdout without -o" \
	matrix_file_is_benched

# floats FILE: an f4 .npy's values, one a line (od past the v1 header)
floats() {
	local len
	len=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')
	od -An -v -tf4 -w4 -j$((10 + len)) "$1" | tr -d ' '
}

# multiply_on_both_devices N: N vectors (more than 16 run as several products)
multiply_on_both_devices() {
	local nvec=$1
	"$BIN/macko-compress" -q --random 3000x5000 --density 0.3 --seed 5 -o m.npz || return 1
	"$BIN/macko-compress" -q --random "${nvec}x5000" --density 1 --seed 6 -o x.npz || return 1
	"$BIN/macko-compress" -q --decompress x.npz -o x.npy || return 1
	"$BIN/macko-spmv" m.npz x.npy -o cpu.npy --device cpu || return 1
	"$BIN/macko-spmv" m.npz x.npy -o gpu.npy --device cuda -v 2>log || { cat log; return 1; }
	[ "$(stat -c %s cpu.npy)" -eq "$(stat -c %s gpu.npy)" ] || return 1
	# f32 sums in different orders: relative error (2-norm) under 1e-5
	paste <(floats cpu.npy) <(floats gpu.npy) |
		awk '{ d = $1 - $2; e += d * d; r += $1 * $1; n++ }
			END { printf "%d values, relative error %.2e\n", n, sqrt(e / r);
			      exit !(n == 3000 * '"$nvec"' && r > 0 && sqrt(e / r) < 1e-5) }'
}
check "macko-spmv --device cuda against --device cpu, three vectors" \
	multiply_on_both_devices 3
check "macko-spmv --device cuda against --device cpu, 37 vectors (three products)" \
	multiply_on_both_devices 37

# maxk-train on the GPU: its NVTX ranges as nsys records them (each epoch
# holding forward, backward and step), and the log streamed to stdout.
train_ranges_in_nsys() {
	"$BIN/maxk-train" -q --synthetic csbm:nodes=2000 --epochs 3 --device cuda --log - \
		> log.csv || return 1
	[ "$(cut -d, -f1 log.csv | cut -d' ' -f1 | tr '\n' ' ')" = "epoch 1 2 3 Final Best Peak " ] ||
		{ cat log.csv; return 1; }
	command -v nsys > /dev/null || { echo "SKIP: no nsys"; return 0; }
	nsys profile --trace cuda,nvtx -o prof --force-overwrite true "$BIN/maxk-train" -q \
		--synthetic csbm:nodes=2000 --epochs 3 --device cuda > /dev/null 2>&1 || return 1
	nsys stats --report nvtx_sum --format csv prof.nsys-rep > nvtx.csv 2>/dev/null || return 1
	local r
	for r in epoch forward backward step evaluate; do
		grep -qE "(^|[,:\"])$r(\"|,|$)" nvtx.csv || { echo "no range $r"; cat nvtx.csv; return 1; }
	done
}
check "maxk-train --device cuda: NVTX ranges epoch, forward, backward, step, evaluate; --log -" \
	train_ranges_in_nsys

maxk_bench_checks_every_kernel() {
	"$BIN/maxk-train" --bench-kernels --synthetic flickr_like --hidden 64,300 --maxk 3,17 \
		--reps 2 --warmup 1 -o k.csv || return 1
	# 2 widths x 2 k x 7 kernels
	[ "$(($(wc -l <k.csv) - 1))" -eq 28 ] || { cat k.csv; return 1; }
	# top-k keeps exactly what the CPU keeps; the products to fp32 rounding
	awk -F, 'NR > 1 && $6 == "maxk_topk" && $13 != 0 { bad = 1 }
		NR > 1 && $6 != "maxk_topk" && !($13 < 1e-4) { bad = 1 } END { exit bad }' k.csv ||
		{ cat k.csv; return 1; }
}
check "maxk-train --bench-kernels: top-k exact against the CPU, products against cuSPARSE" \
	maxk_bench_checks_every_kernel

# ksmm-tune: a small space of its own (so the test needs no configs/ folder)
cat >space.yaml <<'YAML'
simt: {tile_rows: [32, 64], tile_k: [16, 32], tile_batch: [64, 128], thread_rows: [4, 8], thread_batch: [4, 8], vec: [4], stages: [2], tf32: 0, tile_d: [1, 4]}
mma: {tile_rows: [32, 64], tile_k: 32, tile_batch: [32, 128], thread_rows: 32, thread_batch: [16, 64], vec: 8, stages: 2, tf32: 0, tile_d: [1, 2]}
YAML
export SPKIT_CACHE_DIR=$T/nvrtc-cache

# Two patterns (b != c, d = 1) at a batch no tile divides, both dtypes of
# 16 and 32 bits, both layouts.
TUNE=(tune --pattern 4,64,64,16 --pattern 2,48,192,1 --batch 1000 --dtype fp32,fp16
	--layout bsf,bsl --space space.yaml --reps 5 --warmup 1)

tune_matches_dry_run() {
	"$BIN/ksmm-tune" "${TUNE[@]}" --dry-run -q >plan.csv || return 1
	"$BIN/ksmm-tune" "${TUNE[@]}" -o r.csv || return 1
	local want have
	want=$(grep -c ',run$' plan.csv)
	have=$(($(wc -l <r.csv) - 1))
	[ "$want" -eq "$have" ] || { echo "$have rows, the dry run says $want"; return 1; }
	# every job has an ok configuration; no configuration computes wrong
	awk -F, 'NR > 1 { job = $1 FS $2 FS $3 FS $4 FS $5 FS $6 FS $7; jobs[job] = 1
		if ($21 == "ok") ok[job] = 1; if ($21 == "wrong") { print "wrong: " $0; bad = 1 } }
		END { for (j in jobs) if (!ok[j]) { print "no ok row: " j; bad = 1 }; exit bad }' r.csv
}
check "ksmm-tune tune: a row for every configuration the dry run says runs, each checked" \
	tune_matches_dry_run

resumed_sweep_loses_nothing() {
	cp r.csv whole.csv
	"$BIN/ksmm-tune" "${TUNE[@]}" -o r.csv 2>log || { cat log; return 1; }
	cmp r.csv whole.csv || { echo "a finished sweep rerun changed its file"; return 1; }
	grep -q "configurations run (0 ok)" log || { cat log; return 1; }
	# a fresh sweep of the same configurations compiles nothing: the disk cache has them all
	"$BIN/ksmm-tune" "${TUNE[@]}" -o again.csv 2>log || { cat log; return 1; }
	grep -q "NVRTC: 0 compiled" log || { cat log; return 1; }
	"$BIN/ksmm-tune" "${TUNE[@]}" -o killed.csv -q &
	local pid=$!
	sleep 2
	kill -TERM "$pid"
	wait "$pid"
	local kept=$(($(wc -l <killed.csv) - 1))
	"$BIN/ksmm-tune" "${TUNE[@]}" -o killed.csv -q || return 1
	echo "killed with $kept rows"
	[ "$(cut -d, -f1-17 killed.csv | sort | uniq -d | wc -l)" -eq 0 ] || { echo "repeated rows"; return 1; }
	[ "$(cut -d, -f1-17 killed.csv | sort)" = "$(cut -d, -f1-17 whole.csv | sort)" ]
}
check "ksmm-tune tune: killed and rerun, the same rows, none twice" resumed_sweep_loses_nothing

npy_random() { # SHAPE FILE: float32 uniform values in [-1, 1)
	python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.random.default_rng(3).uniform(-1, 1, tuple(int(x) for x in sys.argv[1].split(','))).astype(np.float32))" "$1" "$2"
}

apply_on_both_devices() {
	python3 -c 'import numpy' 2>/dev/null || { echo "no numpy here: skipped"; return 0; }
	"$BIN/ksmm-tune" best r.csv -o best.csv || return 1
	npy_random 4,64,64,16 w1.npy && npy_random 2,128,256,8 w2.npy && npy_random 1000,4096 x.npy || return 1
	for dtype in fp32 fp16; do
		"$BIN/ksmm-tune" apply --pattern 4,64,64,16 --pattern 2,128,256,8 --weights w1.npy,w2.npy \
			--dtype $dtype x.npy -o cpu.npy --device cpu || return 1
		"$BIN/ksmm-tune" apply --pattern 4,64,64,16 --pattern 2,128,256,8 --weights w1.npy,w2.npy \
			--dtype $dtype x.npy -o gpu.npy --device cuda --table best.csv -v || return 1
		python3 -c "
import numpy as np, sys
c = np.load('cpu.npy').astype(np.float64); g = np.load('gpu.npy').astype(np.float64)
e = np.abs(c - g).max() / np.abs(c).max()
print(sys.argv[1], c.shape, 'relative error', e)
sys.exit(not (c.shape == g.shape and e < (1e-5 if sys.argv[1] == 'fp32' else 1e-2)))" $dtype || return 1
	done
}
check "ksmm-tune apply --device cuda --table against --device cpu, a chain of two, fp32 and fp16" \
	apply_on_both_devices

bench_rows() {
	"$BIN/ksmm-tune" bench --pattern 4,64,64,16 --pattern 2,48,192,1 --batch 1000 --reps 5 \
		--warmup 1 --table best.csv -o b.csv || return 1
	[ "$(($(wc -l <b.csv) - 1))" -eq 2 ] || { cat b.csv; return 1; }
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["kernel_status"] != "ok" || !($c["floor_ms"] > 0) { print; bad = 1 } END { exit bad }' b.csv
}
check "ksmm-tune bench: a row per pattern, the kernel checked, the floor measured" bench_rows

# 16,64,64,16 at batch 4096 in fp32: a dense 16384 x 16384 GEMM, 2.2 TFLOP,
# against a bmm of 1/256th the work: dense is timed once and marked slow
slow_dense_stops_early() {
	"$BIN/ksmm-tune" bench --pattern 16,64,64,16 --batch 4096 --dtype fp32 --layout bsl \
		--reps 5 --warmup 1 --skip bsr -o slow.csv || return 1
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["dense_status"] == "slow" && $c["dense_ms"] > 2 * $c["bmm_ms"] &&
		$c["bmm_status"] == "ok" && $c["best_baseline"] != "dense" { ok = 1 }
		END { exit !ok }' slow.csv || { cat slow.csv; return 1; }
}
check "ksmm-tune bench: a dense baseline over twice bmm's time is timed once, marked slow, never the best" \
	slow_dense_stops_early

ncu_runs_one() {
	local out
	out=$("$BIN/ksmm-tune" tune --pattern 4,64,64,16 --batch 1000 --space space.yaml --ncu -q) || return 1
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || { echo "$out"; return 1; }
	[[ $(printf '%s\n' "$out" | tail -n 1) == *,ok ]] || { echo "$out"; return 1; }
}
check "ksmm-tune tune --ncu: one configuration, once, its row on stdout" ncu_runs_one

# kernel-sample's configs, in the source tree two folders above this script
# (tests/gpu/, or build/tests/ where make gpu-tests copies it); $0 may be
# relative to the folder the script was started in, which cd "$T" left
SAMPLE_CONFIGS=$(cd "$OLDPWD" && cd "$(dirname "$0")/../.." && pwd)/configs/kernel_sampling

sample_sweeps_every_test_config() {
	local f csv name
	for f in "$SAMPLE_CONFIGS"/test/*.yml; do
		"$BIN/kernel-sample" -q "$f" --device cuda --output-dir s || return 1
	done
	[ "$(ls s/sampling_data | wc -l)" -eq "$(ls "$SAMPLE_CONFIGS"/test/*.yml | wc -l)" ] ||
		{ ls s/sampling_data; return 1; }
	for csv in s/sampling_data/*.csv; do
		name=$(basename "$csv" _fp16_1_1.csv | cut -d_ -f2-) # DEVICE_OP_fp16_1_1.csv
		# one row per shape of the config (its log's Start line says how many)
		# but those its log says it skipped (flash_atten's head sizes other than
		# 64 and 128), each forward time positive; B_dur 0 only for the
		# operators timed as one call (res_add, the optimizer steps,
		# macko_spmv, ksmm)
		local log shapes skipped
		log="s/sampling_log/$(basename "$csv" .csv).txt"
		shapes=$(sed -n 's/.*Start: part 1 of 1, \([0-9]*\) shapes.*/\1/p' "$log")
		skipped=$(grep -c '| Skipped: ' "$log")
		[ "$(($(wc -l <"$csv") - 1))" -eq "$((shapes - skipped))" ] ||
			{ echo "$name: $shapes shapes, $skipped skipped"; cat "$csv"; return 1; }
		awk -F, -v op="$name" 'BEGIN { one = op ~ /^(res_add|.*Stage_optimizer|macko_spmv|ksmm)$/ }
			NR > 1 && !($(NF - 1) > 0) { bad = 1 }
			NR > 1 && one != ($NF == 0) { bad = 1 } END { exit bad }' "$csv" ||
			{ echo "$name:"; cat "$csv"; return 1; }
	done
}
check "kernel-sample: every test config sweeps on the GPU, a timed row per shape" \
	sample_sweeps_every_test_config

sample_single_shape_modes() {
	local cfg=$SAMPLE_CONFIGS/collect/bmm.yml out
	out=$("$BIN/kernel-sample" "$cfg" --device cuda:0 --run get_one) || return 1
	[[ $out =~ ^bmm_fp16:\ input_shape:\ \[2,\ 16,\ 16,\ 2048,\ 1024\]\ timecost\(us\)\ \[fwd,\ bwd\]:\ \[[0-9.]+,\ [0-9.]+\]$ ]] ||
		{ echo "$out"; return 1; }
	out=$("$BIN/kernel-sample" "$cfg" --device cuda --run get_profiler --precision bf16) || return 1
	[ "$out" = "ncu --nvtx --nvtx-include bmm_bf16_2_16_16_2048_1024/ $BIN/kernel-sample $cfg --device cuda --run get_profiler --precision bf16" ] ||
		{ echo "$out"; return 1; }
	"$BIN/kernel-sample" -q "$cfg" --device cuda --run run_function --precision fp32 || return 1
	# a shape the operator accepts but no card holds (logits and their gradient,
	# 2^20 tokens x 50304 x 2 bytes each, 210 GB): one line saying so, exit 1
	out=$("$BIN/kernel-sample" "$SAMPLE_CONFIGS/collect/linear_final.yml" --device cuda \
		--run get_one --shape 1,1024,1024,16 2>&1) && { echo "$out"; return 1; }
	[ "$(echo "$out" | wc -l)" -eq 1 ] &&
		[[ $out == "kernel-sample: error: "*"linear_final [1, 1024, 1024, 16]: "*memory* ]] ||
		{ echo "$out"; return 1; }
}
check "kernel-sample get_one, get_profiler (its ncu command), run_function; a shape out of memory" \
	sample_single_shape_modes

sample_attention_backends() {
	local cfg=$SAMPLE_CONFIGS/test/flash_atten_causal.yml out
	out=$("$BIN/kernel-sample" -v "$cfg" --device cuda --attention own --run get_one 2>&1) ||
		{ echo "$out"; return 1; }
	[[ $out == "flash_atten: spkit's own kernel"*"flash_atten_causal_fp16: input_shape: [2, 2, 4, 41, 256] timecost(us)"* ]] ||
		{ echo "$out"; return 1; }
	# cuDNN: timed where libcudnn.so.9 loads, else one line and exit 1
	if out=$("$BIN/kernel-sample" -v "$cfg" --device cuda --attention cudnn --run get_one 2>&1); then
		[[ $out == "flash_atten: cuDNN's fused attention"*"timecost(us)"* ]] || { echo "$out"; return 1; }
	else
		[ $? -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] &&
			[[ $out == "kernel-sample: error: --attention cudnn: "* ]] || { echo "$out"; return 1; }
	fi
}
check "kernel-sample --attention own and cudnn on flash_atten (cudnn: timed, or why it cannot load)" \
	sample_attention_backends

sample_calibrate_on_gpu() {
	local out
	printf 'op,shape,precision,F_dur(us),B_dur(us),device\nlayernorm,b=2 l=300 dim=1024,fp16,10.0,20.0,x\n' >torch.csv
	out=$("$BIN/kernel-sample" calibrate -q --device cuda --encoder 1,2,16,300,1024 \
		--ops layernorm,linear1,res_add --attention own --torch torch.csv) || { echo "$out"; return 1; }
	[ "$(echo "$out" | wc -l)" -eq 4 ] || { echo "$out"; return 1; }
	# on the GPU the memory-bound rows have a share of the copy bandwidth, in (0, 1.5)
	echo "$out" | awk -F, '$1 == "layernorm" && $9 > 0 && $9 < 1.5 && $10 > 0 && $10 < 1.5 &&
		$11 == 10 && $13 > 0 { ok = 1 } END { exit !ok }' || { echo "$out"; return 1; }
	echo "$out" | awk -F, '$1 == "linear1" && $6 == "TFLOP/s" && $7 > 0 && $9 == "" { ok = 1 }
		END { exit !ok }' || { echo "$out"; return 1; }
}
check "kernel-sample calibrate on the GPU: rates, shares of the copy bandwidth, PyTorch's row joined" \
	sample_calibrate_on_gpu

echo "1..$n"
[ "$failed" -eq 0 ]
