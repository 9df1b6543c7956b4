#!/usr/bin/env bash
# graph-partition's speed and memory on this machine (CPU), end to end (process
# start to exit, report written): a ViT-B/16 export of 1,088 nodes (target
# under 50 ms), a generated 100,000-node graph (target under 1 s), and the
# ViT-B/16 export with its 330 MB of weights (memory proportional to the
# graph, not to the weights). Beside each, Debian's python3-onnx loading the
# same file and running onnx.shape_inference on it, for scale. The models are
# written into a temporary folder (scripts/graph-partition-models.py) and
# removed after.
#   scripts/measure-graph-partition.sh [--no-weights]   (GP_RUNS=20 runs each)
set -euo pipefail
bin=${SPKIT_BIN:-bin}
runs=${GP_RUNS:-20}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# writing the models into $tmp"
$py "$here/graph-partition-models.py" "$tmp" vit
$py "$here/graph-partition-models.py" "$tmp" chain 100000
models="vit_b16.onnx:-b1 chain.onnx:"
if [ "${1:-}" != --no-weights ]; then
	$py "$here/graph-partition-models.py" "$tmp" vit-weights
	models="$models vit_b16_weights.onnx:-b1"
fi

# One measurement per line: the median wall and CPU time of $runs runs and the
# peak RSS: graph-partition's own (-v reports it; a child's rusage would count
# the Python it was forked from), the child's for python3-onnx.
measure() { # label command...
	$py - "$runs" "$@" <<'PY'
import re, resource, statistics, subprocess, sys, time
runs, label, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall, cpu = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall.append(time.perf_counter() - t)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
if cmd[0].endswith("graph-partition"):
    log = subprocess.run(cmd + ["-v"], check=True, capture_output=True, text=True).stderr
    rss = float(re.search(r"peak RSS ([0-9.]+) MiB", log).group(1))
print(f"| {label} | {statistics.median(wall) * 1e3:.1f} | {statistics.median(cpu) * 1e3:.1f} "
      f"| {rss:.1f} |")
PY
}

echo
echo "| model | nodes | file MB | what | median wall ms | median CPU ms | peak RSS MB |"
echo "|---|---|---|---|---|---|---|"
for m in $models; do
	file=$tmp/${m%%:*} opt=${m#*:}
	nodes=$($py -c "import onnx, sys; print(len(onnx.load(sys.argv[1], load_external_data=False).graph.node))" "$file")
	mb=$($py -c "import os, sys; print(f'{os.path.getsize(sys.argv[1]) / 2**20:.1f}')" "$file")
	for fmt in table json; do
		measure "${m%%:*} | $nodes | $mb | graph-partition -f $fmt" \
			"$bin/graph-partition" "$file" $opt -f "$fmt" -o "$tmp/out.$fmt"
	done
	n=$runs
	[ "$nodes" -gt 10000 ] || [ "${m%%:*}" = vit_b16_weights.onnx ] && runs=3
	measure "${m%%:*} | $nodes | $mb | python3-onnx load + infer_shapes" \
		$py -c "import onnx, sys; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]))" "$file"
	runs=$n
done
echo
echo "(graph-partition: $runs runs each; python3-onnx: 3 runs on the large models)"
