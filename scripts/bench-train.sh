#!/usr/bin/env bash
# maxk-train's epoch time on the GPU, issue 5's configuration: GraphSAGE,
# 4 layers x 256, LayerNorm, k = 32, on reddit_like and products_like, with
# the MaxK kernels, with --kernel-mode cusparse (MaxK's output aggregated
# densely by cuSPARSE) and with ReLU (cuSPARSE); TRAIN_EPOCHS epochs each
# (default 30; the first, warm-up, is left out of the means), evaluation
# only after the last. Logs in $SPKIT_BENCH_DIR/train-*.log; SUMMARY lines.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
mkdir -p "$dir"
epochs=${TRAIN_EPOCHS:-30}
for g in reddit_like products_like; do
	for mode in maxk cusparse relu; do
		args=(--kernel-mode maxk)
		[ $mode = cusparse ] && args=(--kernel-mode cusparse)
		[ $mode = relu ] && args=(--nonlinear relu --kernel-mode auto --device cuda)
		log=$dir/train-$g-$mode.log
		"$bin/maxk-train" --synthetic "$g" --model sage --layers 4 --hidden 256 --norm \
			--maxk 32 --epochs "$epochs" --eval-every "$epochs" --profile-kernels \
			--tf32 "${TRAIN_TF32:-off}" "${args[@]}" > "$log" 2>&1
		awk -v g="$g" -v m="$mode" '
			/^Final Timing/ { gsub(/ms,?/, ""); f = $6; b = $9 }
			/^Total per epoch/ { gsub(/ms/, ""); e = $4 }
			/^Peak memory/ { p = $3 }
			END { printf "SUMMARY train %-14s %-9s epoch %8.2f ms (forward %7.2f, backward %7.2f)  peak %8.1f MiB\n", g, m, e, f, b, p }' "$log"
	done
done
