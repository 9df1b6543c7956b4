#!/usr/bin/env bash
# make bench: every benchmark this machine can run. The CPU measurements
# (scripts/measure-*.sh) always; the GPU benchmark scripts (scripts/bench-*.sh,
# each comparing spkit with its baselines side by side) when a GPU is usable.
# SPKIT_BENCH_DIR (default build/bench) receives the CSVs and scratch files.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
export SPKIT_BIN=$bin SPKIT_BENCH_DIR=${SPKIT_BENCH_DIR:-build/bench}
mkdir -p "$SPKIT_BENCH_DIR"
here=$(dirname "$0")

echo "== maxk-genmeta on reddit_like (CPU)"
"$here/measure-genmeta.sh" "$SPKIT_BENCH_DIR/genmeta"

echo "== graph-partition (CPU)"
"$here/measure-graph-partition.sh"

if "$bin/macko-spmv" bench --rows 8 --cols 8 --reps 1 --warmup 0 >/dev/null 2>&1; then
	for b in "$here"/bench-*.sh; do
		echo "== $(basename "$b" .sh)"
		"$b"
	done
else
	echo "== no usable GPU: GPU benchmarks skipped (scripts/gpu-check.sh runs them on a GPU machine)"
fi
