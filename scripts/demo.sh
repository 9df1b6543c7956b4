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

echo
echo "== maxk-train: a 3,000-node contextual SBM (5 classes), first the MLP-like baseline"
echo "   (--layers 0: features only), then GraphSAGE with MaxK (k=16 of 64); GPU if usable"
for layers in 0 2; do
	"$bin/maxk-train" -q --synthetic csbm --layers $layers --hidden 64 --maxk 16 --epochs 60 \
		--eval-every 5 --lr 0.005 | sed -n "s/^Best epoch \([0-9]*\): .*test accuracy/--layers $layers: test accuracy at the best validation epoch (\1):/p"
done

echo
echo "== macko-compress: a 4096 x 4096 fp16 matrix at density 0.3 in the MACKO format, and back"
"$bin/macko-compress" --random 4096x4096 --density 0.3 -o "$out/demo.macko.npz" --stats
"$bin/macko-compress" -q --decompress "$out/demo.macko.npz" -o "$out/demo.dense.npy"

echo
echo "== macko-spmv: y = A x with x all ones, so y holds the row sums (GPU if usable, else CPU)"
# A .npy of 4096 float32 ones, written by hand: the format is a text header and raw data.
{
	header="{'descr': '<f4', 'fortran_order': False, 'shape': (4096,), }"
	printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "$header"
	for _ in $(seq 4096); do printf '\x00\x00\x80\x3f'; done
} > "$out/demo.ones.npy"
"$bin/macko-spmv" "$out/demo.macko.npz" "$out/demo.ones.npy" -o "$out/demo.y.npy"
printf 'y[0..4] = '
od -A n -t f4 -j 128 -N 20 "$out/demo.y.npy"
if "$bin/macko-spmv" bench --rows 8 --cols 8 --reps 1 --warmup 0 >/dev/null 2>&1; then
	echo
	echo "== macko-spmv bench: MACKO against cuBLAS and cuSPARSE on 8192 x 8192, density 0.5"
	"$bin/macko-spmv" bench --rows 8192 --cols 8192 --density 0.5
else
	echo "(no usable GPU: skipping macko-spmv bench)"
fi

echo
echo "== ksmm-tune apply: a chain of two Kronecker-sparse factors, pattern 2,4,4,2 each"
echo "   (16 x 16, 4 nonzeros a row), all weights 1, on 3 inputs of all ones: every"
echo "   output is 4 x 4 = 16"
# Float32 .npy files of one value, written by hand like the ones above.
npy_fill() { # FILE SHAPE COUNT
	{
		printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
		for _ in $(seq "$3"); do printf '\x00\x00\x80\x3f'; done
	} > "$1"
}
npy_fill "$out/demo.ksmm_w.npy" "(2, 4, 4, 2)" 64
npy_fill "$out/demo.ksmm_x.npy" "(3, 16)" 48
"$bin/ksmm-tune" apply --pattern 2,4,4,2 --pattern 2,4,4,2 --device cpu \
	--weights "$out/demo.ksmm_w.npy,$out/demo.ksmm_w.npy" "$out/demo.ksmm_x.npy" \
	-o "$out/demo.ksmm_y.npy"
printf 'y[0, 0..4] = '
od -A n -t f4 -j 128 -N 20 "$out/demo.ksmm_y.npy"
echo "== ksmm-tune tune --dry-run: the default space on configs/ksmm/patterns_short.in (no GPU needed)"
"$bin/ksmm-tune" tune -q --patterns configs/ksmm/patterns_short.in --dry-run |
	awk -F, 'NR > 1 { n++; if ($NF == "run") r++ } END { print n " configurations, " r " runnable, " n - r " skipped with a reason" }'

echo
echo "== graph-partition: a small ViT-style block (data/vit_block.onnx, written by"
echo "   tests/bats/ref/onnx_models.py with python3-onnx): shapes, FLOPs, bytes, stages"
"$bin/graph-partition" data/vit_block.onnx --format table
echo
echo "== graph-partition: ViT-B/16 written by hand in YAML (configs/models/vit_b16.yaml, its encoder"
echo "   block repeated 12 times), on the A100 file, and ResNet blocks drawn as a Graphviz graph"
"$bin/graph-partition" configs/models/vit_b16.yaml --batch 8 --dtype bf16 \
	--hardware configs/hardware/a100.yaml | sed -n '/^model /,/^fusion_candidates/p'
"$bin/graph-partition" configs/models/resnet_basic.yaml --batch 1 -f dot -o "$out/resnet_basic.dot"
echo "wrote $out/resnet_basic.dot (dot -Tsvg $out/resnet_basic.dot -o resnet_basic.svg draws it)"
models=../shared/models
if [ -f "$models/resnet18.onnx" ]; then
	echo
	echo "== graph-partition: ResNet-18 (torchvision export, weights stripped), the summary"
	"$bin/graph-partition" "$models/resnet18.onnx" --format table | sed -n '/^model /,$p'
	echo
	echo "== graph-partition: ResNet-18 and MobileNet-V2 compared (batch to saturate: where the"
	echo "   roofline stops being launch-latency-bound on the H200)"
	"$bin/graph-partition" "$models/resnet18.onnx" "$models/mobilenet_v2.onnx"
fi

echo
echo "== kernel-sample: layernorm's small test sweep (8 shapes, forward and backward) in two parts,"
echo "   as two SLURM array tasks would run it, then merged into one table (GPU if usable)"
rm -rf "$out/sample"
for part in 1 2; do
	"$bin/kernel-sample" configs/kernel_sampling/test/layernorm.yml --parts 2 --part $part \
		--output-dir "$out/sample"
done
"$bin/kernel-sample" merge "$out"/sample/sampling_data/*.csv -o "$out/sample/layernorm.csv"
cat "$out/sample/layernorm.csv"

echo
echo "== maxk-train: MaxK (k=16 of 64) against ReLU on the contextual SBM, one table"
"$bin/maxk-train" -q --synthetic csbm --layers 2 --hidden 64 --nonlinear maxk,relu --maxk 16 \
	--epochs 60 --eval-every 5 --lr 0.005 --log "$out/train.csv"
echo "wrote $out/train-maxk16.csv and $out/train-relu.csv (a log per run)"

echo
echo "== pictures (scripts/plot/plot.sh, gnuplot): one of each kind, from the CSVs above and"
echo "   from the benchmark CSVs measured on the GPU machines (bench/data)"
if command -v gnuplot >/dev/null; then
	plots=$out/plots
	mkdir -p "$plots"
	plot=scripts/plot/plot.sh
	if [ -f "$models/resnet18.onnx" ]; then
		"$bin/graph-partition" "$models/resnet18.onnx" -b 32 -f csv -o "$plots/resnet18.csv"
		"$plot" roofline "$plots/roofline.svg" "$plots/resnet18.csv" --title "ResNet-18, batch 32"
	else
		"$bin/graph-partition" data/vit_block.onnx -b 32 -f csv -o "$plots/vit_block.csv"
		"$plot" roofline "$plots/roofline.svg" "$plots/vit_block.csv" --title "ViT block, batch 32"
	fi
	"$plot" train "$plots/train.svg" "$out/train-maxk16.csv" "$out/train-relu.csv" --metric accuracy
	"$plot" sample "$plots/sample.svg" "$out/sample/layernorm.csv"
	"$plot" macko-density "$plots/macko-density.svg" bench/data/macko-h200-2026-11-25.csv
	"$plot" macko-vectors "$plots/macko-vectors.png" bench/data/macko-h200-2026-11-25.csv
	"$plot" ksmm "$plots/ksmm.svg" bench/data/ksmm-2026-11-27-h100/bench-default-configs.csv
	echo "wrote $plots/: roofline.svg, train.svg, sample.svg, macko-density.svg,"
	echo "macko-vectors.png and ksmm.svg (open them in a browser or an image viewer)"
else
	echo "(gnuplot is not installed: no pictures; scripts/deps.sh installs gnuplot-nox)"
fi
