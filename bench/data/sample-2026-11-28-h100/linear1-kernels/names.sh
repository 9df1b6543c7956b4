#!/bin/bash
# which GEMM kernels linear1's forward runs: ours (sample_ops_time, after its algorithm pick) and PyTorch's
set -u
M="--metrics gpu__time_duration.sum --print-summary per-kernel"
timeout 100 ncu $M .xfer-g/sample_ops_time fp16 own linear1 > $OUT/ours.txt 2>&1
timeout 100 ncu $M python3 scripts/bench-sample-torch.py --precision fp16 --ops linear1 --reps 5 --warmup 2 > $OUT/torch.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|^ *gpu__time_duration" $OUT/ours.txt | head -60 > $OUT/ours-short.txt
grep -E "^  [a-zA-Z_].*\(|^ *gpu__time_duration" $OUT/torch.txt | head -60 > $OUT/torch-short.txt
wc -l $OUT/*.txt
