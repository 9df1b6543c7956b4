#!/usr/bin/env bash
# The KSMM benchmark of issue 26, side by side in one run on one card:
# `ksmm-tune bench` (the tuned kernel, or its default configuration where no
# table is given, against cuBLAS dense fp32 and TF32, the bmm algorithm and
# cuSPARSE BSR) and scripts/bench-ksmm-torch.py (PyTorch's dense, bmm and
# einsum), on KSMM_PATTERNS (default configs/ksmm/patterns_short.in) at
# KSMM_BATCHES (default 25088,1024), KSMM_DTYPES (default fp32,fp16,bf16) and
# KSMM_LAYOUTS (default bsl,bsf), KSMM_REPS timed runs after KSMM_WARMUP
# (default 20 after 3); KSMM_TABLE a best table; KSMM_SKIP
# baselines left out (default bsr: cuSPARSE BSR takes seconds a row and is
# never the best here; KSMM_SKIP= runs it). Writes
# $SPKIT_BENCH_DIR/ksmm-bench.csv and ksmm-torch.csv; SUMMARY lines last
# (scripts/ksmm-summary.py): per dtype, layout and batch, the patterns won
# against the best baseline (cuBLAS fp32 without TF32, bmm, BSR and PyTorch's
# three; TF32 counted for fp32 separately), the median and worst speedup, and
# the medians of kernel / memory floor and kernel / roofline.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
patterns=${KSMM_PATTERNS:-configs/ksmm/patterns_short.in}
batches=${KSMM_BATCHES:-25088,1024}
reps=${KSMM_REPS:-20}
warmup=${KSMM_WARMUP:-3}
dtypes=${KSMM_DTYPES:-fp32,fp16,bf16}
layouts=${KSMM_LAYOUTS:-bsl,bsf}
skip=${KSMM_SKIP-bsr}
mkdir -p "$dir"
table=()
[ -n "${KSMM_TABLE:-}" ] && table=(--table "$KSMM_TABLE")
[ -n "$skip" ] && table+=(--skip "$skip")
"$bin/ksmm-tune" bench -q --patterns "$patterns" --batch "$batches" --dtype "$dtypes" \
	--layout "$layouts" --reps "$reps" --warmup "$warmup" "${table[@]}" -o "$dir/ksmm-bench.csv"
first=1
for b in ${batches//,/ }; do
	python3 scripts/bench-ksmm-torch.py --patterns "$patterns" --batch "$b" --reps "$reps" \
		--warmup "$warmup" --dtypes "$dtypes" --layouts "$layouts" -o "$dir/ksmm-torch-$b.csv"
	# one header, then every batch's rows
	tail -n +$((first ? 1 : 2)) "$dir/ksmm-torch-$b.csv"
	first=0
	rm -f "$dir/ksmm-torch-$b.csv"
done > "$dir/ksmm-torch.csv.part"
mv "$dir/ksmm-torch.csv.part" "$dir/ksmm-torch.csv"
scripts/ksmm-summary.py "$dir/ksmm-bench.csv" --torch "$dir/ksmm-torch.csv"
