#!/usr/bin/env bats
# Fault injection: each program's main CPU path with its Nth allocation and
# its Nth write failing, N walked from 1 to the last (tests/fault/walk.bash).
# Every failure must end in one error line, exit 1 and nothing left behind.
load helpers
source "$BATS_TEST_DIRNAME/../fault/walk.bash"

setup() {
	T=$(mktemp -d "${BATS_TMPDIR:-/tmp}/spkit-bats.XXXXXX")
	# ASan replaces the allocator itself; a second one cannot be preloaded.
	[ -n "$FAULT_LIB" ] || skip "no fault library in the sanitizer build"
	[ -f "$FAULT_LIB" ] || { echo "no $FAULT_LIB (make test builds it)"; return 1; }
	mkdir "$T/in"
	$PY - "$T/in" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
np.save(f'{d}/x.npy', np.linspace(-1, 1, 34).astype(np.float16))
np.save(f'{d}/w.npy', np.random.default_rng(1).standard_normal((2, 4, 4, 2)).astype(np.float32))
np.save(f'{d}/xk.npy', np.random.default_rng(2).standard_normal((3, 16)).astype(np.float32))
PY
	"$BIN/macko-compress" -q "$REPO/data/karate.mtx" -o "$T/in/k.npz"
}

walk_both() { # PROG 'OUTPUT...' COMMAND...
	fault_walk MALLOC "$@"
	fault_walk WRITE "$@"
}

@test "faults: maxk-genmeta reading a .mtx, writing .warp4 and a deflated .npz" {
	walk_both maxk-genmeta "k.warp4 k.npz" \
		"$BIN/maxk-genmeta" "$REPO/data/karate.mtx" -o k.warp4 --graph-out k.npz --compress
}

@test "faults: maxk-train resumed from a checkpoint, on a dataset folder" {
	mkdir "$T/ds"
	"$BIN/maxk-genmeta" -q --synthetic powerlaw:nodes=300,edges=2000 --graph-out "$T/ds/graph.npz"
	$PY - "$T/ds" <<'PY'
import sys
import numpy as np
d, n = sys.argv[1], 300
rng = np.random.default_rng(0)
np.save(f'{d}/features.npy', rng.standard_normal((n, 8)).astype(np.float32))
np.save(f'{d}/labels.npy', rng.integers(0, 3, n))
m = rng.random(n)
for name, keep in ('train', m < 0.6), ('val', (m >= 0.6) & (m < 0.8)), ('test', m >= 0.8):
    np.save(f'{d}/{name}_mask.npy', keep)
PY
	local train=("$BIN/maxk-train" "$T/ds" --device cpu --hidden 16 --maxk 4 --layers 1)
	"${train[@]}" -q --epochs 2 --checkpoint "$T/ck.npz" >/dev/null
	walk_both maxk-train "m.npz p.npy" "${train[@]}" --epochs 3 --resume "$T/ck.npz" \
		--save-model m.npz --predict p.npy
}

@test "faults: maxk-train on the CPU with a log, a model, predictions and a checkpoint" {
	# The times in log.csv and in the checkpoint's log differ from run to
	# run: the epochs and scores, the model and the predictions must not.
	fault_digest() {
		case $1 in
		*.csv) cut -d, -f1-5 "$1" | md5sum ;;
		*/ck.npz) echo checkpoint ;;
		*) md5sum <"$1" ;;
		esac
	}
	# The checkpoint, and the log written with it, stay after a failure.
	FAULT_KEEP="ck.npz log.csv" walk_both maxk-train "log.csv m.npz p.npy ck.npz" \
		"$BIN/maxk-train" --synthetic csbm:nodes=200,classes=3,feat=8,deg=4 --device cpu \
		--epochs 3 --hidden 16 --maxk 4 --layers 1 --log log.csv --save-model m.npz \
		--predict p.npy --checkpoint ck.npz --checkpoint-every 2
}

@test "faults: macko-compress of a .mtx to a deflated MACKO .npz, and back to .npy" {
	walk_both macko-compress "c.npz" \
		"$BIN/macko-compress" "$REPO/data/karate.mtx" -o c.npz --deflate --density 0.5
	walk_both macko-compress "d.npy" "$BIN/macko-compress" --decompress "$T/in/k.npz" -o d.npy
}

@test "faults: macko-spmv on the CPU" {
	walk_both macko-spmv "y.npy" \
		"$BIN/macko-spmv" "$T/in/k.npz" "$T/in/x.npy" -o y.npy --device cpu
}

@test "faults: graph-partition of an ONNX model to JSON, a YAML model to CSV" {
	walk_both graph-partition "r.json" \
		"$BIN/graph-partition" "$REPO/data/vit_block.onnx" --format json -o r.json
	walk_both graph-partition "r.csv" \
		"$BIN/graph-partition" "$REPO/configs/models/mlp.yaml" --batch 4 --format csv -o r.csv
}

@test "faults: graph-partition comparing two models" {
	walk_both graph-partition "c.csv" "$BIN/graph-partition" "$REPO/data/vit_block.onnx" \
		"$REPO/configs/models/mlp.yaml" --batch 2 --compare -f csv -o c.csv
}

@test "faults: ksmm-tune apply on the CPU" {
	walk_both ksmm-tune "y.npy" "$BIN/ksmm-tune" apply --pattern 2,4,4,2 \
		--weights "$T/in/w.npy" "$T/in/xk.npy" -o y.npy --device cpu
}

@test "faults: ksmm-tune best over two result files" {
	local header=batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows
	header=$header,thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status
	printf '%s\n' "$header" "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok" \
		"100,2,16,16,2,fp32,bsl,simt,64,8,64,4,4,1,2,0,1,0.4,0.01,1e-8,ok" >"$T/in/r1.csv"
	printf '%s\n' "$header" "100,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.3,0.01,1e-8,ok" \
		"50,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.1,0.01,1e-8,ok" >"$T/in/r2.csv"
	walk_both ksmm-tune "best.csv" "$BIN/ksmm-tune" best "$T/in/r1.csv" "$T/in/r2.csv" -o best.csv
}

@test "faults: kernel-sample merge of two parts" {
	local part=$T/in/CPU_layernorm_fp32_2 # parts 1 and 2 of 2
	printf '%s\n' "b,l,dim,F_dur(us),B_dur(us)" "4,8,16,1.5,2.5" "2,8,16,1.0,2.0" >"${part}_1.csv"
	printf '%s\n' "b,l,dim,F_dur(us),B_dur(us)" "2,8,32,1.1,2.1" >"${part}_2.csv"
	walk_both kernel-sample "m.csv" "$BIN/kernel-sample" merge "${part}_1.csv" "${part}_2.csv" \
		-o m.csv
}

@test "faults: kernel-sample fit of timing models, and predict from them" {
	local csv=$T/in/CPU_layernorm_fp32_1_1.csv
	{
		echo "b,l,dim,F_dur(us),B_dur(us)"
		for b in 1 2 3; do for l in 8 16 24 32; do for d in 16 32; do
			echo "$b,$l,$d,$((b * l * d / 64 + 1)).5,$((b * l * d / 32 + 2)).25"
		done; done; done
	} >"$csv"
	walk_both kernel-sample "CPU_layernorm_fp32_fwd.model CPU_layernorm_fp32_bwd.model" \
		"$BIN/kernel-sample" fit "$csv" --output-dir . --trees 20 --folds 0
	"$BIN/kernel-sample" fit -q "$csv" --output-dir "$T/in" --trees 20 --folds 0 >/dev/null
	printf '%s\n' b,l,dim 2,16,32 3,20,24 >"$T/in/shapes.csv"
	walk_both kernel-sample "p.csv" "$BIN/kernel-sample" predict \
		-m "$T/in/CPU_layernorm_fp32_fwd.model" -m "$T/in/CPU_layernorm_fp32_bwd.model" \
		--shapes "$T/in/shapes.csv" -o p.csv
}

@test "faults: kernel-sample layer, each operator of a layer timed on the CPU" {
	fault_digest() { cut -d, -f1 "$1" | md5sum; } # the operators, not their times
	walk_both kernel-sample "l.csv" "$BIN/kernel-sample" layer --layer 1,2,2,16,32 \
		--device cpu --precision fp32 -o l.csv
}

@test "faults: kernel-sample's CPU sweep, resumed after each failure" {
	# The sweep keeps the rows it flushed, and a rerun resumes: the shapes
	# must end the same, the times and the log differ from run to run.
	fault_digest() {
		case $1 in
		*.csv) cut -d, -f1-3 "$1" | sort | md5sum ;;
		*) echo log ;;
		esac
	}
	FAULT_RESUMABLE=1 walk_both kernel-sample "" \
		"$BIN/kernel-sample" "$REPO/configs/kernel_sampling/test/layernorm.yml" --device cpu \
		--precision fp32
}
