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

multiply_on_both_devices() {
	"$BIN/macko-compress" -q --random 3000x5000 --density 0.3 --seed 5 -o m.npz || return 1
	"$BIN/macko-compress" -q --random 3x5000 --density 1 --seed 6 -o x.npz || return 1
	"$BIN/macko-compress" -q --decompress x.npz -o x.npy || return 1
	"$BIN/macko-spmv" m.npz x.npy -o cpu.npy --device cpu || return 1
	"$BIN/macko-spmv" m.npz x.npy -o gpu.npy --device cuda -v 2>log || { cat log; return 1; }
	[ "$(stat -c %s cpu.npy)" -eq "$(stat -c %s gpu.npy)" ] || return 1
	# f32 sums in different orders: relative error (2-norm) under 1e-5
	paste <(floats cpu.npy) <(floats gpu.npy) |
		awk '{ d = $1 - $2; e += d * d; r += $1 * $1; n++ }
			END { printf "%d values, relative error %.2e\n", n, sqrt(e / r);
			      exit !(n == 9000 && r > 0 && sqrt(e / r) < 1e-5) }'
}
check "macko-spmv --device cuda against --device cpu, three vectors" \
	multiply_on_both_devices

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

# kernel-sample's configs, in the source tree two folders above this script
# (tests/gpu/, or build/tests/ where make gpu-tests copies it)
SAMPLE_CONFIGS=$(cd "$(dirname "$0")/../.." && pwd)/configs/kernel_sampling

sample_sweeps_every_test_config() {
	local f csv name
	for f in "$SAMPLE_CONFIGS"/test/*.yml; do
		"$BIN/kernel-sample" -q "$f" --device cuda --output-dir s || return 1
	done
	[ "$(ls s/sampling_data | wc -l)" -eq 17 ] || { ls s/sampling_data; return 1; }
	for csv in s/sampling_data/*.csv; do
		name=$(basename "$csv" _fp16_1_1.csv | cut -d_ -f2-) # DEVICE_OP_fp16_1_1.csv
		# one row per shape of the config (its log's Start line says how many), each
		# forward time positive; B_dur 0 only for res_add
		grep -q "Start: part 1 of 1, $(($(wc -l <"$csv") - 1)) shapes" \
			"s/sampling_log/$(basename "$csv" .csv).txt" || { cat "$csv"; return 1; }
		awk -F, -v op="$name" 'NR > 1 && !($(NF - 1) > 0) { bad = 1 }
			NR > 1 && (op == "res_add") != ($NF == 0) { bad = 1 } END { exit bad }' "$csv" ||
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

echo "1..$n"
[ "$failed" -eq 0 ]
