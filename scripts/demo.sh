#!/usr/bin/env bash
# make demo: run each program's main job on data the project makes itself.
# Every program that lands adds its step here.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
out=data/generated
mkdir -p "$out"

echo "== maxk-genmeta: a 20,000-node power-law graph and its MaxK warp work items"
"$bin/maxk-genmeta" -q --synthetic powerlaw:nodes=20000,edges=400000,seed=1 --graph-out "$out/demo.npz"
"$bin/maxk-genmeta" "$out/demo.npz" -o "$out/demo.warp4"
"$bin/maxk-genmeta" -q "$out/demo.npz" --check "$out/demo.warp4"
echo "wrote $out/demo.npz and $out/demo.warp4 (checked)"
