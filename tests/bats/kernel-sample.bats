#!/usr/bin/env bats
# kernel-sample on the CPU path (--device cpu): real sweeps of real
# operators with every option and mode, every bad config, resume after a
# cut row and after kill -9, parts, and merge.
load helpers

K=kernel-sample

# cfg NAME: a config in $T from standard input.
cfg() {
	cat >"$T/$1"
}

# A layernorm sweep in block style: 2 x 2 x 3 = 12 shapes, quick.
small() {
	cfg ln.yml <<'EOF'
kernel_name: layernorm
columns_name: [b, l, dim, F_dur(us), B_dur(us)]
first_n_column: 3
starts: [1, 4, 8]
steps: [2, 4, 8]
ends: [2, 8, 24]
operators: [mul, add, add]
warmup_shapes: [1, 4, 8]
wait: 1
warmup: 1
active: 3
shapes: [2, 8, 16]
EOF
}

# rows CSV: the data rows, header dropped
rows() {
	tail -n +2 "$1"
}

@test "--help, -h, --version and -V, also after run and merge" {
	assert_help_version $K
	[[ $output == *"kernel-sample merge [OPTION]... PART.csv..."* ]]
	assert_help_version $K run
	assert_help_version $K merge
}

@test "a sweep of the shipped test config: the config's columns, one row per shape, the log's lines" {
	cd "$T"
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/layernorm.yml" --device cpu --precision fp32
	[ "$status" -eq 0 ]
	[[ $output == *"layernorm_fp32: part 1 of 1, 8 shapes: 8 measured, 0 skipped, 0 failed, 0 done before; ./sampling_data/"*"_layernorm_fp32_1_1.csv" ]]
	csv=$(ls sampling_data/*_layernorm_fp32_1_1.csv)
	[ "$(head -1 "$csv")" = "b,l,dim,F_dur(us),B_dur(us)" ]
	# the grid in the original's order, last dimension fastest
	[ "$(rows "$csv" | cut -d, -f1-3 | tr '\n' ' ')" = "2,8,16 2,8,32 2,16,16 2,16,32 4,8,16 4,8,32 4,16,16 4,16,32 " ]
	# positive times with at most three decimals
	rows "$csv" | cut -d, -f4,5 | tr ',' '\n' | grep -qvE '^[0-9]+(\.[0-9]{1,3})?$' && return 1
	log=sampling_log/$(basename "$csv" .csv).txt
	[ "$(wc -l <"$log")" -eq 3 ]
	grep -qE '^\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\]Kernel: layernorm_fp32 \| Start: part 1 of 1, 8 shapes, 0 rows in the CSV$' "$log"
	grep -qE '^\[[0-9 :-]{19}\]Kernel: layernorm_fp32 \| Progress: 5/8=62\.50% \| Speed: [0-9]+\.[0-9]{2}s/sample \| Remaining: [0-9]+d[0-9]+h[0-9]+m[0-9]+s$' "$log"
	grep -qE '\| Progress: 8/8=100\.00% \| Speed: [0-9.]+s/sample \| Remaining: 0d0h0m0s$' "$log"
}

@test "every shipped test config sweeps on the CPU; every collect config runs one small shape" {
	for f in "$REPO"/configs/kernel_sampling/test/*.yml; do
		"$BIN/$K" -q "$f" --device cpu --output-dir "$T/out"
	done
	[ "$(ls "$T/out/sampling_data" | wc -l)" -eq "$(ls "$REPO"/configs/kernel_sampling/test/*.yml | wc -l)" ]
	for f in "$REPO"/configs/kernel_sampling/collect/*.yml; do
		name=$(basename "$f")
		shape=$(grep '"starts"' "$REPO/configs/kernel_sampling/test/$name" | tr -dc '0-9,' | sed 's/,$//')
		run "$BIN/$K" "$f" --device cpu --run run_function --shape "$shape"
		[ "$status" -eq 0 ] || { echo "$name: $output"; return 1; }
		[[ $output == *": input_shape: ["*"] ran once" ]]
	done
}

@test "--config or CONFIG.yml, with or without run; both or neither is a usage error" {
	small
	cd "$T"
	"$BIN/$K" -q --config ln.yml --device cpu --output-dir a
	"$BIN/$K" run -q ln.yml --device cpu --output-dir b
	"$BIN/$K" run -c ln.yml -q --device cpu --output-dir c
	for d in a b c; do [ "$(rows $d/sampling_data/*.csv | wc -l)" -eq 12 ]; done
	run "$BIN/$K" --config ln.yml ln.yml
	assert_error 2 $K "give the configs as --config FILE or as CONFIG.yml..., not both"
	run "$BIN/$K" --device cpu
	assert_error 2 $K "no CONFIG.yml given"
	run "$BIN/$K" run
	assert_error 2 $K "no CONFIG.yml given"
	run "$BIN/$K" run --bogus ln.yml
	assert_error 2 $K "unknown option '--bogus'"
}

@test "several configs run in turn in one process, each with its own CSV and log" {
	small
	cd "$T"
	gelu=$REPO/configs/kernel_sampling/test/gelu.yml
	run "$BIN/$K" ln.yml "$gelu" --device cpu --precision fp32
	[ "$status" -eq 0 ]
	[[ $output == *"layernorm_fp32: part 1 of 1, 12 shapes: 12 measured"* ]]
	[[ $output == *"gelu_fp32: part 1 of 1, 8 shapes: 8 measured"* ]]
	[ "$(rows sampling_data/*_layernorm_fp32_1_1.csv | wc -l)" -eq 12 ]
	[ "$(rows sampling_data/*_gelu_fp32_1_1.csv | wc -l)" -eq 8 ]
	grep -q "Progress: 12/12=100.00%" sampling_log/*_layernorm_fp32_1_1.txt
	grep -q "Progress: 8/8=100.00%" sampling_log/*_gelu_fp32_1_1.txt
	# the same again resumes both: nothing repeated
	run "$BIN/$K" ln.yml "$gelu" --device cpu --precision fp32
	[[ $output == *"12 shapes: 0 measured, 0 skipped, 0 failed, 12 done before"* ]]
	[[ $output == *"8 shapes: 0 measured, 0 skipped, 0 failed, 8 done before"* ]]
	[ "$(rows sampling_data/*_gelu_fp32_1_1.csv | wc -l)" -eq 8 ]
	# get_one of each, in the order given
	run "$BIN/$K" "$gelu" ln.yml --device cpu --run get_one -q
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "gelu_fp16: input_shape: "* ]]
	[[ ${lines[1]} == "layernorm_fp16: input_shape: [2, 8, 16] timecost(us) [fwd, bwd]: "* ]]
}

@test "several configs: a bad one anywhere stops the run before any config runs" {
	small
	cfg bad.yml <<'EOF'
kernel_name: gelu
columns_name: [mp, b, l, dim, F_dur(us), B_dur(us)]
first_n_column: 4
starts: [1, 1, 8]
steps: [1, 1, 8]
ends: [1, 2, 16]
operators: [add, add, add]
EOF
	cd "$T"
	run "$BIN/$K" ln.yml bad.yml --device cpu
	[ "$status" -eq 1 ]
	[ "$output" = "kernel-sample: error: bad.yml:4: starts has 3 values, first_n_column is 4" ]
	[ ! -e sampling_data ] && [ ! -e sampling_log ]
	run "$BIN/$K" ln.yml missing.yml --device cpu
	[ "$status" -eq 1 ]
	[[ $output == *"missing.yml"* ]]
	[ ! -e sampling_data ] && [ ! -e sampling_log ]
	# a --shape that fits the first config but not the second: nothing printed
	run "$BIN/$K" ln.yml "$REPO/configs/kernel_sampling/test/gelu.yml" --device cpu --run get_one --shape 2,8,16
	assert_error 2 $K "--shape: 3 values, the config's shapes have 4"
	# get_profiler's ncu command reruns the whole command line: one config only
	run "$BIN/$K" ln.yml ln.yml --device cpu --run get_profiler
	assert_error 2 $K "get_profiler takes one config \\(ln.yml asks for it\\): its ncu command reruns the whole command line"
}

@test "--precision names the files; a bad one is a usage error" {
	small
	cd "$T"
	for p in fp16 bf16 fp32; do
		"$BIN/$K" -q ln.yml --device cpu --precision $p
		ls sampling_data/*_layernorm_${p}_1_1.csv sampling_log/*_layernorm_${p}_1_1.txt
	done
	run "$BIN/$K" ln.yml --device cpu --precision fp8
	assert_error 2 $K "--precision: 'fp8' is not one of fp16, bf16, fp32"
}

@test "--device: cpu and auto (the CPU here) sweep alike; bad names are usage errors; cuda needs a GPU" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --output-dir cpu
	"$BIN/$K" -q ln.yml --device auto --output-dir auto
	"$BIN/$K" -q ln.yml --output-dir default
	for d in auto default; do
		diff <(cut -d, -f1-3 cpu/sampling_data/*.csv) <(cut -d, -f1-3 $d/sampling_data/*.csv)
	done
	run "$BIN/$K" ln.yml --device gpu
	assert_error 2 $K "--device: 'gpu' is not one of cpu, cuda, cuda:N, auto"
	run "$BIN/$K" ln.yml --device cuda:x
	assert_error 2 $K "--device: 'x' is not an integer"
	if "$BIN/$K" -q ln.yml --device cuda --run run_function --output-dir gpu 2>/dev/null; then
		skip "a GPU is usable here"
	fi
	run "$BIN/$K" ln.yml --device cuda:1
	assert_error 1 $K "^kernel-sample: error: --device cuda: no usable CUDA device \(.+\)$"
	[ ! -e gpu ]
}

@test "--parts N --part I: the parts deal the grid round-robin as the original, and make it whole" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --output-dir whole
	for i in 1 2 3 4 5; do
		"$BIN/$K" -q ln.yml --device cpu --parts 5 --part $i --output-dir parts
	done
	# part 2 of 5 takes positions 1, 6, 11; part 1 positions 5 and 10
	[ "$(rows parts/sampling_data/*_5_2.csv | cut -d, -f1-3 | tr '\n' ' ')" = "1,4,8 1,8,24 2,8,16 " ]
	[ "$(rows parts/sampling_data/*_5_1.csv | cut -d, -f1-3 | tr '\n' ' ')" = "1,8,16 2,8,8 " ]
	diff <(rows whole/sampling_data/*.csv | cut -d, -f1-3 | sort) \
	     <(cat parts/sampling_data/*.csv | grep -v dim | cut -d, -f1-3 | sort)
	grep -q "Start: part 3 of 5, 3 shapes" parts/sampling_log/*_5_3.txt
}

@test "--parts and --part default to the SLURM array's task count and id" {
	small
	cd "$T"
	SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=0 \
		"$BIN/$K" -q ln.yml --device cpu
	ls sampling_data/*_layernorm_fp16_3_3.csv
	SLURM_NTASKS=4 SLURM_PROCID=0 "$BIN/$K" -q ln.yml --device cpu
	ls sampling_data/*_layernorm_fp16_4_1.csv
}

@test "a part outside 1..parts, or no number, is a usage error" {
	small
	cd "$T"
	run "$BIN/$K" ln.yml --device cpu --parts 3 --part 4
	assert_error 2 $K "--part 4 is outside 1..3 \(--parts\)"
	run "$BIN/$K" ln.yml --device cpu --parts 3 --part 0
	assert_error 2 $K "--part"
	run "$BIN/$K" ln.yml --device cpu --parts two
	assert_error 2 $K "--parts"
	[ ! -e sampling_data ]
}

@test "--output-dir: made when missing; a folder that cannot be made is an error, nothing written" {
	small
	"$BIN/$K" -q "$T/ln.yml" --device cpu --output-dir "$T/new"
	[ -d "$T/new/sampling_data" ] && [ -d "$T/new/sampling_log" ]
	echo x >"$T/file"
	run "$BIN/$K" "$T/ln.yml" --device cpu --output-dir "$T/file"
	assert_error 1 $K "^kernel-sample: error: $T/file/sampling_data: cannot create the folder: Not a directory$"
	run "$BIN/$K" "$T/ln.yml" --device cpu --output-dir "$T/no/such/dir"
	assert_error 1 $K "$T/no/such/dir: cannot create the folder: No such file or directory"
	if [ "$(id -u)" -ne 0 ]; then
		mkdir "$T/ro" && chmod 555 "$T/ro"
		run "$BIN/$K" "$T/ln.yml" --device cpu --output-dir "$T/ro"
		assert_error 1 $K "$T/ro/sampling_data: cannot create the folder: Permission denied"
	fi
	run "$BIN/$K" "$T/ln.yml" --device cpu --output-dir ""
	assert_error 2 $K "--output-dir: the value is empty"
}

@test "a log that cannot be opened is an error that leaves nothing behind; a CSV being resumed stays as it was" {
	small
	cd "$T"
	# sampling_log is a file: no sampling_data/ with a header-only CSV
	mkdir out && echo x >out/sampling_log
	run "$BIN/$K" ln.yml --device cpu --output-dir out
	assert_error 1 $K "^kernel-sample: error: out/sampling_log/.*_layernorm_fp16_1_1\.txt: cannot open: Not a directory$"
	assert_only_files out sampling_log
	# sampling_data is a file: the log this run made is removed again
	mkdir new && echo x >new/sampling_data
	run "$BIN/$K" ln.yml --device cpu --output-dir new
	assert_error 1 $K "^kernel-sample: error: new/sampling_data/.*_layernorm_fp16_1_1\.csv: cannot open for appending: Not a directory$"
	assert_only_files new sampling_data
	# the log's place taken by a folder, the CSV of an earlier run resumed
	"$BIN/$K" -q ln.yml --device cpu --output-dir res
	csv=$(ls res/sampling_data/*.csv)
	head -n 5 "$csv" >part.csv
	cp part.csv "$csv"
	log=$(ls res/sampling_log/*.txt)
	rm "$log" && mkdir "$log"
	run "$BIN/$K" ln.yml --device cpu --output-dir res
	assert_error 1 $K "$log: cannot open: Is a directory$"
	cmp part.csv "$csv"
}

@test "a shape whose tensors exceed the memory limit fails with the reason and the sweep goes on; get_one is an error" {
	# l 8 and 16384 at dim 4096: 0.5 MiB and 1 GiB of tensors, the limit 512 MiB
	small
	cd "$T"
	sed -e 's/^starts: .*/starts: [1, 8, 4096]/' -e 's/^steps: .*/steps: [1, 2048, 1]/' \
		-e 's/^ends: .*/ends: [1, 16384, 4096]/' -e 's/^operators: .*/operators: [add, mul, add]/' \
		ln.yml >big.yml
	export SPKIT_MEMORY_LIMIT=$((512 << 20))
	run "$BIN/$K" big.yml --device cpu --precision fp32
	[ "$status" -eq 0 ]
	[[ $output == *"layernorm_fp32 [1, 16384, 4096] failed: the shape's state needs 1.0 GiB of memory; this process may use 512.0 MiB"* ]]
	[[ $output == *"2 shapes: 1 measured, 0 skipped, 1 failed, 0 done before"* ]]
	[ "$(rows sampling_data/*.csv | cut -d, -f1-3)" = "1,8,4096" ]
	grep -q '| Failed: \[1, 16384, 4096\]: the shape.s state needs 1\.0 GiB of memory; this process may use 512\.0 MiB$' sampling_log/*.txt
	run "$BIN/$K" big.yml --device cpu --precision fp32 --run get_one --shape 1,16384,4096
	assert_error 1 $K "^kernel-sample: error: big\.yml: layernorm \[1, 16384, 4096\]: the shape's state needs 1\.0 GiB of memory; this process may use 512\.0 MiB$"
}

@test "macko_spmv: a matrix larger than the memory limit is refused before it is made" {
	# 32768 x 32768 at fp16 is 2 GiB dense; the tensors (x, y) are 256 KiB
	cd "$T"
	export SPKIT_MEMORY_LIMIT=$((512 << 20))
	run timeout 60 "$BIN/$K" "$REPO/configs/kernel_sampling/test/macko_spmv.yml" --device cpu --run get_one --shape 32768,32768,10,1
	assert_error 1 $K "^kernel-sample: error: .*macko_spmv\.yml: macko_spmv \[32768, 32768, 10, 1\]: a 32768 x 32768 fp16 matrix with its compressed form needs 4\.5 GiB of memory; this process may use 512\.0 MiB$"
}

@test "macko_spmv: at density 90% the compressed form (2.5 bytes an element) is counted in full" {
	# 2048 x 2048: 8 MiB dense, up to 10 MiB compressed, 16 KiB of row counts;
	# 4 bytes an element (the compressed form taken as no larger than dense) fit 17 MiB
	cd "$T"
	export SPKIT_MEMORY_LIMIT=$((17 << 20))
	run timeout 60 "$BIN/$K" "$REPO/configs/kernel_sampling/test/macko_spmv.yml" --device cpu --run get_one --shape 2048,2048,90,1
	assert_error 1 $K "^kernel-sample: error: .*macko_spmv\.yml: macko_spmv \[2048, 2048, 90, 1\]: a 2048 x 2048 fp16 matrix with its compressed form needs 18\.0 MiB of memory; this process may use 17\.0 MiB$"
}

@test "killed before its first row a sweep leaves nothing it made; killed later, its rows and a resumed CSV stay" {
	small
	cd "$T"
	# a warm-up long enough to be interrupted: 64 M elements, 50 runs
	sed -e 's/^warmup_shapes: .*/warmup_shapes: [4, 4096, 4096]/' -e 's/^warmup: .*/warmup: 50/' ln.yml >slow.yml
	run timeout -s INT 1 "$BIN/$K" slow.yml --device cpu --output-dir res
	[ "$status" -eq 130 ] || [ "$status" -eq 124 ]
	assert_only_files . ln.yml slow.yml
	# a CSV with rows, resumed and interrupted in the warm-up: kept as it was
	"$BIN/$K" -q ln.yml --device cpu --output-dir res
	csv=$(ls res/sampling_data/*.csv)
	head -n 2 "$csv" >part.csv && cp part.csv "$csv"
	run timeout -s INT 1 "$BIN/$K" slow.yml --device cpu --output-dir res
	[ "$status" -eq 130 ] || [ "$status" -eq 124 ]
	cmp part.csv "$csv"
	[ -s res/sampling_log/"$(basename "$csv" .csv)".txt ]
}

# attention A_SHAPE B_SHAPE: a flash_atten config (fp16 on the CPU) of two
# shapes, mp,b,h,l,dim each: its grid is A then B (differing in l or dim).
attention() {
	local a b
	IFS=, read -ra a <<<"$1"
	IFS=, read -ra b <<<"$2"
	cfg fa.yml <<EOF
kernel_name: flash_atten
columns_name: [mp, b, h, l, dim, F_dur(us), B_dur(us)]
first_n_column: 5
starts: [${a[0]}, ${a[1]}, ${a[2]}, ${a[3]}, ${a[4]}]
steps: [1, 1, 1, $((b[3] - a[3] > 0 ? b[3] - a[3] : 1)), $((b[4] - a[4] > 0 ? b[4] - a[4] : 1))]
ends: [${b[0]}, ${b[1]}, ${b[2]}, ${b[3]}, ${b[4]}]
operators: [add, add, add, add, add]
warmup_shapes: [1, 1, 1, 16, 64]
wait: 1
warmup: 1
active: 3
EOF
}

# sweep_killed_at PATTERN FILE: a sweep (fa.yml into res) killed (SIGTERM)
# once a line of FILE (a glob) matches PATTERN. It must die of the signal,
# leaving its two folders with a CSV and its log (in $csv and $log), which
# tells of the start.
sweep_killed_at() {
	local pattern=$1 file=$2 i
	"$BIN/$K" -q fa.yml --device cpu --precision fp16 --output-dir res >out 2>&1 3>&- &
	local pid=$!
	for i in $(seq 600); do
		# shellcheck disable=SC2086
		grep -qE "$pattern" $file 2>/dev/null && break
		sleep 0.1
	done
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	assert_only_files res sampling_data sampling_log
	csv=$(echo res/sampling_data/*.csv)
	log=res/sampling_log/$(basename "$csv" .csv).txt
	assert_only_files res/sampling_data "$(basename "$csv")"
	assert_only_files res/sampling_log "$(basename "$log")"
	grep -q '| Start: part 1 of 1, 2 shapes, 0 rows in the CSV$' "$log"
}

@test "killed once its new log tells of a shape, or after its first row, a sweep keeps its log, CSV and folders" {
	cd "$T"
	# head size 96 is refused (logged as skipped), before any row; head size
	# 128 at l 2048 takes seconds
	attention 1,4,1,2048,96 1,4,1,2048,128
	sweep_killed_at '\| Skipped: \[1, 4, 1, 2048, 96\]' 'res/sampling_log/*.txt'
	[ "$(cat "$csv")" = "mp,b,h,l,dim,F_dur(us),B_dur(us)" ]
	grep -q '| Skipped: \[1, 4, 1, 2048, 96\]: head size dim/h = 96 is not 64 or 128' "$log"
	# a new CSV with a row: l 16 is quick, l 2048 takes seconds
	rm -r res
	attention 1,4,1,16,64 1,4,1,2048,64
	sweep_killed_at '^1,4,1,16,64,' 'res/sampling_data/*.csv'
	[ "$(cut -d, -f1-5 "$csv" | tr '\n' ' ')" = "mp,b,h,l,dim 1,4,1,16,64 " ]
}

@test "a sweep that fails before its first row leaves nothing new; a CSV there before stays as it was" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --output-dir first
	stem=$(basename "$(ls first/sampling_data/*.csv)" .csv)
	# the log's first line cannot be written: no header-only CSV is left
	mkdir -p out/sampling_log && ln -s /dev/full "out/sampling_log/$stem.txt"
	run "$BIN/$K" ln.yml --device cpu --output-dir out
	assert_error 1 $K "^kernel-sample: error: out/sampling_log/$stem\.txt: cannot write: No space left on device$"
	assert_only_files out sampling_log
	assert_only_files out/sampling_log "$stem.txt"
	# a CSV of a header alone, there before, is resumed: kept byte for byte
	mkdir out/sampling_data
	head -n 1 "first/sampling_data/$stem.csv" >"out/sampling_data/$stem.csv"
	cp "out/sampling_data/$stem.csv" header.csv
	run "$BIN/$K" ln.yml --device cpu --output-dir out
	assert_error 1 $K "cannot write: No space left on device$"
	cmp header.csv "out/sampling_data/$stem.csv"
	# an empty CSV there before gets a header, and loses it again
	: >"out/sampling_data/$stem.csv"
	run "$BIN/$K" ln.yml --device cpu --output-dir out
	assert_error 1 $K "cannot write: No space left on device$"
	[ -e "out/sampling_data/$stem.csv" ] && [ ! -s "out/sampling_data/$stem.csv" ]
}

@test "killed (SIGTERM) before its first row, a sweep leaves an empty CSV it was given empty" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --output-dir first
	stem=$(basename "$(ls first/sampling_data/*.csv)" .csv)
	# a warm-up of seconds: 64 M elements, 50 runs
	sed -e 's/^warmup_shapes: .*/warmup_shapes: [4, 4096, 4096]/' -e 's/^warmup: .*/warmup: 50/' ln.yml >slow.yml
	mkdir -p res/sampling_data
	csv=res/sampling_data/$stem.csv
	: >"$csv"
	"$BIN/$K" -q slow.yml --device cpu --output-dir res 3>&- &
	local pid=$! i
	# killed in the warm-up, once the header is written
	for i in $(seq 600); do
		[ -s "$csv" ] && break
		sleep 0.1
	done
	[ -s "$csv" ]
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	assert_only_files res sampling_data
	assert_only_files res/sampling_data "$stem.csv"
	[ ! -s "$csv" ]
}

@test "get_one prints the shape's times; --shape picks another; a refused shape is an error" {
	small
	cd "$T"
	run "$BIN/$K" ln.yml --device cpu --run get_one
	[ "$status" -eq 0 ]
	[[ $output =~ ^layernorm_fp16:\ input_shape:\ \[2,\ 8,\ 16\]\ timecost\(us\)\ \[fwd,\ bwd\]:\ \[[0-9]+\.[0-9]{3},\ [0-9]+\.[0-9]{3}\]$ ]]
	run "$BIN/$K" ln.yml --device cpu --run get_one --shape 1,4,40 --precision bf16
	[[ $output == "layernorm_bf16: input_shape: [1, 4, 40] timecost(us)"* ]]
	[ ! -e sampling_data ]
	run "$BIN/$K" ln.yml --device cpu --run get_one --shape 1,4
	assert_error 2 $K "--shape: 2 values, the config's shapes have 3"
	run "$BIN/$K" ln.yml --device cpu --run get_one --shape 1,0,4
	assert_error 2 $K "--shape"
	run "$BIN/$K" ln.yml --device cpu --run get_one --shape 1,4,,40
	assert_error 2 $K "--shape: an empty item in '1,4,,40'"
	cfg gelu.yml <<'EOF'
{ "kernel_name": "gelu", "columns_name": ['mp', 'b', 'l', 'dim', 'F_dur(us)', 'B_dur(us)'],
  "first_n_column": 4, "starts": [1, 1, 4, 8], "steps": [2, 1, 1, 1], "ends": [4, 1, 4, 10],
  "operators": ['mul', 'add', 'add', 'add'], "shapes": [4, 1, 4, 10], "run": "get_one" }
EOF
	run "$BIN/$K" gelu.yml --device cpu
	assert_error 1 $K "^kernel-sample: error: gelu.yml: gelu \[4, 1, 4, 10\]: dim 10 not divisible by mp 4$"
}

@test "--shape with get_all, from --run or the config, is a usage error: the sweep's shapes are the grid's" {
	small
	cd "$T"
	run "$BIN/$K" ln.yml --device cpu --shape 1,4,8
	assert_error 2 $K "^kernel-sample: error: --shape applies to get_one, get_profiler and run_function, not get_all \(the grid's shapes\)$"
	run "$BIN/$K" ln.yml --device cpu --run get_all --shape 1,4,8
	assert_error 2 $K "--shape applies to get_one, get_profiler and run_function, not get_all"
	[ ! -e sampling_data ] && [ ! -e sampling_log ]
}

@test "get_profiler runs once in the NVTX range and prints the ncu command; run_function runs once" {
	small
	cd "$T"
	run "$BIN/$K" ln.yml --device cpu --run get_profiler --precision fp32 --seed=7
	[ "$status" -eq 0 ]
	[ "$output" = "ncu --nvtx --nvtx-include layernorm_fp32_2_8_16/ $BIN/$K ln.yml --device cpu --run get_profiler --precision fp32 --seed=7" ]
	run "$BIN/$K" run --config "ln.yml" --device cpu --run get_profiler --shape 1,4,8 --output-dir "a b"
	[ "$output" = "ncu --nvtx --nvtx-include layernorm_fp16_1_4_8/ $BIN/$K run --config ln.yml --device cpu --run get_profiler --shape 1,4,8 --output-dir 'a b'" ]
	run "$BIN/$K" ln.yml --device cpu --run run_function
	[ "$output" = "layernorm_fp16: input_shape: [2, 8, 16] ran once" ]
	run "$BIN/$K" ln.yml --device cpu --run get_everything
	assert_error 2 $K "--run: 'get_everything' is not one of get_all, get_one, get_profiler, run_function"
	# option values are checked before the config is read
	run "$BIN/$K" missing.yml --run get_everything
	assert_error 2 $K "--run: 'get_everything'"
	[ ! -e sampling_data ]
}

@test "the config's run chooses the mode; single-shape modes need a shape" {
	small
	cd "$T"
	sed 's/^shapes:.*$/run: get_one\nshapes: [1, 4, 8]/' ln.yml >one.yml
	run "$BIN/$K" one.yml --device cpu
	[[ $output == "layernorm_fp16: input_shape: [1, 4, 8] timecost(us)"* ]]
	grep -v '^shapes' ln.yml >noshape.yml
	run "$BIN/$K" noshape.yml --device cpu --run get_one
	assert_error 1 $K "noshape.yml: this mode needs a shape: 'shapes' in the config or --shape"
	run "$BIN/$K" noshape.yml --device cpu --run get_one --shape 1,4,8
	[ "$status" -eq 0 ]
}

@test "--seed: any non-negative integer; others are usage errors" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --seed=123456789
	run "$BIN/$K" ln.yml --device cpu --seed -1
	assert_error 2 $K "--seed"
	run "$BIN/$K" ln.yml --device cpu --seed x
	assert_error 2 $K "--seed"
}

# bad_config KEY LINE MESSAGE: the layernorm config with its line of KEY
# replaced by LINE fails with exit 1 and MESSAGE, writing nothing.
bad_config() {
	local key=$1 line=$2 msg=$3
	small
	awk -v key="$key" -v line="$line" 'index($0, key ":") == 1 { print line; next } { print }' \
		"$T/ln.yml" >"$T/bad.yml"
	grep -qF -- "$line" "$T/bad.yml" || { echo "no line $key"; return 1; }
	run "$BIN/$K" "$T/bad.yml" --device cpu --output-dir "$T/out"
	assert_error 1 $K "$msg"
	[ ! -e "$T/out" ]
}

@test "bad configs: one line with the file and line, exit 1, nothing written" {
	bad_config first_n_column "first_n_colum: 3" "bad.yml:3: unknown key 'first_n_colum' in a kernel-sample config"
	bad_config steps "steps: [2, 4]" "bad.yml:5: steps has 2 values, first_n_column is 3"
	bad_config starts "starts: [1, 4, 8, 1]" "bad.yml:4: starts has 4 values, first_n_column is 3"
	bad_config operators "operators: [mul, add]" "bad.yml:7: operators has 2 values, first_n_column is 3"
	bad_config warmup_shapes "warmup_shapes: [1]" "bad.yml:8: warmup_shapes has 1 values, first_n_column is 3"
	bad_config steps "steps: [2, 0, 8]" "bad.yml:5: steps\[1\]: step 0 never advances \('add' needs 1 or more\)"
	bad_config steps "steps: [1, 4, 8]" "bad.yml:5: steps\[0\]: step 1 never advances \('mul' needs 2 or more\)"
	bad_config ends "ends: [2, 3, 24]" "bad.yml:6: ends\[1\]: end 3 is below its start 4"
	bad_config operators "operators: [mul, add, pow]" "bad.yml:7: operators\[2\]: unknown operator 'pow' \(expected mul or add\)"
	# a list of one given as a scalar: its item's message named no node (a crash the
	# fuzzer found)
	printf '{ "kernel_name": "layernorm", "columns_name": [b, F_dur(us), B_dur(us)],\n  "first_n_column": 1, "starts": [1], "steps": [2], "ends": [4], "operators": pow }\n' >"$T/one.yml"
	run "$BIN/$K" "$T/one.yml" --device cpu --output-dir "$T/out"
	assert_error 1 $K "one.yml:2: operators\[0\]: unknown operator 'pow' \(expected mul or add\)"
	bad_config active "active: 0" "bad.yml:11: active: 0 is outside 1..100000"
	bad_config kernel_name "kernel_name: [a, b]" "bad.yml:1: kernel_name"
	# it names the output files: DEVICE_KERNEL_..., which merge reads back
	bad_config kernel_name "kernel_name: ''"$'\n'"function_name: layernorm" "bad.yml:1: kernel_name: '' cannot name the output files \(it must be non-empty, with no '/'\)"
	bad_config kernel_name "kernel_name: ../../ln"$'\n'"function_name: layernorm" "bad.yml:1: kernel_name: '../../ln' cannot name the output files \(it must be non-empty, with no '/'\)"
	bad_config columns_name "columns_name: [b, l, dim, F_dur(us)]" "bad.yml:2: columns_name has 4 names"
	bad_config columns_name "columns_name: [mp, l, dim, F_dur(us), B_dur(us)]" \
		"bad.yml:2: columns_name: layernorm takes the shape \(b, l, dim\), the config names \(mp, l, dim\)"
	bad_config warmup_shapes "warmup_shapes: [1, 4, 0]" "bad.yml:8: warmup_shapes\[2\]: 0 is outside 1..1099511627776"
	bad_config starts "starts: [1, 4, {a: 1}]" "bad.yml:4: starts\[2\]"
	bad_config first_n_column "first_n_column: 3 ]" "bad.yml:3: "
	run "$BIN/$K" "$T/none.yml" --device cpu
	assert_error 1 $K "$T/none.yml: "
}

@test "unknown operator or run mode in a config: exit 1 naming them" {
	small
	sed 's/^kernel_name: layernorm/kernel_name: layernorm\nfunction_name: layernorn/' "$T/ln.yml" >"$T/op.yml"
	run "$BIN/$K" "$T/op.yml" --device cpu
	assert_error 1 $K "op.yml: no operator 'layernorn' on the CPU \(kernel-sample has embedding, layernorm, .*, ScaledUpperTriangMaskedSoftmax, moe, .*\)"
	echo "run: get_some" >>"$T/ln.yml"
	run "$BIN/$K" "$T/ln.yml" --device cpu
	assert_error 1 $K "ln.yml:13: run: unknown mode 'get_some' \(expected get_all, get_one, get_profiler or run_function\)"
}

@test "shapes the operator refuses are skipped and logged, -v shows them, the sweep goes on" {
	cfg gelu.yml <<'EOF'
{ "kernel_name": "gelu", "columns_name": ['mp', 'b', 'l', 'dim', 'F_dur(us)', 'B_dur(us)'],
  "first_n_column": 4, "starts": [1, 1, 4, 8], "steps": [2, 1, 1, 1], "ends": [4, 1, 4, 10],
  "operators": ['mul', 'add', 'add', 'add'], "wait": 0, "warmup": 1, "active": 2 }
EOF
	cd "$T"
	run "$BIN/$K" -v gelu.yml --device cpu
	[ "$status" -eq 0 ]
	# mp 1, 2, 4 x dim 8, 9, 10: dim 9 with mp 2, 9 and 10 with mp 4 are refused
	[[ $output == *"gelu_fp16 [2, 1, 4, 9] skipped: dim 9 not divisible by mp 2"* ]]
	[[ $output == *"9 shapes: 6 measured, 3 skipped, 0 failed"* ]]
	[ "$(grep -c '| Skipped: \[' sampling_log/*.txt)" -eq 3 ]
	grep -q '| Skipped: \[4, 1, 4, 10\]: dim 10 not divisible by mp 4$' sampling_log/*.txt
	[ "$(rows sampling_data/*.csv | cut -d, -f1,4 | tr '\n' ' ')" = "1,8 1,9 1,10 2,8 2,10 4,8 " ]
	run "$BIN/$K" gelu.yml --device cpu
	[[ $output != *"skipped:"* ]]
	run "$BIN/$K" -q gelu.yml --device cpu
	[ -z "$output" ]
}

@test "res_add has no backward: B_dur(us) is 0" {
	cd "$T"
	"$BIN/$K" -q "$REPO/configs/kernel_sampling/test/res_add.yml" --device cpu
	[ "$(rows sampling_data/*.csv | cut -d, -f5 | sort -u)" = "0" ]
}

@test "a rerun resumes: nothing timed twice; a cut last row is redone; a foreign header is an error" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu
	csv=$(ls sampling_data/*.csv)
	cp "$csv" full.csv
	run "$BIN/$K" ln.yml --device cpu
	[[ $output == *"12 shapes: 0 measured, 0 skipped, 0 failed, 12 done before"* ]]
	cmp full.csv "$csv"
	# a kill in the middle of the last row's write
	head -c -5 full.csv >"$csv"
	run "$BIN/$K" ln.yml --device cpu
	[[ $output == *"1 measured, 0 skipped, 0 failed, 11 done before"* ]]
	diff <(cut -d, -f1-3 full.csv) <(cut -d, -f1-3 "$csv")
	head -n 12 full.csv | cmp - <(head -n 12 "$csv")
	[ "$(grep -c 'Start: part 1 of 1, 12 shapes' sampling_log/*.txt)" -eq 3 ]
	# a file from another config: refused, untouched
	printf 'b,l,width,F_dur(us),B_dur(us)\n1,4,8,1,2\n' >"$csv"
	cp "$csv" foreign.csv
	run "$BIN/$K" ln.yml --device cpu
	assert_error 1 $K "$csv"
	[[ $output == *header* ]]
	cmp foreign.csv "$csv"
}

# swept_small: in $T, the small sweep run once: $csv its CSV, full.csv a copy.
swept_small() {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu
	csv=$(ls sampling_data/*.csv)
	cp "$csv" full.csv
}

@test "a rerun after blank lines at the end (LF or CRLF) appends right after the last row, in the file's line end: no blank line inside" {
	swept_small
	for cr in '' $'\r'; do
		head -n 6 full.csv | sed "s/\$/$cr/" >"$csv"
		printf '%s\n%s\n' "$cr" "$cr" >>"$csv"
		run "$BIN/$K" ln.yml --device cpu
		[[ $output == *"7 measured, 0 skipped, 0 failed, 5 done before"* ]]
		[ "$(grep -c $'^\r\\?$' "$csv")" -eq 0 ]
		diff <(cut -d, -f1-3 full.csv) <(tr -d '\r' <"$csv" | cut -d, -f1-3)
		[ "$(grep -c $'\r$' "$csv")" -eq "$([ -n "$cr" ] && echo 13 || echo 0)" ]
	done
}

@test "a rerun refuses a CSV with a damaged row (a shape or a time that is not one), naming the line; the file untouched" {
	swept_small
	for row in $'\xff\xfe,4,8,1,2' '1,4,nan,1,2' '1,4,8.5,1,2' '1,4,8,-1,2' '1,4,8,1,inf'; do
		{ head -n 4 full.csv; printf '%s\n' "$row"; } >"$csv"
		cp "$csv" before.csv
		run "$BIN/$K" ln.yml --device cpu
		assert_error 1 $K "$csv:5: column '(b|dim|F_dur\(us\)|B_dur\(us\))': expected (a whole number|a time \(a number >= 0\)), found"
		cmp before.csv "$csv"
	done
}

@test "a part file the original wrote (shapes as NumPy floats) resumes: its shapes are not timed again" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu
	csv=$(ls sampling_data/*.csv)
	# the first 5 shapes as estimate-train-time writes rows: 2.0,4.0,8.0,...
	{
		head -n 1 "$csv"
		rows "$csv" | head -n 5 | awk -F, -v OFS=, '{ $1 = $1 ".0"; $2 = $2 ".0"; $3 = $3 ".0"; print }'
	} >original.csv
	cp original.csv "$csv"
	run "$BIN/$K" ln.yml --device cpu
	[ "$status" -eq 0 ]
	[[ $output == *"12 shapes: 7 measured, 0 skipped, 0 failed, 5 done before"* ]]
	[ "$(rows "$csv" | wc -l)" -eq 12 ]
	head -n 6 "$csv" | cmp - original.csv
	"$BIN/$K" merge "$csv" -o merged.csv
	[ "$(rows merged.csv | cut -d, -f1-3 | sort -u | wc -l)" -eq 12 ]
}

@test "kill -9 in the middle of a sweep: the rerun completes it, no row lost or repeated" {
	cfg slow.yml <<'EOF'
kernel_name: layernorm
columns_name: [b, l, dim, F_dur(us), B_dur(us)]
first_n_column: 3
starts: [1, 32, 64]
steps: [1, 32, 64]
ends: [3, 64, 384]
operators: [add, add, add]
wait: 0
warmup: 0
active: 400
EOF
	cd "$T"
	"$BIN/$K" -q slow.yml --device cpu --output-dir ref
	"$BIN/$K" -q slow.yml --device cpu &
	pid=$!
	for _ in $(seq 200); do
		n=$(cat sampling_data/*.csv 2>/dev/null | wc -l)
		[ "$n" -ge 6 ] && break
		sleep 0.05
	done
	kill -9 $pid
	wait $pid || true
	n=$(rows sampling_data/*.csv | wc -l)
	[ "$n" -ge 5 ] && [ "$n" -lt 36 ] || skip "the sweep ran too fast or too slow to be killed in the middle ($n rows)"
	cp sampling_data/*.csv killed.csv
	"$BIN/$K" -q slow.yml --device cpu
	csv=$(ls sampling_data/*.csv)
	# what the killed run wrote stays (its complete rows), then the rest
	head -n "$(grep -c '' killed.csv)" "$csv" | head -n -1 | cmp - <(head -n -1 killed.csv)
	diff <(cut -d, -f1-3 ref/sampling_data/*.csv) <(cut -d, -f1-3 "$csv")
	[ "$(cut -d, -f1-3 "$csv" | sort | uniq -d)" = "" ]
}

@test "merge: the parts into one CSV, sorted by shape, each shape once" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --output-dir whole
	for i in 1 2 3; do "$BIN/$K" -q ln.yml --device cpu --parts 3 --part $i; done
	out=$(ls sampling_data/*_1.csv | sed 's/_3_1.csv$/.csv/')
	run "$BIN/$K" merge sampling_data/*.csv -o "$out"
	[ "$status" -eq 0 ]
	[[ $output == "merged 3 files: 12 rows, 12 shapes; $out" ]]
	diff <(cut -d, -f1-3 whole/sampling_data/*.csv) <(cut -d, -f1-3 "$out")
	# again, with a part twice and to stdout: duplicates dropped, the first kept
	run "$BIN/$K" merge -q sampling_data/*_3_2.csv "$out" sampling_data/*_3_2.csv
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | cut -d, -f1-3)" = "$(cut -d, -f1-3 "$out")" ]
	part_row=$(sed -n 2p sampling_data/*_3_2.csv)
	echo "$output" | grep -qx -- "$part_row"
}

@test "counts of one in the singular: a grid of one shape, its CSV of one row, a merge of one file" {
	small
	cd "$T"
	sed -e 's/^starts:.*/starts: [2, 8, 16]/' -e 's/^ends:.*/ends: [2, 8, 16]/' ln.yml >one.yml
	run "$BIN/$K" one.yml --device cpu
	[ "$status" -eq 0 ]
	[[ ${lines[-1]} == "layernorm_fp16: part 1 of 1, 1 shape: 1 measured, 0 skipped, 0 failed, 0 done before; "* ]]
	"$BIN/$K" -q one.yml --device cpu
	grep -q '| Start: part 1 of 1, 1 shape, 0 rows in the CSV$' sampling_log/*.txt
	grep -q '| Start: part 1 of 1, 1 shape, 1 row in the CSV$' sampling_log/*.txt
	run "$BIN/$K" merge sampling_data/*.csv -o merged.csv
	[ "$output" = "merged 1 file: 1 row, 1 shape; merged.csv" ]
	# a name holding an escape sequence is shown escaped, as in errors
	run "$BIN/$K" merge sampling_data/*.csv -o "$(printf 'm\033[31m.csv')"
	[ "$output" = 'merged 1 file: 1 row, 1 shape; m\x1b[31m.csv' ]
}

@test "merge refuses other operators, precisions and columns, bad names; nothing written" {
	small
	cd "$T"
	"$BIN/$K" -q ln.yml --device cpu --parts 2 --part 1
	"$BIN/$K" -q ln.yml --device cpu --parts 2 --part 2 --precision fp32
	a=$(ls sampling_data/*_fp16_2_1.csv)
	b=$(ls sampling_data/*_fp32_2_2.csv)
	run "$BIN/$K" merge "$a" "$b" -o out.csv
	assert_error 1 $K "$b: another precision than $a's"
	dev=$(basename "$a" | cut -d_ -f1)
	cp "$a" "${dev}_gelu_fp16_2_2.csv"
	run "$BIN/$K" merge "$a" "${dev}_gelu_fp16_2_2.csv" -o out.csv
	assert_error 1 $K "${dev}_gelu_fp16_2_2.csv: another operator than"
	sed '1s/dim/width/' "$a" >"${dev}_layernorm_fp16_2_2.csv"
	run "$BIN/$K" merge "$a" "${dev}_layernorm_fp16_2_2.csv" -o out.csv
	assert_error 1 $K "${dev}_layernorm_fp16_2_2.csv: other columns than"
	cp "$a" layernorm.csv
	run "$BIN/$K" merge layernorm.csv -o out.csv
	assert_error 1 $K "layernorm.csv: not a kernel-sample file name"
	run "$BIN/$K" merge missing_layernorm_fp16.csv -o out.csv
	assert_error 1 $K "missing_layernorm_fp16.csv"
	run "$BIN/$K" merge -o out.csv
	assert_error 2 $K "merge: no PART.csv given"
	# a duration that is not a time (fit would refuse the merged file)
	for d in nan inf -5 ''; do
		{ head -2 "$a"; echo "1,1,1,$d,2"; } >"${dev}_layernorm_fp16_3_1.csv"
		run "$BIN/$K" merge "${dev}_layernorm_fp16_3_1.csv" -o out.csv
		assert_error 1 $K "${dev}_layernorm_fp16_3_1.csv:3: column 'F_dur\(us\)': expected a time \(a number >= 0\), found '$d'"
	done
	[ ! -e out.csv ]
	ls | grep -q '\.tmp\.' && return 1
	true
}

@test "flash_atten and flash_atten_causal on the CPU: head sizes other than 64 and 128 skipped, fp32 skipped with the reason" {
	cd "$T"
	for op in flash_atten flash_atten_causal; do
		run "$BIN/$K" -v "$REPO/configs/kernel_sampling/test/$op.yml" --device cpu --precision bf16
		[ "$status" -eq 0 ]
		[[ $output == *"${op}_bf16 [1, 2, 4, 17, 128] skipped: head size dim/h = 32 is not 64 or 128"* ]]
		[[ $output == *"16 shapes: 12 measured, 4 skipped, 0 failed"* ]]
		csv=$(ls sampling_data/*_${op}_bf16_1_1.csv)
		[ "$(head -1 "$csv")" = "mp,b,h,l,dim,F_dur(us),B_dur(us)" ]
		rows "$csv" | cut -d, -f6,7 | tr ',' '\n' | grep -qvE '^[0-9]+(\.[0-9]{1,3})?$' && return 1
		run "$BIN/$K" "$REPO/configs/kernel_sampling/test/$op.yml" --device cpu --precision fp32
		[ "$status" -eq 0 ]
		[[ $output == *"16 shapes: 0 measured, 16 skipped, 0 failed"* ]]
		grep -q "| Skipped: \[1, 2, 2, 17, 128\]: $op runs in fp16 or bf16 only: fused attention is half-precision" sampling_log/*_${op}_fp32_1_1.txt
		[ "$(rows sampling_data/*_${op}_fp32_1_1.csv | wc -l)" -eq 0 ]
	done
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/flash_atten.yml" --device cpu --precision fp32 --run get_one
	assert_error 1 $K "flash_atten.yml: flash_atten \[2, 2, 4, 41, 256\]: flash_atten runs in fp16 or bf16 only"
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/flash_atten.yml" --device cpu --run get_one --shape 1,1,2,8,320
	assert_error 1 $K "flash_atten \[1, 1, 2, 8, 320\]: head size dim/h = 160 is not 64 or 128"
}

@test "--attention: own runs the CPU reference; cudnn on the CPU and unknown names are errors, nothing written" {
	cd "$T"
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/flash_atten_causal.yml" --device cpu --attention own --run get_one
	[ "$status" -eq 0 ]
	[[ $output =~ ^flash_atten_causal_fp16:\ input_shape:\ \[2,\ 2,\ 4,\ 41,\ 256\]\ timecost\(us\)\ \[fwd,\ bwd\]:\ \[[0-9.]+,\ [0-9.]+\]$ ]]
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/flash_atten.yml" --device cpu --attention cudnn
	assert_error 1 $K "^kernel-sample: error: --attention cudnn: the run is on the CPU \(--device cpu, or no usable GPU\), where flash_atten is the CPU reference$"
	run "$BIN/$K" "$REPO/configs/kernel_sampling/test/flash_atten.yml" --device cpu --attention flash
	assert_error 2 $K "--attention: 'flash' is not one of cudnn, own"
	[ ! -e sampling_data ] && [ ! -e sampling_log ]
}
