#!/usr/bin/env bats
# ksmm-tune on the CPU (this suite runs without a GPU): apply checked against
# NumPy's dense product, tune's space logic through --dry-run, best and its
# table, and every option and bad input: one-line errors naming the file,
# exit 1 or 2, no partial output.
load helpers

K=ksmm-tune

# weights NAME=a,b,c,d[:DTYPE]...: normal values of that shape in $T/NAME.
weights() {
	$PY - "$T" "$@" <<'PY'
import sys
import numpy as np
for seed, spec in enumerate(sys.argv[2:]):
    name, rest = spec.split('=')
    shape, _, dtype = rest.partition(':')
    w = np.random.default_rng(seed + 1).standard_normal(tuple(int(n) for n in shape.split(',')))
    np.save(f'{sys.argv[1]}/{name}', w.astype(dtype or 'f4'))
PY
}

# check_chain Y X LAYOUT TOL PATTERN:WEIGHTS...: Y (in $T) is the chain
# applied to X, right-most factor first, each factor built densely as
# K[al*b*d + be*d + de, al*c*d + ga*d + de] = W[al,be,ga,de], in float64;
# relative error (max |y - ref| / max |ref|) under TOL.
check_chain() {
	$PY - "$T" "$@" <<'PY'
import sys
import numpy as np
t, y, x, layout, tol = sys.argv[1:6]
ref = np.load(f'{t}/{x}').astype(np.float64)
if layout == 'bsf':
    ref = ref.T
for spec in sys.argv[6:]:
    pat, wname = spec.split(':')
    a, b, c, d = (int(n) for n in pat.split(','))
    w = np.load(f'{t}/{wname}').astype(np.float64)
    k = np.zeros((a * b * d, a * c * d))
    for al in range(a):
        for be in range(b):
            for ga in range(c):
                for de in range(d):
                    k[al * b * d + be * d + de, al * c * d + ga * d + de] = w[al, be, ga, de]
    ref = k @ ref
if layout == 'bsf':
    ref = ref.T
got = np.load(f'{t}/{y}')
assert got.shape == ref.shape, (got.shape, ref.shape)
err = np.abs(got.astype(np.float64) - ref).max() / np.abs(ref).max()
assert err < float(tol), err
print(got.dtype, err)
PY
}

# tuning_csv FILE ROW...: a tuning CSV with these data rows under the header.
tuning_csv() {
	local f=$1
	shift
	echo "batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows,thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status" >"$f"
	printf '%s\n' "$@" >>"$f"
}

@test "ksmm-tune: --help, --version, and each command's" {
	assert_help_version $K
	for cmd in tune best bench apply; do
		assert_help_version $K "$cmd"
	done
}

@test "ksmm-tune: no command, an unknown command, an option in its place" {
	run "$BIN/$K"
	assert_error 2 $K "a command is needed: one of tune, best, bench, apply"
	run "$BIN/$K" frobnicate
	assert_error 2 $K "unknown command 'frobnicate'"
	run "$BIN/$K" --dtype fp32
	assert_error 2 $K "unknown option '--dtype'"
}

@test "ksmm-tune apply: a chain of three factors, bsf and bsl, matches NumPy's dense product" {
	# 2,3,4,2: 12 x 16; 3,4,2,2: 24 x 12; 1,6,24,1: 6 x 24. b != c, a = 1, d = 1.
	weights w1.npy=2,3,4,2 w2.npy=3,4,2,2 w3.npy=1,6,24,1:f8 x.npy=7,16:f8 xt.npy=16,7:f2
	run "$BIN/$K" apply --pattern 2,3,4,2 --pattern 3,4,2,2 --pattern 1,6,24,1 \
		--weights "$T/w1.npy,$T/w2.npy,$T/w3.npy" "$T/x.npy" -o "$T/y.npy" --device cpu
	[ "$status" -eq 0 ]
	run check_chain y.npy x.npy bsf 1e-6 2,3,4,2:w1.npy 3,4,2,2:w2.npy 1,6,24,1:w3.npy
	[ "$status" -eq 0 ]
	[[ $output == "float32 "* ]]
	run "$BIN/$K" apply --pattern 2,3,4,2 --pattern 3,4,2,2 --pattern 1,6,24,1 \
		--weights "$T/w1.npy,$T/w2.npy,$T/w3.npy" "$T/xt.npy" -o "$T/yt.npy" --layout bsl \
		--device cpu
	[ "$status" -eq 0 ]
	check_chain yt.npy xt.npy bsl 1e-6 2,3,4,2:w1.npy 3,4,2,2:w2.npy 1,6,24,1:w3.npy
}

@test "ksmm-tune apply: fp16 writes f2, bf16 writes f4, both within their tolerance" {
	weights w.npy=4,8,8,2 x.npy=5,64
	run "$BIN/$K" apply --pattern 4,8,8,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y16.npy" \
		--dtype fp16 --device cpu
	[ "$status" -eq 0 ]
	run check_chain y16.npy x.npy bsf 1e-2 4,8,8,2:w.npy
	[[ $output == "float16 "* ]]
	run "$BIN/$K" apply --pattern 4,8,8,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/yb.npy" \
		--dtype bf16 --device cpu
	[ "$status" -eq 0 ]
	run check_chain yb.npy x.npy bsf 2e-2 4,8,8,2:w.npy
	[[ $output == "float32 "* ]]
	# bf16 is coarser than fp16: the two results differ
	run check_chain yb.npy x.npy bsf 1e-4 4,8,8,2:w.npy
	[ "$status" -ne 0 ]
}

@test "ksmm-tune apply: --patterns FILE with comments, a batch field ignored, and --device auto" {
	printf '# a chain\n\n2,3,4,2\n 3 , 4 , 2 , 2 , 99\n' >"$T/p.in"
	weights w1.npy=2,3,4,2 w2.npy=3,4,2,2 x.npy=3,16
	run "$BIN/$K" apply --patterns "$T/p.in" --weights "$T/w1.npy,$T/w2.npy" "$T/x.npy" \
		-o "$T/y.npy" -q
	[ "$status" -eq 0 ]
	check_chain y.npy x.npy bsf 1e-6 2,3,4,2:w1.npy 3,4,2,2:w2.npy
}

@test "ksmm-tune apply: weights of the wrong shape, a chain that does not chain, too few weights" {
	weights w1.npy=2,3,4,2 w2.npy=3,4,2,2 bad.npy=2,4,3,2 flat.npy=48 x.npy=3,16
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/bad.npy" "$T/x.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "bad.npy: shape \(2, 4, 3, 2\) does not match pattern 2,3,4,2"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/flat.npy" "$T/x.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "flat.npy: shape \(48,\) does not match"
	run "$BIN/$K" apply --pattern 2,3,4,2 --pattern 2,3,4,2 --weights "$T/w1.npy,$T/w1.npy" \
		"$T/x.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "--pattern: pattern 2,3,4,2 takes 16 inputs, but the factor before it gives 12"
	run "$BIN/$K" apply --pattern 2,3,4,2 --pattern 3,4,2,2 --weights "$T/w1.npy" "$T/x.npy" \
		-o "$T/y.npy" --device cpu
	assert_error 1 $K "--weights: 1 file for 2 patterns"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/missing.npy" "$T/x.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "missing.npy: "
	assert_only_files "$T" w1.npy w2.npy bad.npy flat.npy x.npy
}

@test "ksmm-tune apply: input width not a*c*d, a batch of 0, a 1-D input, the wrong layout" {
	weights w.npy=2,3,4,2 x15.npy=3,15 x0.npy=0,16 x1.npy=16 xt.npy=16,3
	for x in x15 x1; do
		run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/$x.npy" -o "$T/y.npy" --device cpu
		assert_error 1 $K "$x.npy: shape \(.*\): expected \(batch, width\) with width a\*c\*d = 16"
	done
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/x0.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "x0.npy: batch 0: must be at least 1"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/xt.npy" -o "$T/y.npy" --device cpu \
		--layout bsl
	[ "$status" -eq 0 ]
	rm "$T/y.npy"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/xt.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "xt.npy: shape \(16, 3\): expected \(batch, width\)"
	assert_only_files "$T" w.npy x15.npy x0.npy x1.npy xt.npy
}

@test "ksmm-tune apply: a pattern and batch past 32-bit indexing" {
	weights w.npy=1,1,1,1 x.npy=1,1
	run "$BIN/$K" apply --pattern 65536,65536,1,1 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy" --device cpu
	assert_error 1 $K "--pattern: pattern 65536,65536,1,1 at batch 1: a\*b\*c\*d reaches 2\^31, past 32-bit indexing"
	run "$BIN/$K" apply --pattern 3000000000,1,1,1 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy" --device cpu
	assert_error 2 $K "--pattern: a = 3000000000 is out of range \(1 to 2\^31 - 1\)"
	assert_only_files "$T" w.npy x.npy
}

@test "ksmm-tune apply: usage errors" {
	weights w.npy=2,3,4,2 x.npy=3,16
	local base=(--pattern 2,3,4,2 --weights "$T/w.npy")
	run "$BIN/$K" apply --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy"
	assert_error 2 $K "no pattern: give --pattern a,b,c,d or --patterns FILE"
	run "$BIN/$K" apply "${base[@]}" "$T/x.npy"
	assert_error 2 $K "apply needs -o Y.npy"
	run "$BIN/$K" apply "${base[@]}" -o "$T/y.npy"
	assert_error 2 $K "apply needs one input X.npy"
	run "$BIN/$K" apply --pattern 2,3,4,2 "$T/x.npy" -o "$T/y.npy"
	assert_error 2 $K "apply needs --weights"
	run "$BIN/$K" apply "${base[@]}" "$T/x.npy" -o "$T/y.npy" --dtype fp32,fp16
	assert_error 2 $K "apply takes one --dtype and one --layout"
	run "$BIN/$K" apply "${base[@]}" "$T/x.npy" -o "$T/y.npy" --dtype fp64
	assert_error 2 $K "--dtype: 'fp64' is not one of fp32, fp16, bf16"
	run "$BIN/$K" apply "${base[@]}" "$T/x.npy" -o "$T/y.npy" --layout rowmajor
	assert_error 2 $K "--layout: 'rowmajor' is not one of bsf, bsl"
	run "$BIN/$K" apply "${base[@]}" "$T/x.npy" -o "$T/y.npy" --device tpu
	assert_error 2 $K "--device: 'tpu' is not one of cpu, cuda, cuda:N, auto"
	run "$BIN/$K" apply "${base[@]}" "$T/x.npy" -o "$T/y.npy" --space s.yaml
	assert_error 2 $K "unknown option '--space'"
	run "$BIN/$K" apply --pattern 2,3,4 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy"
	assert_error 2 $K "--pattern: expected a,b,c,d or a,b,c,d,batch, found 3 fields"
	run "$BIN/$K" apply --pattern 2,x,4,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy"
	assert_error 2 $K "--pattern: b: expected a whole number, found 'x'"
	run "$BIN/$K" apply --pattern 2,0,4,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy"
	assert_error 2 $K "--pattern: b = 0 is out of range"
	# an empty item is a mistake, not nothing
	for list in "$T/w.npy,," ",$T/w.npy" "$T/w.npy,,$T/w.npy"; do
		run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$list" "$T/x.npy" -o "$T/y.npy"
		assert_error 2 $K "--weights: an empty item in '$list'"
	done
	run "$BIN/$K" tune --pattern 2,3,4,2 --dry-run --batch 8,,16
	assert_error 2 $K "--batch: an empty item in '8,,16'"
	assert_only_files "$T" w.npy x.npy
}

@test "ksmm-tune apply --device cuda without a GPU: one error, no output" {
	if "$BIN/$K" apply --pattern 1,1,1,1 --weights /dev/null /dev/null -o /dev/null --device cuda 2>&1 |
		grep -q "no usable CUDA device"; then
		weights w.npy=2,3,4,2 x.npy=3,16
		run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy" --device cuda
		assert_error 1 $K "--device cuda: no usable CUDA device"
		assert_only_files "$T" w.npy x.npy
	else
		skip "a GPU is usable here"
	fi
}

@test "ksmm-tune apply --table: a table row that cannot run its pattern is an error, on the CPU path too" {
	weights w.npy=2,3,4,2 x.npy=3,16
	# fp32 loads of 8 elements are 32 bytes: no kernel takes them
	tuning_csv "$T/stale.csv" "3,2,3,4,2,fp32,bsf,simt,64,16,64,8,8,8,2,0,1,0.5,0.01,1e-7,ok"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy" \
		--table "$T/stale.csv" --device cpu
	assert_error 1 $K "stale.csv:2: the row for pattern 2,3,4,2 at batch 3 cannot run it: vec 8: 32 bytes, over the widest load \(16\)"
	assert_only_files "$T" w.npy x.npy stale.csv
	# the same row for another batch is only a candidate, passed over
	tuning_csv "$T/other.csv" "4,2,3,4,2,fp32,bsf,simt,64,16,64,8,8,8,2,0,1,0.5,0.01,1e-7,ok"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y.npy" \
		--table "$T/other.csv" --device cpu
	[ "$status" -eq 0 ]
	check_chain y.npy x.npy bsf 1e-6 2,3,4,2:w.npy
	tuning_csv "$T/foreign.csv"
	sed -i 1s/status/state/ "$T/foreign.csv"
	run "$BIN/$K" apply --pattern 2,3,4,2 --weights "$T/w.npy" "$T/x.npy" -o "$T/y2.npy" \
		--table "$T/foreign.csv" --device cpu
	assert_error 1 $K "foreign.csv: not a ksmm-tune CSV"
	[ ! -e "$T/y2.npy" ]
}

@test "ksmm-tune tune --dry-run: every configuration listed once, run or skip with a reason" {
	cat >"$T/s.yaml" <<'EOF'
simt:
  tile_rows: [32, 64]
  tile_k: {from: 8, to: 32, times: 2}
  tile_batch: 64
  thread_rows: [4, 8]
  thread_batch: [4]
  vec: [1, 8]
  stages: [2]
  tf32: 0
EOF
	run "$BIN/$K" tune --pattern 4,64,64,16 --batch 1000 --space "$T/s.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	# 2 x 3 x 2 x 2 configurations, a header
	[ "${#lines[@]}" -eq 25 ]
	[ "${lines[0]}" = "batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows,thread_batch,vec,stages,tf32,tile_d,status" ]
	[ "${lines[1]}" = "1000,4,64,64,16,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,run" ]
	# fp32 vec 8 is 32 bytes: every such configuration skipped, with the reason
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ',8,2,0,1,"skip: vec 8: 32 bytes, over the widest load (16)"$')" -eq 12 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ',run$')" -eq 12 ]
	assert_only_files "$T" s.yaml
}

@test "ksmm-tune tune --dry-run: a space's points for some dtypes and layouts, the others skipped" {
	cat >"$T/s.yaml" <<'EOF'
simt:
  - {tile_rows: 32, tile_k: 8, tile_batch: 64, thread_rows: 4, thread_batch: 4, vec: 1, stages: 2, tf32: 0, dtypes: [fp32], layouts: [bsl]}
  - {tile_rows: 32, tile_k: 8, tile_batch: 64, thread_rows: 4, thread_batch: 4, vec: 1, stages: 2, tf32: 0, tile_d: [2, 4], layouts: [bsf]}
EOF
	run "$BIN/$K" tune --pattern 4,64,64,16 --batch 1000 --dtype fp32,fp16 --layout bsf,bsl \
		--space "$T/s.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 13 ] # 4 jobs x 3 points, a header
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ',run$')" -eq 5 ] # fp32 bsl 1, bsf 2 + 2
	printf '%s\n' "${lines[@]}" | grep -q '^1000,4,64,64,16,fp16,bsl,simt,32,8,64,4,4,1,2,0,1,skip: the space lists it for other dtypes or layouts than fp16 bsl$'
	printf '%s\n' "${lines[@]}" | grep -q '^1000,4,64,64,16,fp16,bsf,simt,32,8,64,4,4,1,2,0,4,run$'
	# a name it does not know is an error naming the file and line
	printf 'simt: {tile_rows: 32, tile_k: 8, tile_batch: 64, thread_rows: 4, thread_batch: 4, vec: 1, stages: 2, tf32: 0, layouts: [col]}\n' >"$T/bad.yaml"
	run "$BIN/$K" tune --pattern 4,64,64,16 --space "$T/bad.yaml" --dry-run -q
	assert_error 1 $K "bad.yaml:1: layouts: unknown 'col'"
}

@test "ksmm-tune tune --dry-run: batches, dtypes, layouts, a pattern's own batch, parts" {
	cat >"$T/s.yaml" <<'EOF'
simt: {tile_rows: 32, tile_k: 8, tile_batch: 64, thread_rows: 4, thread_batch: 4, vec: 1, stages: 2, tf32: 0}
EOF
	printf '2,16,16,2\n4,16,16,4,77\n' >"$T/p.in"
	run "$BIN/$K" tune --patterns "$T/p.in" --batch 8,16 --batch 32 --dtype fp32,fp16 \
		--layout bsf,bsl --space "$T/s.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	# (3 batches + 1 own batch) x 2 dtypes x 2 layouts, one configuration each
	[ "${#lines[@]}" -eq 17 ]
	[ "$(printf '%s\n' "${lines[@]:1}" | cut -d, -f1 | sort -n | uniq -c | awk '{print $1 ":" $2}' | tr '\n' ' ')" = "4:8 4:16 4:32 4:77 " ]
	local all=$output
	for part in 1 2 3; do
		run "$BIN/$K" tune --patterns "$T/p.in" --batch 8,16 --batch 32 --dtype fp32,fp16 \
			--layout bsf,bsl --space "$T/s.yaml" --dry-run -q --parts 3 --part $part
		[ "$status" -eq 0 ]
		printf '%s\n' "${lines[@]:1}" >>"$T/parts"
	done
	# the parts together are the whole, each job once
	[ "$(sort "$T/parts")" = "$(printf '%s\n' "$all" | tail -n +2 | sort)" ]
	SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 \
		run "$BIN/$K" tune --patterns "$T/p.in" --space "$T/s.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	# 2 patterns x 1 batch each: jobs 0 and 1; part 2 of 4 has job 1 alone
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} == 77,4,16,16,4,* ]]
	# a count of one in the singular
	SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 \
		run "$BIN/$K" tune --patterns "$T/p.in" --space "$T/s.yaml" --dry-run
	[ "${lines[-1]}" = "ksmm-tune: 1 job: 1 configuration to run, 0 done, 0 skipped" ]
}

@test "ksmm-tune tune --dry-run: rows already in -o are done, the file untouched" {
	cat >"$T/s.yaml" <<'EOF'
simt: {tile_rows: [32, 64], tile_k: 8, tile_batch: 64, thread_rows: 4, thread_batch: 4, vec: 1, stages: 2, tf32: 0}
EOF
	tuning_csv "$T/r.csv" "100,2,16,16,2,fp32,bsf,simt,64,8,64,4,4,1,2,0,1,0.1,0.001,1e-8,ok"
	cp "$T/r.csv" "$T/before.csv"
	run "$BIN/$K" tune --pattern 2,16,16,2 --batch 100 --space "$T/s.yaml" --dry-run -q -o "$T/r.csv"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,run" ]
	[ "${lines[2]}" = "100,2,16,16,2,fp32,bsf,simt,64,8,64,4,4,1,2,0,1,done" ]
	cmp "$T/r.csv" "$T/before.csv"
	# a results file of another program is refused, and left alone
	printf 'm,n,F_dur(us)\n1,2,3\n' >"$T/other.csv"
	cp "$T/other.csv" "$T/other.before"
	run "$BIN/$K" tune --pattern 2,16,16,2 --batch 100 --space "$T/s.yaml" --dry-run -o "$T/other.csv"
	assert_error 1 $K "other.csv: not a ksmm-tune CSV"
	cmp "$T/other.csv" "$T/other.before"
}

@test "ksmm-tune tune: the default space and the shipped spaces and pattern lists read" {
	run "$BIN/$K" tune --pattern 4,64,64,16 --dry-run -q
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -gt 20 ]
	# bsf (the default layout) with d = 16: blocks over 4 de run, over 16 too
	printf '%s\n' "${lines[@]}" | grep -q ',simt,64,16,32,4,4,4,2,0,4,run$'
	printf '%s\n' "${lines[@]}" | grep -q ',simt,16,8,32,8,4,4,2,0,16,run$'
	run "$BIN/$K" tune --pattern 4,64,64,16 --space "$REPO/configs/ksmm/space_full.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -gt 900 ]
	# three TF32 products: fp32 only, both layouts; none in the default space
	run "$BIN/$K" tune --pattern 4,64,64,16 --space "$REPO/configs/ksmm/space_tf32x3.yaml" \
		--dtype fp32,fp16 --layout bsl,bsf --dry-run -q
	[ "$status" -eq 0 ]
	printf '%s\n' "${lines[@]}" | grep -q '^25088,4,64,64,16,fp32,bsl,mma,64,16,128,32,64,4,4,3,1,run$'
	printf '%s\n' "${lines[@]}" | grep -q '^25088,4,64,64,16,fp32,bsf,mma,64,16,64,32,32,4,2,3,4,run$'
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ',fp16,.*,run$')" -eq 0 ]
	run "$BIN/$K" tune --pattern 4,64,64,16 --dtype fp32 --layout bsl,bsf --dry-run -q
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ',3,[0-9]*,run$')" -eq 0 ]
	run "$BIN/$K" tune --pattern 4,64,64,16 --space "$REPO/configs/ksmm/space.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	local n=${#lines[@]}
	run "$BIN/$K" tune --pattern 4,64,64,16 --dry-run -q
	[ "${#lines[@]}" -eq "$n" ]
	run "$BIN/$K" tune --patterns "$REPO/configs/ksmm/patterns_short.in" \
		--space "$REPO/configs/ksmm/space_sanity.yaml" --dry-run -q
	[ "$status" -eq 0 ]
	run "$BIN/$K" tune --patterns "$REPO/configs/ksmm/patterns.in" \
		--space "$REPO/configs/ksmm/space_sanity.yaml" --dry-run
	[ "$status" -eq 0 ]
	# the grid: 486 patterns, none past 32-bit indexing at batch 25088
	[[ ${lines[-1]} == "ksmm-tune: 486 jobs: "* ]]
}

@test "ksmm-tune tune: bad space files, one line naming the file and line" {
	local good='tile_rows: 32
  tile_k: 8
  tile_batch: 64
  thread_rows: 4
  thread_batch: 4
  vec: 1
  stages: 2
  tf32: 0'
	printf 'simt:\n  %s\n  tile_m: 4\n' "$good" >"$T/unknown.yaml"
	printf 'gpu:\n  x: 1\n' >"$T/section.yaml"
	printf 'simt:\n  %s\n' "${good/tile_k: 8/tile_k: {from: 64, to: 32, times: 2\}}" >"$T/empty.yaml"
	printf 'simt:\n  %s\n' "${good/tile_batch: 64/tile_batch: 0}" >"$T/zero.yaml"
	printf 'simt:\n  %s\n' "${good/tile_k: 8/tile_k: {from: 8, to: 32, times: 1\}}" >"$T/times.yaml"
	printf 'simt:\n  %s\n' "${good/tile_k: 8/tile_k: {from: 8, to: 32\}}" >"$T/neither.yaml"
	printf 'simt:\n  %s\n' "${good/tile_k: 8/tile_k: []}" >"$T/list.yaml"
	printf 'simt:\n  %s\n' "${good/tf32: 0/tf32: 2}" >"$T/tf32.yaml"
	printf 'simt:\n  %s\n' "${good/vec: 1/}" >"$T/missing.yaml"
	printf 'simt: [1, 2\n' >"$T/syntax.yaml"
	printf '' >"$T/nothing.yaml"
	local cases=(
		"unknown.yaml:10: unknown key 'tile_m' in section simt"
		"section.yaml:2: unknown key 'gpu' in the space \(expected simt, mma\)"
		"empty.yaml:3: tile_k: range from 64 to 32 holds no value"
		"zero.yaml:4: tile_batch: 0 is out of range \(1 to 4096\)"
		"times.yaml:3: tile_k: times 1 must be at least 2"
		"neither.yaml:3: tile_k: a range takes one of 'times' and 'step'"
		"list.yaml:3: tile_k: an empty list holds no value"
		"tf32.yaml:9: tf32: 2 is not 0, 1 or 3"
		"missing.yaml:2: missing key 'vec'"
		"syntax.yaml:"
		"nothing.yaml: "
	)
	for c in "${cases[@]}"; do
		local f=${c%%:*}
		run "$BIN/$K" tune --pattern 2,16,16,2 --space "$T/$f" --dry-run
		assert_error 1 $K "$T/$c"
	done
	run "$BIN/$K" tune --pattern 2,16,16,2 --space "$T/absent.yaml" --dry-run
	assert_error 1 $K "absent.yaml: "
}

@test "ksmm-tune tune: bad patterns files and options" {
	printf '2,16,16,2\n2,16,16\n' >"$T/fields.in"
	printf '# ok\n2,16,16,2\n2,16,abc,2\n' >"$T/word.in"
	printf '2,16,16,2,0\n' >"$T/batch0.in"
	printf '# only a comment\n\n' >"$T/none.in"
	printf '128,1024,64,64\n' >"$T/big.in"
	run "$BIN/$K" tune --patterns "$T/fields.in" --dry-run
	assert_error 1 $K "fields.in:2: expected a,b,c,d or a,b,c,d,batch, found 3 fields"
	run "$BIN/$K" tune --patterns "$T/word.in" --dry-run
	assert_error 1 $K "word.in:3: c: expected a whole number, found 'abc'"
	run "$BIN/$K" tune --patterns "$T/batch0.in" --dry-run
	assert_error 1 $K "batch0.in:1: batch = 0 is out of range"
	run "$BIN/$K" tune --patterns "$T/none.in" --dry-run
	assert_error 1 $K "none.in: no pattern in the file"
	run "$BIN/$K" tune --patterns "$T/absent.in" --dry-run
	assert_error 1 $K "absent.in: "
	# 128*1024*64 = 2^23 rows: batch 25088 overflows 32-bit indexing, 255 fits
	run "$BIN/$K" tune --patterns "$T/big.in" --dry-run
	assert_error 1 $K "big.in:1: pattern 128,1024,64,64 at batch 25088: a\*b\*d\*batch reaches 2\^31, past 32-bit indexing"
	run "$BIN/$K" tune --patterns "$T/big.in" --batch 255 --dry-run -q
	[ "$status" -eq 0 ]
	run "$BIN/$K" tune --pattern 2,16,16,2 --batch 0 --dry-run
	assert_error 2 $K "--batch: 0 is out of range"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dtype fp16,fp16 --dry-run
	assert_error 2 $K "--dtype: 'fp16' is listed twice"
	run "$BIN/$K" tune --pattern 2,16,16,2
	assert_error 2 $K "tune needs -o RESULTS.csv"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run --ncu
	assert_error 2 $K "--dry-run and --ncu do not go together"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run --parts 2 --part 3
	assert_error 2 $K "--part 3 is outside 1..2"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run --reps 0
	assert_error 2 $K "--reps: 0 is out of range"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run --warmup -1
	assert_error 2 $K "--warmup: -1 is out of range"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run --seed x
	assert_error 2 $K "--seed: 'x' is not an integer"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run --weights w.npy
	assert_error 2 $K "unknown option '--weights'"
	run "$BIN/$K" tune --pattern 2,16,16,2 --dry-run extra
	assert_error 2 $K "unexpected argument 'extra'"
}

@test "ksmm-tune tune without a GPU: one error, no results file" {
	if ! "$BIN/$K" tune --pattern 2,16,16,2 -o "$T/probe.csv" 2>&1 | grep -q "no usable CUDA device"; then
		skip "a GPU is usable here"
	fi
	rm -f "$T/probe.csv"
	for extra in "" --ncu; do
		run "$BIN/$K" tune --pattern 2,16,16,2 -o "$T/r.csv" $extra
		assert_error 1 $K "--device cuda: no usable CUDA device"
	done
	assert_only_files "$T"
}

@test "ksmm-tune best: the fastest ok row per pattern, batch, dtype, layout, over part files" {
	tuning_csv "$T/p1.csv" \
		"100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok" \
		"100,2,16,16,2,fp32,bsf,simt,64,8,64,4,4,1,2,0,1,0.2,0.01,1e-8,wrong" \
		"100,2,16,16,2,fp32,bsl,simt,64,8,64,4,4,1,2,0,1,0.4,0.01,1e-8,ok" \
		"100,4,8,8,4,fp16,bsf,mma,64,32,128,32,64,8,2,0,1,nan,nan,nan,compile: error: boom"
	tuning_csv "$T/p2.csv" \
		"100,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.3,0.01,1e-8,ok" \
		"50,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.1,0.01,1e-8,ok"
	run "$BIN/$K" best "$T/p1.csv" "$T/p2.csv" -o "$T/best.csv"
	[ "$status" -eq 0 ]
	[[ $output == *"3 best configurations; 1 pattern with no ok row left out"* ]]
	run "$BIN/$K" best "$T/p2.csv" -o "$T/one.csv"
	[ "$output" = "ksmm-tune: 2 best configurations; 0 patterns with no ok row left out" ]
	tuning_csv "$T/p3.csv" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok"
	run "$BIN/$K" best "$T/p3.csv" -o "$T/one.csv"
	[ "$output" = "ksmm-tune: 1 best configuration; 0 patterns with no ok row left out" ]
	run cat "$T/best.csv"
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[1]}" = "50,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.1,0.01,1e-08,ok" ]
	[ "${lines[2]}" = "100,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.3,0.01,1e-08,ok" ]
	[ "${lines[3]}" = "100,2,16,16,2,fp32,bsl,simt,64,8,64,4,4,1,2,0,1,0.4,0.01,1e-08,ok" ]
	# a table reduces to itself
	run "$BIN/$K" best "$T/best.csv" -o "$T/again.csv" -q
	[ "$status" -eq 0 ]
	cmp "$T/best.csv" "$T/again.csv"
}

@test "ksmm-tune best: foreign, corrupt and empty CSVs refused, no table written" {
	tuning_csv "$T/ok.csv" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok"
	printf 'm,n,F_dur(us)\n1,2,3\n' >"$T/foreign.csv"
	tuning_csv "$T/ms.csv" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,fast,0.01,1e-8,ok"
	tuning_csv "$T/dtype.csv" "100,2,16,16,2,fp64,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok"
	tuning_csv "$T/short.csv" "100,2,16,16,2,fp32,bsf"
	tuning_csv "$T/neg.csv" "100,2,-16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok"
	tuning_csv "$T/okms.csv" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,nan,0.01,1e-8,ok"
	tuning_csv "$T/okinf.csv" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,inf,0.01,1e-8,ok"
	printf 'batch,a\n"unterminated\n' >"$T/quote.csv"
	tuning_csv "$T/empty.csv"
	local cases=(
		"foreign.csv: not a ksmm-tune CSV"
		"ms.csv:2: column 'ms': expected a number, found 'fast'"
		"dtype.csv:2: column 'dtype': expected fp32, fp16 or bf16, found 'fp64'"
		"short.csv:2: "
		"neg.csv:2: column 'b': -16 is out of range"
		"okms.csv:2: an ok row with ms = nan"
		"okinf.csv:2: an ok row with ms = inf"
		"quote.csv"
		"empty.csv: no rows to reduce"
	)
	for c in "${cases[@]}"; do
		local f=${c%%:*}
		# each bad file after a good one, except the empty one alone
		local good=("$T/ok.csv")
		[ "$f" != empty.csv ] || good=()
		run "$BIN/$K" best "${good[@]}" "$T/$f" -o "$T/best.csv"
		assert_error 1 $K "$T/$c"
		[ ! -e "$T/best.csv" ]
	done
	run "$BIN/$K" best "$T/ok.csv"
	assert_error 2 $K "best needs -o TABLE.csv"
	run "$BIN/$K" best -o "$T/best.csv"
	assert_error 2 $K "best needs at least one RESULTS.csv"
	run "$BIN/$K" best "$T/ok.csv" -o "$T/best.csv" --pattern 1,1,1,1
	assert_error 2 $K "unknown option '--pattern'"
}

@test "ksmm-tune bench: a table with a row that is not ok or twice the same key is refused; no GPU is an error" {
	tuning_csv "$T/wrong.csv" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-3,wrong"
	tuning_csv "$T/twice.csv" \
		"100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok" \
		"100,2,16,16,2,fp32,bsf,simt,64,8,64,4,4,1,2,0,1,0.4,0.01,1e-8,ok"
	run "$BIN/$K" bench --pattern 2,16,16,2 --table "$T/wrong.csv"
	assert_error 1 $K "wrong.csv:2: status 'wrong': a best table holds only ok rows"
	run "$BIN/$K" bench --pattern 2,16,16,2 --table "$T/twice.csv"
	assert_error 1 $K "twice.csv:3: a second row for pattern 2,16,16,2 at batch 100 \(first at line 2\)"
	run "$BIN/$K" bench
	assert_error 2 $K "no pattern"
	run "$BIN/$K" bench --pattern 2,16,16,2 --batch 0
	assert_error 2 $K "--batch: 0 is out of range"
	run "$BIN/$K" bench --pattern 2,16,16,2 --skip bsr,kernel
	assert_error 2 $K "--skip: 'kernel' is not one of dense, dense_tf32, bmm, bsr"
	run "$BIN/$K" bench --pattern 2,16,16,2 --skip bsr,bsr
	assert_error 2 $K "--skip: 'bsr' is listed twice"
	run "$BIN/$K" tune --pattern 2,16,16,2 --skip bsr -o "$T/t.csv"
	assert_error 2 $K "unknown option '--skip'"
	if "$BIN/$K" bench --pattern 2,16,16,2 -o "$T/b.csv" 2>&1 | grep -q "no usable CUDA device"; then
		run "$BIN/$K" bench --pattern 2,16,16,2 -o "$T/b.csv"
		assert_error 1 $K "--device cuda: no usable CUDA device"
		[ ! -e "$T/b.csv" ]
	fi
}

@test "ksmm-tune: the man page documents every command and the table's rules" {
	page=$(groff -mandoc -Tascii -P-cbu "$REPO/man/man1/ksmm-tune.1" 2>/dev/null)
	for word in "tune" "best" "bench" "apply" "nearest batch" "nearest pattern" "exact:" \
		"default:" "batch,a,b,c,d,dtype,layout,variant,"; do
		[[ $page == *"$word"* ]] || { echo "man page lacks '$word'"; return 1; }
	done
}

@test "ksmm-tune: scripts/long_run.sh refuses an unknown kernel, short_run.sh names the four" {
	run "$REPO/scripts/long_run.sh" kernel_bs_first_float8 0
	[ "$status" -eq 2 ]
	[[ $output == *"unknown kernel 'kernel_bs_first_float8'"* ]]
	for k in kernel_bs_first_float4 kernel_bs_last_float4 kernel_bs_first_half2 kernel_bs_last_half2; do
		grep -q "$k" "$REPO/scripts/short_run.sh"
		grep -q "^$k)" "$REPO/scripts/long_run.sh"
	done
}

@test "scripts/ksmm-summary.py: patterns won against the best of ours and PyTorch's baselines, medians, the worst, floor and roofline" {
	h=batch,a,b,c,d,dtype,layout,config,kernel_ms,kernel_rel_err,kernel_status,dense_ms,dense_rel_err,dense_status,dense_tf32_ms,dense_tf32_rel_err,dense_tf32_status,bmm_ms,bmm_rel_err,bmm_status,bsr_ms,bsr_rel_err,bsr_status,best_baseline,speedup,floor_ms,floor_ratio,copy_gbs
	# A: best baseline PyTorch's einsum at 2 ms (dense 3, bmm 2.5), kernel 1:
	# 2x; TF32 1.5 ms. B: best cuBLAS dense at 1 ms, kernel 2: 0.5x; its TF32
	# is slow (not counted). A again (counted once), C failed.
	cat >"$T/bench.csv" <<EOF2
$h
1000,1,2,2,1,fp32,bsl,exact,1,0,ok,3,0,ok,1.5,0,ok,2.5,0,ok,nan,nan,skipped,,,0.5,,3000
1000,2,2,2,1,fp32,bsl,exact,2,0,ok,1,0,ok,0.9,0,slow,4,0,ok,nan,nan,skipped,,,1,,3000
1000,1,2,2,1,fp32,bsl,exact,10,0,ok,3,0,ok,1.5,0,ok,2.5,0,ok,nan,nan,skipped,,,0.5,,3000
1000,3,2,2,1,fp32,bsl,exact,nan,nan,error: launch,3,0,ok,1.5,0,ok,2.5,0,ok,nan,nan,skipped,,,0.5,,3000
EOF2
	cat >"$T/torch.csv" <<EOF2
batch,a,b,c,d,dtype,layout,method,ms,rel_err,runs,floor_ms,copy_gbs,device,torch
1000,1,2,2,1,fp32,bsl,einsum,2.0,0,10,0.5,3000,H100,2.11
1000,1,2,2,1,fp32,bsl,dense,nan,nan,0,0.5,3000,H100,2.11
1000,2,2,2,1,fp32,bsl,bmm,3.0,0,10,1,3000,H100,2.11
EOF2
	# at 4 MFLOP/s the roofline is the FLOPs: A 8000 of them, 2 ms; B 4 ms
	run "$REPO/scripts/ksmm-summary.py" "$T/bench.csv" --torch "$T/torch.csv" --peak fp32=0.000004
	[ "$status" -eq 0 ]
	[ "$output" = "SUMMARY fp32 bsl batch  1000: won 1/3, median speedup 1.25x over the best baseline (worst 0.50x at 2,2,2,1), kernel/floor 2.00, kernel/roofline 0.50, 1.00x counting TF32" ]
	# at the default peak the roofline is the floor
	run "$REPO/scripts/ksmm-summary.py" "$T/bench.csv" --torch "$T/torch.csv"
	[[ $output == *"kernel/floor 2.00, kernel/roofline 2.00,"* ]]
}
