#!/usr/bin/env bash
# ksmm-tune's GPU modes from the command line (TAP): tune against its own
# dry run, a killed sweep resumed with no row lost or repeated, best, apply
# on the GPU against the CPU, bench and --ncu. make test-gpu and
# scripts/gpu-check.sh run it with SPKIT_BIN set to the programs' folder.
set -u
BIN=${SPKIT_BIN:?SPKIT_BIN must name the folder of the programs}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$REPO/configs/ksmm/space_sanity.yaml" ] || REPO=$(pwd)
SPACE=$REPO/configs/ksmm/space_sanity.yaml
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
n=0 failed=0
export SPKIT_CACHE_DIR=$T/cache

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

# Two patterns (b != c, d = 1) at a batch no tile divides, both dtypes of
# 16 and 32 bits, both layouts.
TUNE=(tune --pattern 4,64,64,16 --pattern 2,48,192,1 --batch 1000 --dtype fp32,fp16
	--layout bsf,bsl --space "$SPACE" --reps 5 --warmup 1)

tune_matches_dry_run() {
	"$BIN/ksmm-tune" "${TUNE[@]}" --dry-run -q >plan.csv || return 1
	"$BIN/ksmm-tune" "${TUNE[@]}" -o r.csv || return 1
	local want have
	want=$(grep -c ',run$' plan.csv)
	have=$(($(wc -l <r.csv) - 1))
	[ "$want" -eq "$have" ] || { echo "$have rows, the dry run says $want"; return 1; }
	# every job has an ok configuration; no configuration computes wrong
	awk -F, 'NR > 1 { job = $1 FS $2 FS $3 FS $4 FS $5 FS $6 FS $7; jobs[job] = 1
		if ($20 == "ok") ok[job] = 1; if ($20 == "wrong") { print "wrong: " $0; bad = 1 } }
		END { for (j in jobs) if (!ok[j]) { print "no ok row: " j; bad = 1 }; exit bad }' r.csv
}
check "ksmm-tune tune: a row for every configuration the dry run says runs, each checked" \
	tune_matches_dry_run

resumed_sweep_loses_nothing() {
	cp r.csv whole.csv
	"$BIN/ksmm-tune" "${TUNE[@]}" -o r.csv -q || return 1
	cmp r.csv whole.csv || { echo "a finished sweep rerun changed its file"; return 1; }
	"$BIN/ksmm-tune" "${TUNE[@]}" -o k.csv -q &
	local pid=$!
	sleep 2
	kill -TERM "$pid"
	wait "$pid"
	local kept=$(($(wc -l <k.csv) - 1))
	"$BIN/ksmm-tune" "${TUNE[@]}" -o k.csv -q || return 1
	echo "killed with $kept rows"
	[ "$(cut -d, -f1-16 k.csv | sort | uniq -d | wc -l)" -eq 0 ] || { echo "repeated rows"; return 1; }
	[ "$(cut -d, -f1-16 k.csv | sort)" = "$(cut -d, -f1-16 whole.csv | sort)" ]
}
check "ksmm-tune tune: killed and rerun, the same rows, none twice" resumed_sweep_loses_nothing

npy_random() { # SHAPE FILE: float32 uniform values in [-1, 1)
	python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.random.default_rng(3).uniform(-1, 1, tuple(int(x) for x in sys.argv[1].split(','))).astype(np.float32))" "$1" "$2"
}

apply_on_both_devices() {
	python3 -c 'import numpy' 2>/dev/null || { echo "no numpy here: skipped"; return 0; }
	"$BIN/ksmm-tune" best r.csv -o best.csv || return 1
	npy_random 4,64,64,16 w1.npy && npy_random 2,128,64,8 w2.npy && npy_random 1000,4096 x.npy || return 1
	for dtype in fp32 fp16; do
		"$BIN/ksmm-tune" apply --pattern 4,64,64,16 --pattern 2,128,64,8 --weights w1.npy,w2.npy \
			--dtype $dtype x.npy -o cpu.npy --device cpu || return 1
		"$BIN/ksmm-tune" apply --pattern 4,64,64,16 --pattern 2,128,64,8 --weights w1.npy,w2.npy \
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

ncu_runs_one() {
	local out
	out=$("$BIN/ksmm-tune" tune --pattern 4,64,64,16 --batch 1000 --space "$SPACE" --ncu -q) || return 1
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || { echo "$out"; return 1; }
	[[ $(printf '%s\n' "$out" | tail -n 1) == *,ok ]] || { echo "$out"; return 1; }
}
check "ksmm-tune tune --ncu: one configuration, once, its row on stdout" ncu_runs_one

echo "1..$n"
[ "$failed" -eq 0 ]
