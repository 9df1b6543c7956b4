#!/usr/bin/env bats
# kernel-sample's operators beyond the transformer's on the CPU path
# (--device cpu): moe, the three optimizer stages, maxk_spmm, macko_spmv and
# ksmm; their shipped test configs, the shapes they refuse and why, the
# one-call operators' B_dur of 0, and --ksmm-table.
load helpers

K=kernel-sample

rows() {
	tail -n +2 "$1"
}

# sweep OP PRECISION SHAPES HEADER: the shipped test config of OP swept on the
# CPU in $T, every shape measured, the CSV's header HEADER; $csv names it.
sweep() {
	cd "$T"
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/$1.yml" --device cpu --precision "$2"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[[ $output == *"$1_$2: part 1 of 1, $3 shapes: $3 measured, 0 skipped, 0 failed"* ]]
	csv=$(ls sampling_data/*_"$1_$2"_1_1.csv)
	[ "$(head -1 "$csv")" = "$4" ]
}

# refused OP SHAPE REASON: get_one at SHAPE is an error ending in REASON.
refused() {
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/$1.yml" --device cpu --run get_one --shape "$2"
	assert_error 1 $K "$1 \\[${2//,/, }\\]: $3\$"
}

@test "moe: the test config sweeps every shape with the original's seven columns" {
	sweep moe bf16 32 "mp,b,l,dim,moe_num_experts,intermediate_size,top_k,F_dur(us),B_dur(us)"
	[ "$(rows "$csv" | head -1 | cut -d, -f1-7)" = "1,2,8,16,4,16,1" ]
	# both directions timed: positive
	rows "$csv" | cut -d, -f8,9 | tr ',' '\n' | grep -qvE '^[0-9]*\.?[0-9]+$' && return 1
	rows "$csv" | cut -d, -f8,9 | tr ',' '\n' | grep -qE '^0(\.0+)?$' && return 1
	true
}

@test "moe: shapes the original refuses are skipped with the reason" {
	cat >"$T/moe.yml" <<'YML'
{ "kernel_name": "moe",
  "columns_name": ['mp', 'b', 'l', 'dim', 'moe_num_experts', 'intermediate_size', 'top_k', 'F_dur(us)', 'B_dur(us)'],
  "first_n_column": 7, "starts": [1, 1, 4, 8, 2, 16, 1], "steps": [2, 1, 1, 1, 3, 16, 2],
  "ends": [2, 1, 4, 8, 5, 48, 2], "operators": ['mul', 'add', 'add', 'add', 'add', 'add', 'mul'],
  "wait": 0, "warmup": 1, "active": 2 }
YML
	cd "$T"
	run "$BIN/$K" -v moe.yml --device cpu
	[ "$status" -eq 0 ]
	# mp 1, 2 x experts 2, 5 x intermediate 16, 32, 48 x top_k 1, 2
	[[ $output == *"moe_fp16 [1, 1, 4, 8, 2, 48, 1] skipped: intermediate_size 48 is above 4 dim (32)"* ]]
	[[ $output == *"moe_fp16 [2, 1, 4, 8, 2, 16, 2] skipped: mp 2 times top_k 2 is above moe_num_experts 2"* ]]
	[[ $output == *"moe_fp16 [2, 1, 4, 8, 5, 16, 1] skipped: moe_num_experts 5 not divisible by mp 2"* ]]
	[[ $output == *"24 shapes: 10 measured, 14 skipped, 0 failed"* ]]
	grep -q '| Skipped: \[1, 1, 4, 8, 5, 48, 2\]: intermediate_size 48 is above 4 dim (32)$' sampling_log/*.txt
}

@test "moe: get_one at a --shape; a refused one is an error naming the shape" {
	cd "$T"
	cfg=$REPO/configs/kernel_sampling/test/moe.yml
	run "$BIN/$K" "$cfg" --device cpu --run get_one --shape 2,1,6,8,4,6,2
	[ "$status" -eq 0 ]
	[[ $output =~ ^moe_fp16:\ input_shape:\ \[2,\ 1,\ 6,\ 8,\ 4,\ 6,\ 2\]\ timecost\(us\)\ \[fwd,\ bwd\]:\ \[[0-9]+\.[0-9]{3},\ [0-9]+\.[0-9]{3}\]$ ]]
	run "$BIN/$K" "$cfg" --device cpu --run get_one --shape 2,1,7,8,4,6,2
	assert_error 1 $K "^kernel-sample: error: .*moe.yml: moe \[2, 1, 7, 8, 4, 6, 2\]: l 7 not divisible by mp 2$"
	run "$BIN/$K" "$cfg" --device cpu --run get_one --shape 2,1,6,8,4,6
	assert_error 2 $K "--shape: 6 values, the config's shapes have 7"
	[ ! -e sampling_data ]
}

@test "optimizer stages: one call each (B_dur 0), mp dividing dim, the first and last stages hold the vocabulary" {
	cd "$T"
	for s in first middle last; do
		run "$BIN/$K" "$REPO/configs/kernel_sampling/test/${s}Stage_optimizer.yml" --device cpu --precision fp32
		[ "$status" -eq 0 ]
		[[ $output == *"${s}Stage_optimizer_fp32: part 1 of 1, 8 shapes: 8 measured, 0 skipped"* ]]
		csv=$(ls sampling_data/*_${s}Stage_optimizer_fp32_1_1.csv)
		[ "$(head -1 "$csv")" = "mp,dim,encoders,F_dur(us),B_dur(us)" ]
		[ "$(rows "$csv" | cut -d, -f5 | sort -u)" = "0" ]
	done
	# mp 1, dim 16, 1 encoder: 3,488 parameters in the middle, 808,352 more
	# (the 50,304-row embedding partition) in the first: the step takes longer
	first=$(rows sampling_data/*_firstStage_optimizer_fp32_1_1.csv | head -1 | cut -d, -f4)
	middle=$(rows sampling_data/*_middleStage_optimizer_fp32_1_1.csv | head -1 | cut -d, -f4)
	awk -v f="$first" -v m="$middle" 'BEGIN { exit !(f > 10 * m) }'
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/lastStage_optimizer.yml" --device cpu --run get_one --shape 3,16,1
	assert_error 1 $K "lastStage_optimizer \[3, 16, 1\]: dim 16 not divisible by mp 3$"
}

@test "maxk_spmm: the test config sweeps; refused graphs and widths are skipped with the reason" {
	sweep maxk_spmm fp16 16 "nodes,degree,hidden,k,F_dur(us),B_dur(us)"
	[ "$(rows "$csv" | cut -d, -f1-4 | head -2 | tr '\n' ' ')" = "64,2,8,2 64,2,8,4 " ]
	refused maxk_spmm 8,8,16,4 "degree 8 is not below nodes 8 \(no self-loops or repeats\)"
	refused maxk_spmm 64,2,16,17 "k 17 is above hidden 16"
	refused maxk_spmm 64,2,2048,4 "hidden 2048 is above 1024"
}

@test "macko_spmv: the test config sweeps (one call: B_dur 0); density in percent and vectors are checked" {
	sweep macko_spmv bf16 16 "rows,cols,density,vectors,F_dur(us),B_dur(us)"
	[ "$(rows "$csv" | cut -d, -f6 | sort -u)" = "0" ]
	refused macko_spmv 64,64,150,1 "density 150 is above 100 \(percent\)"
	refused macko_spmv 64,64,50,17 "vectors 17 is above 16"
}

@test "ksmm: the test config sweeps (one call: B_dur 0); --ksmm-table is read and checked on any device" {
	sweep ksmm fp32 32 "a,b,c,d,batch,F_dur(us),B_dur(us)"
	[ "$(rows "$csv" | cut -d, -f7 | sort -u)" = "0" ]
	cfg=$REPO/configs/kernel_sampling/test/ksmm.yml
	# a ksmm-tune best table: accepted
	printf '%s\n' "batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows,thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status" \
		"64,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.1,0.01,1e-08,ok" >best.csv
	run "$BIN/$K" "$cfg" --device cpu --run get_one --ksmm-table best.csv
	[ "$status" -eq 0 ]
	[[ $output == "ksmm_fp16: input_shape: [2, 16, 16, 2, 64] timecost(us)"* ]]
	# not one: an error naming the file, nothing run
	echo "not,a,table" >bad.csv
	run "$BIN/$K" "$cfg" --device cpu --ksmm-table bad.csv --output-dir out
	assert_error 1 $K "bad.csv"
	[ ! -e out ]
	run "$BIN/$K" "$cfg" --device cpu --ksmm-table missing.csv
	assert_error 1 $K "missing.csv"
	refused ksmm 64,64,64,64,16384 "the shape: pattern 64,64,64,64 at batch 16384: a\\*b\\*d\\*batch reaches 2\\^31, past 32-bit indexing"
}
