#!/usr/bin/env bats
# maxk-train with the graph's rows cut among ranks (--ranks N --device cpu:
# host threads, the partitioned training without a GPU): it trains as one
# rank does, writes its outputs once, resumes on another number of ranks,
# and refuses what cannot work. The GPU form (--gpus, NCCL) is
# tests/gpu/maxk_train_gpus.sh's.
load helpers
bats_require_minimum_version 1.5.0

G=maxk-train
SMALL=(--synthetic csbm:nodes=1500,seed=4 --hidden 32 --maxk 8 --layers 2 --norm --device cpu
       --eval-every 2)

# the first N rows of two logs agree: epoch exactly, loss within rel, scores within abs
logs_agree() { # A B N REL ABS
	$PY - "$@" <<'PY'
import csv, sys
a, b, n, rel, ab = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
ra, rb = list(csv.DictReader(open(a))), list(csv.DictReader(open(b)))
assert len(ra) >= n and len(rb) >= n, (len(ra), len(rb))
for x, y in zip(ra[:n], rb[:n]):
    assert x["epoch"] == y["epoch"]
    la, lb = float(x["loss"]), float(y["loss"])
    assert abs(la - lb) <= rel * abs(lb), (x["epoch"], la, lb)
    for s in ("train", "val", "test"):
        assert (x[s] == "") == (y[s] == ""), (x["epoch"], s)
        if x[s]:
            assert abs(float(x[s]) - float(y[s])) <= ab, (x["epoch"], s, x[s], y[s])
PY
}

@test "--ranks 1..4 train as one rank does, epoch by epoch; each rank says its rows and traffic" {
	"$BIN/$G" "${SMALL[@]}" --epochs 6 --dropout 0 --log "$T/one.csv" > "$T/one" 2>/dev/null
	for n in 2 3 4; do
		"$BIN/$G" "${SMALL[@]}" --epochs 6 --dropout 0 --ranks $n --log "$T/r$n.csv" \
			> "$T/out$n" 2> "$T/err$n"
		logs_agree "$T/r$n.csv" "$T/one.csv" 6 1e-4 0.01
		[ "$(grep -c '^rank [0-9]* (host): [0-9]* rows, [0-9]* received, peak memory [0-9.]* MiB, sent [0-9.]* MB an epoch$' "$T/err$n")" -eq $n ]
		grep -q "; cpu backend on $n ranks, MaxK aggregation$" "$T/err$n"
		grep -q '^Peak memory (rank 0): ' "$T/out$n"
	done
	# the rows add up to the graph's
	[ "$(sed -n 's/^rank [0-9]* (host): \([0-9]*\) rows.*/\1/p' "$T/err4" | paste -sd+ | bc)" -eq 1500 ]
}

@test "with dropout, ReLU, GCN, GIN and the dense aggregation the ranks still train as one" {
	local m
	for m in "--model gcn" "--model gin" "--nonlinear relu" "--kernel-mode cpu --dropout 0.3"; do
		# shellcheck disable=SC2086
		"$BIN/$G" "${SMALL[@]}" --epochs 4 $m --log "$T/one.csv" > /dev/null 2>&1
		# shellcheck disable=SC2086
		"$BIN/$G" "${SMALL[@]}" --epochs 4 $m --ranks 3 --log "$T/three.csv" > /dev/null 2>&1
		logs_agree "$T/three.csv" "$T/one.csv" 4 1e-4 0.01 || { echo "$m"; return 1; }
	done
}

@test "--exchange allgather trains as halo does, sending more" {
	"$BIN/$G" "${SMALL[@]}" --epochs 4 --ranks 3 --log "$T/halo.csv" > /dev/null 2> "$T/halo"
	"$BIN/$G" "${SMALL[@]}" --epochs 4 --ranks 3 --exchange allgather --log "$T/all.csv" \
		> /dev/null 2> "$T/all"
	logs_agree "$T/all.csv" "$T/halo.csv" 4 1e-4 0.01
	sent() { sed -n 's/^rank 0 .* sent \([0-9.]*\) MB an epoch$/\1/p' "$1"; }
	[ "$(echo "$(sent "$T/all") > $(sent "$T/halo")" | bc)" -eq 1 ]
}

@test "rank 0 alone writes; a checkpoint resumes on another number of ranks, and on one" {
	mkdir "$T/out"
	"$BIN/$G" "${SMALL[@]}" --epochs 8 --ranks 2 --checkpoint "$T/out/ck.npz" \
		--checkpoint-every 4 --log "$T/out/log.csv" --save-model "$T/out/model.npz" \
		--predict "$T/out/logits.npy" > /dev/null 2>&1
	assert_only_files "$T/out" ck.npz log.csv model.npz logits.npy
	[ "$(wc -l < "$T/out/log.csv")" -eq 9 ]
	$PY -c "import numpy as n, sys; a = n.load(sys.argv[1]); assert a.shape == (1500, 5), a.shape" \
		"$T/out/logits.npy"
	# the same run stopped after epoch 4 (its checkpoint) and resumed on 2 ranks ends
	# as it did: the sums are in the same order
	"$BIN/$G" "${SMALL[@]}" --epochs 4 --ranks 2 --checkpoint "$T/ck4.npz" --log "$T/a.csv" \
		> /dev/null 2>&1
	"$BIN/$G" "${SMALL[@]}" --epochs 8 --ranks 2 --resume "$T/ck4.npz" --log "$T/b.csv" \
		--save-model "$T/b.npz" > /dev/null 2>&1
	diff <(cut -d, -f1-5 "$T/out/log.csv") <(cut -d, -f1-5 "$T/b.csv")
	cmp "$T/out/model.npz" "$T/b.npz"
	# on 3 ranks and on 1: the epochs before the checkpoint are its own, the rest go on
	for n in 3 1; do
		"$BIN/$G" "${SMALL[@]}" --epochs 8 --ranks $n --resume "$T/ck4.npz" \
			--log "$T/c$n.csv" > /dev/null 2> "$T/err"
		grep -q "resumed from\|rank 0" "$T/err"
		diff <(head -5 "$T/a.csv" | cut -d, -f1-5) <(head -5 "$T/c$n.csv" | cut -d, -f1-5)
		logs_agree "$T/c$n.csv" "$T/out/log.csv" 8 1e-3 0.02
	done
}

@test "options that do not fit a partitioned run are usage errors" {
	run "$BIN/$G" "${SMALL[@]}" --gpus 2
	assert_error 2 $G "--gpus 2 runs on GPUs; --ranks 2 --device cpu runs"
	run "$BIN/$G" "${SMALL[@]}" --gpus 2 --ranks 2
	assert_error 2 $G "--gpus and --ranks say the same"
	run "$BIN/$G" "${SMALL[@]}" --ranks 2 --validate-kernels
	assert_error 2 $G "--validate-kernels runs on one rank"
	run "$BIN/$G" "${SMALL[@]}" --ranks 2 --rendezvous "$T"
	assert_error 2 $G "--rendezvous is for several processes"
	run "$BIN/$G" "${SMALL[@]}" --ranks 2 --exchange ring
	assert_error 2 $G "--exchange: 'ring'"
	run "$BIN/$G" "${SMALL[@]}" --ranks 0
	assert_error 2 $G "--ranks"
	run "$BIN/$G" "${SMALL[@]}" --ranks 2 --comm-timeout 0
	assert_error 2 $G "--comm-timeout"
	# more ranks than rows
	run "$BIN/$G" --synthetic csbm:nodes=40 --device cpu --epochs 1 --ranks 64
	assert_error 1 $G "csbm: cannot cut 40 rows into 64 blocks"
}

@test "several processes: host ranks refused, bad launch variables named" {
	run env WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 "$BIN/$G" "${SMALL[@]}" --epochs 1
	assert_error 2 $G "2 processes \(torchrun\): ranks on the host run in one process"
	run env SLURM_PROCID=1 SLURM_NTASKS=2 "$BIN/$G" "${SMALL[@]}" --epochs 1
	assert_error 2 $G "2 processes \(SLURM\): ranks on the host"
	run env WORLD_SIZE=2 RANK=x LOCAL_RANK=0 "$BIN/$G" "${SMALL[@]}" --epochs 1
	assert_error 2 $G "RANK"
	run env WORLD_SIZE=2 RANK=2 LOCAL_RANK=0 "$BIN/$G" "${SMALL[@]}" --epochs 1
	assert_error 2 $G "RANK"
}

@test "maxk-train-multi.sbatch: srun with the rendezvous and a run id new at each restart; requeued at 75" {
	cd "$T"
	mkdir fake
	cat > fake/srun <<-SH
	#!/bin/sh
	echo "NCCL_NVLS_ENABLE=\$NCCL_NVLS_ENABLE \$*" >> "$T/fake/srun.log"
	exit \${FAKE_STATUS:-0}
	SH
	printf '#!/bin/sh\necho "$*" >> "%s/scontrol.log"\n' "$T/fake" > fake/scontrol
	chmod +x fake/srun fake/scontrol
	run env PATH="$T/fake:$PATH" HOME="$T" SLURM_JOB_ID=9 SLURM_RESTART_COUNT=2 FAKE_STATUS=75 \
		MAXK_RUN_DIR="$T/run" SPKIT_BIN=/bin bash "$REPO/scripts/slurm/maxk-train-multi.sbatch" \
		--synthetic csbm
	[ "$status" -eq 75 ]
	grep -q "^NCCL_NVLS_ENABLE=0 /bin/maxk-train --synthetic csbm --rendezvous $T/.spkit-rendezvous --run-id 9.2 --checkpoint $T/run/ck.npz " fake/srun.log
	[ -d "$T/.spkit-rendezvous" ]
	[ "$(cat fake/scontrol.log)" = "requeue 9" ]
}

@test "SIGTERM: the ranks stop after the same epoch, rank 0's checkpoint resumes as the uninterrupted run" {
	local opts=(--synthetic csbm:nodes=1000,feat=16 --hidden 32 --maxk 8 --device cpu --ranks 3
		--epochs 150 --eval-every 50)
	"$BIN/$G" "${opts[@]}" --save-model "$T/whole.npz" > /dev/null 2>&1
	stopped_by_sigterm "${opts[@]}"
	# the sums are in the same order on 3 ranks: resumed, the same bytes
	"$BIN/$G" "${opts[@]}" --resume "$T/ck.npz" --save-model "$T/resumed.npz" > /dev/null 2>&1
	cmp "$T/whole.npz" "$T/resumed.npz"
}
