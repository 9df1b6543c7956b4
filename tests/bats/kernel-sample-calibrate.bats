#!/usr/bin/env bats
# kernel-sample calibrate on the CPU path: operators timed at an encoder's
# shape with the bytes or FLOPs they must move or do, PyTorch's CSV joined
# by operator and shape with the ratio, and every bad input: a CSV without
# the columns, of another precision, with a time that is not one; unknown
# or non-encoder operators, a wrong --encoder, an unrunnable shape (no
# partial output, in a file or on standard output).
load helpers

K=kernel-sample
ENC=1,2,2,16,128 # mp, b, h, l, dim: head size 64

# field NAME: the column NAME of the row of $op in $T/out.csv
field() {
	awk -F, -v op="$op" -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == op { print $(c[name]); exit }' "$T/out.csv"
}

@test "calibrate has --help and --version, and lists itself in the usage" {
	assert_help_version $K calibrate
	[[ $output == *"kernel-sample calibrate [OPTION]... [--torch TORCH.csv] [-o OUT.csv]"* ]]
}

@test "calibrate: the operators at an encoder's shape, named as the PyTorch script names them, with the bytes and FLOPs behind their rates" {
	run "$BIN/$K" calibrate -q --device cpu --encoder $ENC --ops layernorm,linear1,res_add,flash_atten -o "$T/out.csv"
	[ "$status" -eq 0 ]
	[ "$(head -1 "$T/out.csv")" = "op,shape,precision,F_dur(us),B_dur(us),rate_unit,F_rate,B_rate,F_of_copy,B_of_copy,torch_F_dur(us),torch_B_dur(us),F_ratio,B_ratio" ]
	[ "$(cut -d, -f1-3 "$T/out.csv" | tail -n +2 | tr '\n' ' ')" = "layernorm,b=2 l=16 dim=128,fp16 linear1,mp=1 b=2 l=16 dim=128,fp16 res_add,b=2 l=16 dim=128,fp16 flash_atten,mp=1 b=2 h=2 l=16 dim=128,fp16 " ]
	# rate * time = what the operator must move or do: layernorm's forward
	# reads x and writes y (2 x 16 x 128 fp16 each: 16384 bytes), its
	# backward x, dy and dx (24576); linear1 2 (b l) dim (3 dim) = 3145728
	# FLOPs forward, twice that backward; attention 4 b h l^2 (dim/h) =
	# 262144, 2.5 times that backward
	for want in "layernorm GB/s 16384e-9 24576e-9" "linear1 TFLOP/s 3145728e-12 6291456e-12" \
		"flash_atten TFLOP/s 262144e-12 655360e-12"; do
		set -- $want
		op=$1
		[ "$(field rate_unit)" = "$2" ]
		awk -v f="$(field F_rate)" -v t="$(field 'F_dur(us)')" -v want="$3" \
			'BEGIN { got = f * t * 1e-6; exit !(got > 0.99 * want && got < 1.01 * want) }'
		awk -v f="$(field B_rate)" -v t="$(field 'B_dur(us)')" -v want="$4" \
			'BEGIN { got = f * t * 1e-6; exit !(got > 0.99 * want && got < 1.01 * want) }'
	done
	# res_add has no backward; the CPU has no copy bandwidth to compare with
	op=res_add
	[ -z "$(field 'B_dur(us)')" ] && [ -z "$(field B_rate)" ]
	[ -z "$(field F_of_copy)" ]
	# no --torch: no PyTorch columns
	[ -z "$(field 'torch_F_dur(us)')" ] && [ -z "$(field F_ratio)" ]
}

@test "calibrate --torch: PyTorch's times joined by operator and shape, ours / theirs; rows it lacks stay empty" {
	cat >"$T/torch.csv" <<EOF
op,shape,precision,F_dur(us),B_dur(us),device
layernorm,b=2 l=16 dim=128,fp16,10.0,40.0,NVIDIA H100 80GB HBM3
layernorm,b=4 l=2048 dim=4096,fp16,60.4,242.5,NVIDIA H100 80GB HBM3
res_add,b=2 l=16 dim=128,fp16,5.0,,NVIDIA H100 80GB HBM3
flash_atten@FLASH_ATTENTION,mp=1 b=2 h=2 l=16 dim=128,fp16,1.0,2.0,NVIDIA H100 80GB HBM3
EOF
	run "$BIN/$K" calibrate -v --device cpu --encoder $ENC --ops layernorm,res_add,flash_atten --torch "$T/torch.csv" -o "$T/out.csv"
	[ "$status" -eq 0 ]
	[[ $output == *"PyTorch's times from NVIDIA H100 80GB HBM3"* ]]
	op=layernorm
	[ "$(field 'torch_F_dur(us)')" = 10 ] && [ "$(field 'torch_B_dur(us)')" = 40 ]
	awk -v r="$(field F_ratio)" -v t="$(field 'F_dur(us)')" 'BEGIN { exit !(r > 0.999 * t / 10 && r < 1.001 * t / 10) }'
	awk -v r="$(field B_ratio)" -v t="$(field 'B_dur(us)')" 'BEGIN { exit !(r > 0.999 * t / 40 && r < 1.001 * t / 40) }'
	op=res_add
	[ "$(field 'torch_F_dur(us)')" = 5 ] && [ -z "$(field 'torch_B_dur(us)')" ] && [ -z "$(field B_ratio)" ]
	# PyTorch's SDPA as it picks is the row named flash_atten; a backend forced is another row
	op=flash_atten
	[ -z "$(field 'torch_F_dur(us)')" ] && [ -z "$(field F_ratio)" ]
}

@test "calibrate at fp32: the default set leaves out fused attention (half precision only), --ops naming it is an error" {
	run "$BIN/$K" calibrate -v --device cpu --precision fp32 --encoder 1,1,2,8,128 -o "$T/all.csv"
	[ "$status" -eq 0 ]
	[[ $output == *"flash_atten: skipped: flash_atten runs in fp16 or bf16 only"* ]]
	[[ $output == *"flash_atten_causal: skipped: "* ]]
	# the 19 transformer operators less the two fused attentions, once each
	[ "$(tail -n +2 "$T/all.csv" | wc -l)" -eq 17 ]
	! grep -q '^flash_atten' "$T/all.csv"
	grep -q '^ScaledUpperTriangMaskedSoftmax,mp=1 b=1 h=2 l=8,fp32,' "$T/all.csv"
	run "$BIN/$K" calibrate -v --device cpu --precision fp32 --encoder 1,1,2,8,128 --ops linear2,flash_atten -o "$T/out.csv"
	assert_error 1 $K "flash_atten runs in fp16 or bf16 only"
	[ ! -e "$T/out.csv" ]
}

# torch_refused NAME TEXT: calibrate --torch on TEXT (printf's format) saved
# as $T/NAME, run as $output, with nothing written to $T/out.csv
torch_refused() {
	printf "$2" >"$T/$1"
	run "$BIN/$K" calibrate --device cpu --encoder $ENC --ops layernorm --torch "$T/$1" -o "$T/out.csv"
	[ ! -e "$T/out.csv" ]
}

@test "calibrate: a PyTorch CSV without the columns, of another precision, with a time that is not one, or empty, is one error naming it, and nothing is written" {
	H='op,shape,precision,F_dur(us),B_dur(us),device\n'
	torch_refused nocol.csv 'op,shape,F_dur(us),B_dur(us),device\nlayernorm,b=2,1,2,x\n'
	assert_error 1 $K "nocol.csv: no column 'precision' \(scripts/bench-sample-torch.py writes"
	torch_refused bf16.csv "${H}layernorm,b=2,bf16,1,2,x\n"
	assert_error 1 $K "bf16.csv: line 2: PyTorch timed at bf16, this calibration is at fp16$"
	torch_refused nan.csv "${H}layernorm,b=2,fp16,1,nan,x\n"
	assert_error 1 $K "nan.csv: line 2: F_dur\(us\) '1' or B_dur\(us\) 'nan' is not a time$"
	# a quoted field spanning lines stays on the message's one line
	torch_refused multi.csv "${H}layernorm,b=2,fp16,55,\"1\n2\",x\n"
	assert_error 1 $K "multi.csv: line 2: F_dur\(us\) '55' or B_dur\(us\) '1\\\\n2' is not a time$"
	[ "${#lines[@]}" -eq 1 ]
	torch_refused empty.csv ''
	assert_error 1 $K "empty.csv: empty \(no header\)$"
	run "$BIN/$K" calibrate --device cpu --encoder $ENC --ops layernorm --torch "$T/missing.csv" -o "$T/out.csv"
	assert_error 1 $K "missing.csv"
	[ ! -e "$T/out.csv" ]
}

@test "calibrate: unknown or non-encoder operators, a wrong --encoder or precision are usage errors; an unrunnable shape is an error naming it, with no partial output" {
	run "$BIN/$K" calibrate --device cpu --ops layernorm,nosuch
	assert_error 2 $K "--ops: unknown operator 'nosuch'"
	run "$BIN/$K" calibrate --device cpu --ops , -o "$T/out.csv"
	assert_error 2 $K "--ops: an empty item in ','"
	run "$BIN/$K" calibrate --device cpu --ops layernorm,,res_add -o "$T/out.csv"
	assert_error 2 $K "--ops: an empty item in 'layernorm,,res_add'"
	run "$BIN/$K" calibrate --device cpu --encoder 1,,2,2,16,128 -o "$T/out.csv"
	assert_error 2 $K "--encoder: an empty item in '1,,2,2,16,128'"
	[ ! -e "$T/out.csv" ]
	run "$BIN/$K" calibrate --device cpu --ops moe
	assert_error 2 $K "--ops: moe's shape is not a transformer encoder's"
	run "$BIN/$K" calibrate --device cpu --encoder 1,2,2,16
	assert_error 2 $K "--encoder: expected 5 values, mp,b,h,l,dim"
	run "$BIN/$K" calibrate --device cpu --precision fp64
	assert_error 2 $K "--precision: 'fp64' is not one of fp16, bf16, fp32"
	run "$BIN/$K" calibrate --device cpu --attention cudnn --ops flash_atten
	assert_error 1 $K "--attention cudnn: the run is on the CPU"
	# dim 96 over h 2: head size 48, which fused attention does not run; the
	# rows before it (layernorm) are not left behind
	run "$BIN/$K" calibrate --device cpu --encoder 1,2,2,16,96 --ops layernorm,flash_atten -o "$T/out.csv"
	assert_error 1 $K "flash_atten mp=1 b=2 h=2 l=16 dim=96: head size dim/h = 48 is not 64 or 128"
	[ ! -e "$T/out.csv" ]
	# on standard output neither the header nor a row comes before the error
	run "$BIN/$K" calibrate --device cpu --encoder 1,2,2,16,96 --ops layernorm,flash_atten
	assert_error 1 $K "flash_atten mp=1 b=2 h=2 l=16 dim=96: head size dim/h = 48 is not 64 or 128"
	run "$BIN/$K" calibrate --device cpu --precision fp32 --encoder $ENC --ops linear2,flash_atten
	assert_error 1 $K "flash_atten runs in fp16 or bf16 only"
}

@test "calibrate -o: an output that cannot be written is an error before anything is timed; -o - is standard output" {
	cd "$T"
	# the memory limit refuses the first shape timed: the output's error comes first
	run env SPKIT_MEMORY_LIMIT=1000 "$BIN/$K" calibrate --device cpu --encoder $ENC --ops res_add -o nodir/out.csv
	assert_error 1 $K "^kernel-sample: error: nodir/out\.csv: cannot create output: No such file or directory$"
	assert_only_files .
	run "$BIN/$K" calibrate -q --device cpu --encoder $ENC --ops res_add -o -
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "op,shape,precision,F_dur(us),B_dur(us),rate_unit,F_rate,B_rate,F_of_copy,B_of_copy,torch_F_dur(us),torch_B_dur(us),F_ratio,B_ratio" ]
	[[ ${lines[1]} == "res_add,b=2 l=16 dim=128,fp16,"* ]]
	assert_only_files .
}

@test "calibrate -o FIFO: opened after the timing, not before (the reader may come later); a reader gets the report" {
	cd "$T"
	mkfifo fifo
	# no reader: the memory limit's error on the first shape timed comes first
	run env SPKIT_MEMORY_LIMIT=1000 "$BIN/$K" calibrate --device cpu --encoder $ENC --ops res_add -o fifo
	assert_error 1 $K "needs .* of memory; this process may use 1000 B"
	assert_only_files . fifo
	# a reader there (this shell's, read and write, so the open does not
	# wait), read once the report is in the pipe
	exec 4<>fifo
	run "$BIN/$K" calibrate --device cpu --encoder $ENC --ops res_add -q -o fifo
	[ "$status" -eq 0 ]
	while read -t 1 -r -u 4 line; do echo "$line"; done >got
	exec 4<&-
	grep -q '^res_add,' got
}
