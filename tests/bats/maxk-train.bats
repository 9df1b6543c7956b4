#!/usr/bin/env bats
# maxk-train: training on the CPU (every option, every bad input, outputs,
# determinism, resume), usage errors, and what the kernel benchmark mode
# does without a GPU (the benchmark itself runs on the GPU machine:
# scripts/bench-maxk.sh).
load helpers

G=maxk-train
# A small, fast model: the tests run on the CPU backend.
SMALL=(--hidden 16 --maxk 4 --layers 2 --kernel-mode cpu)

dataset() { # dataset DIR [FLAW]: tests/bats/ref/gnn_dataset.py
	"$PY" "$REPO/tests/bats/ref/gnn_dataset.py" "$@"
}

@test "--help describes training and the benchmark mode" {
	assert_help_version $G
	[[ $output == *"--bench-kernels"* ]]
	[[ $output == *"--kernel-mode"* ]]
	[[ $output == *"--checkpoint"* ]]
}

@test "usage errors exit 2" {
	run "$BIN/$G"
	assert_error 2 $G "no DATASET given"
	run "$BIN/$G" ds --synthetic csbm
	assert_error 2 $G "give DATASET or --synthetic, not both"
	run "$BIN/$G" ds extra
	assert_error 2 $G "unexpected argument 'extra'"
	run "$BIN/$G" ds --hidden 64 --maxk 65
	assert_error 2 $G "--maxk 65 is larger than --hidden 64"
	run "$BIN/$G" ds --hidden 0
	assert_error 2 $G "--hidden: 0 is out of range"
	run "$BIN/$G" ds --hidden 4097
	assert_error 2 $G "--hidden: 4097 is out of range"
	run "$BIN/$G" ds --model gat
	assert_error 2 $G "--model: 'gat' is not one of sage, gcn, gin"
	run "$BIN/$G" ds --nonlinear tanh
	assert_error 2 $G "--nonlinear: 'tanh' is not one of relu, maxk"
	run "$BIN/$G" ds --layers 65
	assert_error 2 $G "--layers: 65 is out of range"
	run "$BIN/$G" ds --dropout 1
	assert_error 2 $G "--dropout: 1 is out of range"
	run "$BIN/$G" ds --lr 0
	assert_error 2 $G "--lr"
	run "$BIN/$G" ds --weight-decay -1
	assert_error 2 $G "--weight-decay"
	run "$BIN/$G" ds --epochs 0
	assert_error 2 $G "--epochs"
	run "$BIN/$G" ds --eval-every 0
	assert_error 2 $G "--eval-every"
	run "$BIN/$G" ds --metric f1
	assert_error 2 $G "--metric: 'f1' is not one of accuracy, micro-f1, roc-auc, auto"
	run "$BIN/$G" ds --kernel-mode dgl
	assert_error 2 $G "--kernel-mode: 'dgl' is not one of auto, maxk, cusparse, cpu"
	run "$BIN/$G" ds --kernel-mode maxk --nonlinear relu
	assert_error 2 $G "--kernel-mode maxk needs --nonlinear maxk"
	run "$BIN/$G" ds --kernel-mode cpu --device cuda
	assert_error 2 $G "--kernel-mode cpu contradicts --device cuda"
	run "$BIN/$G" ds --kernel-mode cusparse --device cpu
	assert_error 2 $G "--kernel-mode cusparse runs on the GPU, not --device cpu"
	run "$BIN/$G" ds --device tpu
	assert_error 2 $G "--device"
	run "$BIN/$G" ds --tf32 maybe
	assert_error 2 $G "--tf32: 'maybe' is not one of off, on"
	run "$BIN/$G" ds --validate-kernels --nonlinear relu
	assert_error 2 $G "--validate-kernels needs --nonlinear maxk"
	run "$BIN/$G" ds --validate-kernels --layers 0
	assert_error 2 $G "--validate-kernels needs --nonlinear maxk and --layers 1"
	run "$BIN/$G" ds --fallback-threshold 0.1
	assert_error 2 $G "--fallback-threshold needs --validate-kernels"
	run "$BIN/$G" ds --checkpoint-every 5
	assert_error 2 $G "--checkpoint-every needs --checkpoint FILE"
	run "$BIN/$G" ds --reps 3
	assert_error 2 $G "--reps belongs to --bench-kernels"
	run "$BIN/$G" ds -o out.csv
	assert_error 2 $G "--output belongs to --bench-kernels"
	run "$BIN/$G" ds --log
	assert_error 2 $G "option '--log' needs a value"
}

@test "benchmark mode: usage errors exit 2" {
	run "$BIN/$G" --bench-kernels
	assert_error 2 $G "no GRAPH given"
	run "$BIN/$G" --bench-kernels g.npz --synthetic flickr_like
	assert_error 2 $G "not both"
	run "$BIN/$G" --bench-kernels g.npz extra
	assert_error 2 $G "unexpected argument 'extra'"
	run "$BIN/$G" --bench-kernels g.npz --maxk 0
	assert_error 2 $G "--maxk"
	run "$BIN/$G" --bench-kernels g.npz --hidden 64 --maxk 65
	assert_error 2 $G "--maxk 65 is larger than --hidden 64"
	run "$BIN/$G" --bench-kernels g.npz --maxk 257
	assert_error 2 $G "--maxk 257 is larger than --hidden 256"
	run "$BIN/$G" --bench-kernels g.npz --hidden 8
	assert_error 2 $G "--maxk 16 is larger than --hidden 8"
	run "$BIN/$G" --bench-kernels g.npz --hidden 2048
	assert_error 2 $G "--hidden"
	run "$BIN/$G" --bench-kernels g.npz --append
	assert_error 2 $G "--append needs -o FILE"
	run "$BIN/$G" --bench-kernels g.npz --reps 0
	assert_error 2 $G "--reps"
	run "$BIN/$G" --bench-kernels g.npz --log l.csv
	assert_error 2 $G "--log is for training, not --bench-kernels"
	run "$BIN/$G" --bench-kernels g.npz --norm
	assert_error 2 $G "--norm is for training"
}

@test "benchmark mode without a usable GPU: one line saying why, exit 1, no output" {
	if "$BIN/$G" --bench-kernels --synthetic powerlaw:nodes=10,edges=20 --reps 1 >/dev/null 2>&1; then
		skip "a GPU is usable here"
	fi
	run "$BIN/$G" --bench-kernels --synthetic flickr_like -o "$T/out.csv"
	assert_error 1 $G "--bench-kernels: no usable CUDA device"
	assert_only_files "$T"
	run "$BIN/$G" bench --synthetic flickr_like -o "$T/out.csv"
	assert_error 1 $G "bench: no usable CUDA device"
	assert_only_files "$T"
}

@test "the benchmark is the bench command; --bench-kernels, anywhere among the options, too" {
	run "$BIN/$G" bench
	assert_error 2 $G "no GRAPH given"
	run "$BIN/$G" bench g.npz --hidden 64 --maxk 65
	assert_error 2 $G "--maxk 65 is larger than --hidden 64"
	run "$BIN/$G" bench g.npz --log l.csv
	assert_error 2 $G "--log is for training, not bench"
	run "$BIN/$G" bench g.npz --device cpu
	assert_error 2 $G "--device is for training, not bench"
	run "$BIN/$G" g.npz --reps 0 --bench-kernels
	assert_error 2 $G "--reps: 0 is out of range"
	run "$BIN/$G" --append g.npz --bench-kernels
	assert_error 2 $G "--append needs -o FILE"
	run "$BIN/$G" g.npz --norm --bench-kernels
	assert_error 2 $G "--norm is for training, not --bench-kernels"
	run "$BIN/$G" bench --help
	[ "$status" -eq 0 ]
	[[ $output == *"maxk-train bench GRAPH"* ]]
}

@test "bad datasets: one line naming the file, exit 1, no outputs" {
	local flaw want
	while read -r flaw want; do
		rm -rf "$T/ds" "$T/out"
		mkdir "$T/out"
		dataset "$T/ds" "$flaw"
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 2 --log "$T/out/log.csv" \
			--save-model "$T/out/m.npz" --predict "$T/out/p.npy" --checkpoint "$T/out/ck.npz"
		assert_error 1 $G "$want"
		assert_only_files "$T/out"
	done <<-EOF
	features_rows ds/features.npy: 119 rows, but the graph has 120 nodes
	labels_range ds/labels.npy: node 7 has label -1
	masks_overlap ds/val_mask.npy: node 0 is also in train_mask.npy
	mask_empty ds/test_mask.npy: no nodes: the test split is empty
	nan_features ds/features.npy: NaN at row 3 column 2
	ogb_missing ds/raw/node-label.csv.gz: missing
	EOF
	run "$BIN/$G" "$T/nothing" "${SMALL[@]}"
	assert_error 1 $G "nothing"
	# A bad --synthetic spec is a usage error, found before any work.
	run "$BIN/$G" --synthetic csbm:nodes=0 "${SMALL[@]}"
	assert_error 2 $G "--synthetic: nodes=0"
	run "$BIN/$G" --synthetic bogus_like "${SMALL[@]}"
	assert_error 2 $G "--synthetic: unknown dataset 'bogus_like'"
	run "$BIN/$G" --synthetic reddit_like:edges=x "${SMALL[@]}"
	assert_error 2 $G "--synthetic"
}

@test "a folder, an OGB folder, self-loops already in the graph, multi-label data: all train" {
	local flaw
	for flaw in "" ogb selfloops multilabel; do
		rm -rf "$T/ds"
		dataset "$T/ds" $flaw
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 --selfloop
		[ "$status" -eq 0 ] || { echo "$flaw: $output"; return 1; }
		[[ $output == *"Best epoch 000"* ]]
	done
	[[ $output == *"micro-F1"* ]]
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 2 --metric accuracy
	assert_error 2 $G "--metric accuracy needs class-id labels"
}

@test "MaxK-GNN's graph.indptr/graph.indices and index-array splits train as graph.npz and masks do" {
	dataset "$T/ds"
	cp -r "$T/ds" "$T/raw"
	"$PY" - "$T/raw" <<-'EOF'
	import os, sys
	import numpy as np, scipy.sparse as sp
	d = sys.argv[1]
	g = sp.load_npz(f"{d}/graph.npz").tocsr()
	g.indptr.astype(np.int32).tofile(f"{d}/graph.indptr")
	g.indices.astype(np.int32).tofile(f"{d}/graph.indices")
	os.remove(f"{d}/graph.npz")
	for s, t in (("train", np.int64), ("val", np.int32), ("test", np.int64)):
	    m = np.load(f"{d}/{s}_mask.npy")
	    np.save(f"{d}/{s}_idx.npy", np.flatnonzero(m)[::-1].astype(t))
	    os.remove(f"{d}/{s}_mask.npy")
	EOF
	"$BIN/$G" -q "$T/ds" "${SMALL[@]}" --epochs 4 --save-model "$T/a.npz" > "$T/a.out"
	"$BIN/$G" -q "$T/raw" "${SMALL[@]}" --epochs 4 --save-model "$T/b.npz" > "$T/b.out"
	cmp "$T/a.npz" "$T/b.npz"
	diff <(grep -v Peak "$T/a.out") <(grep -v Peak "$T/b.out")
}

@test "training writes the log, the model and the predictions" {
	dataset "$T/ds"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 6 --eval-every 4 --log "$T/log.csv" \
		--save-model "$T/m.npz" --predict "$T/p.npy"
	[ "$status" -eq 0 ]
	[[ $output =~ Final\ epoch\ 0006:\ loss\ [0-9.]+,\ train\ accuracy\ [0-9.]+,\ val\ accuracy\ [0-9.]+,\ test\ accuracy\ [0-9.]+ ]]
	[[ $output =~ Best\ epoch\ 000[46]:\ train\ accuracy ]]
	[[ $output =~ Peak\ memory:\ [0-9.]+\ MiB ]]
	[ "$(head -1 "$T/log.csv")" = "epoch,loss,train,val,test,forward_ms,backward_ms,epoch_ms" ]
	[ "$(wc -l < "$T/log.csv")" -eq 7 ]
	# Scores in the evaluated epochs only: 4 and the last.
	[ "$(cut -d, -f1,3 "$T/log.csv" | grep -c ',$')" -eq 4 ]
	"$PY" - "$T" <<-'EOF'
	import sys
	import numpy as np
	t = sys.argv[1]
	p = np.load(f"{t}/p.npy")
	assert p.shape == (120, 3) and p.dtype == np.float32, (p.shape, p.dtype)
	m = np.load(f"{t}/m.npz")
	want = {"lin_in.weight": (16, 6), "lin_in.bias": (16,), "lin_out.weight": (3, 16),
		"lin_out.bias": (3,)}
	for l in range(2):
	    for part in ("fc_self.weight", "fc_neigh.weight"):
	        want[f"layers.{l}.{part}"] = (16, 16)
	    want[f"layers.{l}.bias"] = (16,)
	assert {k: m[k].shape for k in m.files} == want, m.files
	# The logits are the saved model's: lin_out of the last layer's output
	# cannot be recomputed without the graph code, but lin_in's bias moved.
	assert np.isfinite(p).all()
	log = np.genfromtxt(f"{t}/log.csv", delimiter=",", names=True)
	assert (log["epoch"] == np.arange(1, 7)).all() and (log["loss"] > 0).all()
	assert (log["epoch_ms"] >= log["forward_ms"]).all()
	EOF
}

@test "the same seed gives the same run; another seed another" {
	dataset "$T/ds"
	for s in a b; do
		"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 5 --seed 3 --save-model "$T/$s.npz" \
			--log "$T/$s.csv" > "$T/$s.out" 2>/dev/null
	done
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 5 --seed 4 --save-model "$T/c.npz" 2>/dev/null
	cmp "$T/a.npz" "$T/b.npz"
	! cmp -s "$T/a.npz" "$T/c.npz"
	diff <(cut -d, -f1-5 "$T/a.csv") <(cut -d, -f1-5 "$T/b.csv")
	diff <(grep -v Peak "$T/a.out") <(grep -v Peak "$T/b.out")
}

@test "--resume after a finished shorter run equals the uninterrupted run, byte for byte" {
	dataset "$T/ds"
	local opts=("$T/ds" "${SMALL[@]}" --model gin --norm --dropout 0.3 --weight-decay 1e-4)
	"$BIN/$G" "${opts[@]}" --epochs 8 --save-model "$T/whole.npz" --log "$T/whole.csv" \
		--predict "$T/whole.npy" 2>/dev/null
	"$BIN/$G" "${opts[@]}" --epochs 3 --checkpoint "$T/ck.npz" 2>/dev/null
	run "$BIN/$G" "${opts[@]}" --epochs 8 --resume "$T/ck.npz" --save-model "$T/resumed.npz" \
		--log "$T/resumed.csv" --predict "$T/resumed.npy"
	[ "$status" -eq 0 ]
	[[ $output == *"resumed from $T/ck.npz at epoch 3"* ]]
	cmp "$T/whole.npz" "$T/resumed.npz"
	cmp "$T/whole.npy" "$T/resumed.npy"
	diff <(cut -d, -f1-5 "$T/whole.csv") <(cut -d, -f1-5 "$T/resumed.csv")
}

@test "SIGTERM: a checkpoint at the end of the epoch, and --resume ends as the uninterrupted run" {
	local opts=(--synthetic csbm:nodes=1000,feat=16 --hidden 32 --maxk 8 --kernel-mode cpu
		--epochs 150 --eval-every 50)
	"$BIN/$G" "${opts[@]}" --save-model "$T/whole.npz" >/dev/null 2>&1
	stopped_by_sigterm "${opts[@]}"
	# A second run, killed outright: the checkpoint stays whole.
	"$BIN/$G" "${opts[@]}" --resume "$T/ck.npz" --checkpoint "$T/ck.npz" \
		--checkpoint-every 1 >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	kill -KILL $pid || true
	wait $pid || true
	run "$BIN/$G" "${opts[@]}" --resume "$T/ck.npz" --save-model "$T/resumed.npz"
	[ "$status" -eq 0 ]
	cmp "$T/whole.npz" "$T/resumed.npz"
}

@test "--log grows a row per epoch while training runs (tail -f); a SIGKILLed run keeps its rows" {
	local opts=(--synthetic csbm:nodes=1000,feat=16 --hidden 32 --maxk 8 --kernel-mode cpu
		--epochs 100000 -q)
	"$BIN/$G" "${opts[@]}" --log "$T/log.csv" > /dev/null 2>&1 &
	local pid=$! i
	for i in $(seq 400); do [ "$(wc -l < "$T/log.csv" 2>/dev/null || echo 0)" -ge 4 ] && break; sleep 0.05; done
	# still running, and the rows are there already
	kill -0 $pid
	local rows
	rows=$(wc -l < "$T/log.csv")
	[ "$rows" -ge 4 ]
	kill -KILL $pid
	wait $pid || true
	[ "$(head -1 "$T/log.csv")" = "epoch,loss,train,val,test,forward_ms,backward_ms,epoch_ms" ]
	# every line whole and the epochs in order: at most the one being written is lost
	"$PY" - "$T/log.csv" <<-'EOF'
	import sys
	lines = open(sys.argv[1]).read().split("\n")
	assert lines[-1] == "", "a line cut in half"
	rows = [l.split(",") for l in lines[1:-1]]
	assert all(len(r) == 8 for r in rows)
	assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
	EOF
}

@test "--log - and --predict - write to standard output; an .npz option refuses '-' before training" {
	dataset "$T/ds"
	"$BIN/$G" -q "$T/ds" "${SMALL[@]}" --epochs 3 --log "$T/log.csv" > /dev/null
	run "$BIN/$G" -q "$T/ds" "${SMALL[@]}" --epochs 3 --log -
	[ "$status" -eq 0 ]
	diff <(printf '%s\n' "${lines[@]:0:4}" | cut -d, -f1-5) <(cut -d, -f1-5 "$T/log.csv")
	[[ ${lines[4]} == "Final epoch 0003:"* ]]
	cd "$T"
	"$BIN/$G" -q "$T/ds" "${SMALL[@]}" --epochs 3 --predict - > p.npy
	"$BIN/$G" -q "$T/ds" "${SMALL[@]}" --epochs 3 --predict want.npy > /dev/null
	# the final report follows the array on stdout: the array is whole before it
	"$PY" -c "
import numpy as np
with open('p.npy', 'rb') as f:
    got = np.lib.format.read_array(f)
assert (got == np.load('want.npy')).all() and got.shape == (120, 3)"
	rm want.npy
	for opt in --save-model --checkpoint; do
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 $opt -
		assert_error 2 $G "$opt -: an .npz is written with seeks, so not to standard output"
	done
	run "$BIN/$G" - "${SMALL[@]}" --epochs 3
	assert_error 1 $G ": -: a dataset is a folder, not standard input"
	assert_only_files "$T" ds log.csv p.npy
}

@test "--resume refuses other settings, a missing or broken checkpoint" {
	dataset "$T/ds"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 2 --checkpoint "$T/ck.npz" 2>/dev/null
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 4 --resume "$T/ck.npz" --hidden 8
	assert_error 1 $G "ck.npz: the checkpoint was made with hidden 16, this run has 8"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 4 --resume "$T/ck.npz" --model gcn
	assert_error 1 $G "made with model sage, this run has gcn"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 4 --resume "$T/ck.npz" --dropout 0.1
	assert_error 1 $G "made with dropout 0.5, this run has 0.1"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 1 --resume "$T/ck.npz"
	assert_error 1 $G "at epoch 2, past the 1 epochs of this run"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --resume "$T/none.npz" --log "$T/log.csv"
	assert_error 1 $G "none.npz"
	printf 'not a zip' > "$T/bad.npz"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --resume "$T/bad.npz" --log "$T/log.csv"
	assert_error 1 $G "bad.npz"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 1 --save-model "$T/model.npz" 2>/dev/null
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --resume "$T/model.npz"
	assert_error 1 $G "model.npz: not a maxk-train checkpoint: no member 'state'"
	assert_only_files "$T" ds ck.npz bad.npz model.npz
}

@test "--resume refuses a checkpoint with NaN weights, infinite or negative moments" {
	dataset "$T/ds"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 2 --checkpoint "$T/ck.npz" 2>/dev/null
	for spec in params:nan adam_m1:inf adam_m2:-1; do
		member=${spec%%:*} value=${spec#*:}
		$PY - "$T/ck.npz" "$T/bad.npz" "$member" "$value" <<'PY'
import sys
import numpy as np
z = dict(np.load(sys.argv[1]))
z[sys.argv[3]][3] = float(sys.argv[4])
np.savez(sys.argv[2], **z)
PY
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 4 --resume "$T/bad.npz"
		assert_error 1 $G "bad.npz: member '$member': element 3 is"
	done
	assert_only_files "$T" ds ck.npz bad.npz
}

@test "an output folder that does not exist is an error before training" {
	dataset "$T/ds"
	for opt in --log --save-model --predict --checkpoint; do
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" "$opt" "$T/no/such/file"
		assert_error 1 $G "$opt $T/no/such/file: cannot write in folder '$T/no/such'"
	done
}

@test "an output folder this user may not write in is an error before training" {
	dataset "$T/ds"
	chmod 755 "$T"
	chmod -R a+rX "$T/ds"
	mkdir -m 555 "$T/ro"
	# root may write anywhere: run as nobody there
	local as=()
	if [ "$(id -u)" -eq 0 ]; then
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		"${as[@]}" test -x "$BIN/$G" || skip "nobody may not run $BIN/$G (a folder above it is private)"
	fi
	for opt in --log --save-model --predict --checkpoint; do
		run "${as[@]}" "$BIN/$G" "$T/ds" "${SMALL[@]}" "$opt" "$T/ro/file"
		assert_error 1 $G "$opt $T/ro/file: cannot write in folder '$T/ro'"
	done
	assert_only_files "$T/ro"
}

@test "every model, nonlinearity and option trains" {
	dataset "$T/ds"
	local args
	while read -r args; do
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 $args
		[ "$status" -eq 0 ] || { echo "$args: $output"; return 1; }
		[[ $output == *"Best epoch"* ]] || { echo "$args: $output"; return 1; }
	done <<-EOF
	--model sage --nonlinear relu
	--model gcn
	--model gcn --nonlinear relu --norm
	--model gin
	--model gin --nonlinear relu --norm --selfloop
	--layers 0
	--layers 0 --nonlinear relu
	--layers 1 --dropout 0
	--lr 0.05 --weight-decay 5e-4
	--tf32 on --device cpu
	--metric accuracy --eval-every 2
	--seed 0
	EOF
}

@test "--layers 0 is the MLP-like baseline: no layer parameters" {
	dataset "$T/ds"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --layers 0 --epochs 1 --save-model "$T/m.npz" 2>/dev/null
	"$PY" -c "import numpy as np, sys; m = np.load(sys.argv[1]); assert sorted(m.files) == ['lin_in.bias', 'lin_in.weight', 'lin_out.bias', 'lin_out.weight'], m.files" "$T/m.npz"
}

@test "--validate-kernels prints MaxK-GNN's lines; a failed check falls back and trains on" {
	dataset "$T/ds"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 2 --validate-kernels
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Validating MaxK kernel vs dense aggregation for k=4" ]
	[[ ${lines[1]} =~ ^Max\ error\ \(at\ input\ nonzero\):\ 0\.[0-9]{8}$ ]]
	[ "${lines[2]}" = "Validation PASSED! MaxK kernel produces correct results" ]
	[[ $output == *"MaxK aggregation"* ]]
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 2 --validate-kernels --fallback-threshold -1
	[ "$status" -eq 0 ]
	[[ ${lines[2]} =~ ^Validation\ FAILED:\ max\ error\ .*\ exceeds\ --fallback-threshold\ -1$ ]]
	[ "${lines[3]}" = "MaxK kernel failed validation, falling back to dense aggregation" ]
	[[ $output == *"dense aggregation"* ]]
	[[ $output == *"Best epoch"* ]]
	# The dense path computes the same model up to rounding.
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 --predict "$T/a.npy" 2>/dev/null >/dev/null
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 --predict "$T/b.npy" --validate-kernels \
		--fallback-threshold -1 2>/dev/null >/dev/null
	"$PY" -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); assert np.allclose(a, b, rtol=1e-3, atol=1e-4), abs(a - b).max()" "$T/a.npy" "$T/b.npy"
}

@test "--profile-kernels prints MaxK-GNN's timing lines" {
	dataset "$T/ds"
	run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 20 --profile-kernels -q
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^Epoch\ 0010:\ Avg\ Forward\ [0-9]+\.[0-9]{3}ms,\ Avg\ Backward\ [0-9]+\.[0-9]{3}ms$ ]]
	[[ ${lines[1]} =~ ^Epoch\ 0020:\ Avg\ Forward ]]
	[[ $output =~ Final\ Timing\ -\ Avg\ Forward:\ [0-9]+\.[0-9]{3}ms,\ Avg\ Backward:\ [0-9]+\.[0-9]{3}ms ]]
	[[ $output =~ Total\ per\ epoch:\ [0-9]+\.[0-9]{3}ms ]]
}

@test "-q silences the progress, -v shows every epoch" {
	dataset "$T/ds"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 -q 2> "$T/err" > "$T/out"
	[ ! -s "$T/err" ]
	grep -q "Best epoch" "$T/out"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 -v 2> "$T/err" > /dev/null
	[ "$(grep -c '^Epoch 000[123]: loss' "$T/err")" -eq 3 ]
}

@test "multi-label scores equal scikit-learn's definitions (micro-F1, ROC-AUC via SciPy)" {
	dataset "$T/ds" multilabel
	for metric in micro-f1 roc-auc; do
		run "$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 1 --metric $metric --predict "$T/p.npy" -q
		[ "$status" -eq 0 ]
		"$PY" - "$T" "$metric" "$output" <<-'EOF'
		import re, sys
		import numpy as np
		from scipy.stats import mannwhitneyu
		t, metric, out = sys.argv[1:]
		p = np.load(f"{t}/p.npy")
		y = np.load(f"{t}/ds/labels.npy") > 0.5
		test = np.load(f"{t}/ds/test_mask.npy")
		p, y = p[test], y[test]
		if metric == "micro-f1":
		    pred = p > 0
		    tp, fp, fn = (pred & y).sum(), (pred & ~y).sum(), (~pred & y).sum()
		    want = 2 * tp / (2 * tp + fp + fn)
		else:
		    aucs = [mannwhitneyu(p[y[:, c], c], p[~y[:, c], c]).statistic
		            / (y[:, c].sum() * (~y[:, c]).sum())
		            for c in range(y.shape[1]) if 0 < y[:, c].sum() < len(y)]
		    want = np.mean(aucs)
		got = float(re.search(r"Best epoch 0001: .* test \S+ ([0-9.]+)", out).group(1))
		assert abs(got - want) < 6e-5, (metric, got, want)
		EOF
	done
}

@test "without a GPU: the GPU kernel modes and --device cuda say why, exit 1" {
	if "$BIN/$G" --synthetic csbm:nodes=50 --hidden 8 --maxk 2 --epochs 1 --device cuda \
		>/dev/null 2>&1; then
		skip "a GPU is usable here"
	fi
	dataset "$T/ds"
	for args in "--kernel-mode maxk" "--kernel-mode cusparse" "--device cuda"; do
		run "$BIN/$G" "$T/ds" --hidden 16 --maxk 4 --epochs 1 $args --log "$T/log.csv"
		assert_error 1 $G "--kernel-mode/--device: "
		[ ! -e "$T/log.csv" ]
	done
}

@test "the predictions equal a NumPy forward pass of the saved weights, for every model" {
	dataset "$T/ds"
	local args nl sl
	while read -r args; do
		"$BIN/$G" "$T/ds" "${SMALL[@]}" --epochs 3 $args --save-model "$T/m.npz" \
			--predict "$T/p.npy" -q > /dev/null
		nl=maxk sl=
		[[ $args == *relu* ]] && nl=relu
		[[ $args == *selfloop* ]] && sl=selfloop
		run "$PY" "$REPO/tests/bats/ref/gnn_forward.py" "$T/ds" "$T/m.npz" "$T/p.npy" $nl 4 $sl
		[ "$status" -eq 0 ] || { echo "$args: $output"; return 1; }
	done <<-EOF
	--model sage --nonlinear relu
	--model sage --norm
	--model gcn
	--model gcn --nonlinear relu --norm --selfloop
	--model gin --nonlinear relu
	--model gin --norm --layers 3
	--layers 0
	--layers 0 --nonlinear relu
	EOF
}
