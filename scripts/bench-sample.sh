#!/usr/bin/env bash
# kernel-sample on the GPU, side by side with PyTorch in one run (issue 27's
# calibrate report and its must-show figures): each operator at H100.md's
# operator shapes (build/dev/sample_ops_time, the library's own operators,
# timed as the benchmarks time: events, L2 flushed, median) against
# scripts/bench-sample-torch.py (PyTorch, the same shapes and layouts), as a
# ratio; the spread of one shape sampled 10 times by `kernel-sample get_one`;
# and the sweep rate of every test config, a process each and all in one;
# `kernel-sample calibrate --torch` on PyTorch's CSV (sample-calibrate.csv).
# Writes $SPKIT_BENCH_DIR/sample-*.csv;
# SUMMARY lines last. Needs `make dev` (SPKIT_DEV, default build/dev).
# flash_atten runs on SAMPLE_ATTENTION (cudnn or own; default: cuDNN when it
# loads) and is compared with PyTorch's SDPA as it picks and with each of
# its FLASH_ATTENTION and CUDNN_ATTENTION backends (op@BACKEND). Where
# nvidia-smi is, the clocks and power through the run: sample-clocks.csv.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
dev=${SPKIT_DEV:-build/dev}
prec=${SAMPLE_PRECISION:-fp16}
mkdir -p "$dir"
# The SM clock, power and throttle reasons every 100 ms beside the timings
# (sample-clocks.csv): a large 16-bit GEMM runs at the card's power limit,
# where its time follows the clock. Of the GPU the programs use, not every
# GPU of the host: the first of CUDA_VISIBLE_DEVICES, an index or a UUID as
# nvidia-smi -i takes them (nvidia-smi numbers GPUs in PCI bus order, as
# CUDA does with CUDA_DEVICE_ORDER=PCI_BUS_ID).
gpu=${CUDA_VISIBLE_DEVICES:-0}
gpu=${gpu%%,*}
if command -v nvidia-smi >/dev/null; then
	nvidia-smi -i "$gpu" --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
		--format=csv -lms 100 > "$dir/sample-clocks.csv" &
	clocks=$!
	trap 'kill "$clocks" 2>/dev/null' EXIT
fi
"$dev/sample_ops_time" "$prec" ${SAMPLE_ATTENTION:+"$SAMPLE_ATTENTION"} > "$dir/sample-ours.csv"
python3 scripts/bench-sample-torch.py --precision "$prec" > "$dir/sample-torch.csv"
# The training-step operators (moe, the optimizer stages): ours from
# build/dev/sample_train_time, PyTorch's as bench-sample-torch.py says
# (MoE with a per-expert loop and with torch._grouped_mm; fused Adam).
"$dev/sample_train_time" "$prec" >> "$dir/sample-ours.csv"
# Each run of the PyTorch script writes its header; the second's is dropped
# so that the file is one CSV (calibrate refuses a header line mid-file).
python3 scripts/bench-sample-torch.py --precision "$prec" --ops \
	'moe,moe[grouped_mm],firstStage_optimizer,middleStage_optimizer,lastStage_optimizer,middleStage_optimizer[adam only]' |
	sed 1d >> "$dir/sample-torch.csv"

# The calibrate report: ours timed as the sweeps time them, beside PyTorch's.
"$bin/kernel-sample" calibrate -q --precision "$prec" ${SAMPLE_ATTENTION:+--attention "$SAMPLE_ATTENTION"} \
	--torch "$dir/sample-torch.csv" -o "$dir/sample-calibrate.csv"

# One shape sampled 10 times, each a whole get_one (wait, warm-up, active runs).
for _ in $(seq 10); do
	"$bin/kernel-sample" run configs/kernel_sampling/test/layernorm.yml --device cuda \
		--precision "$prec" --run get_one --shape 4,2048,4096 -q
done > "$dir/sample-spread.txt"

# Every test config swept on the GPU: samples (shapes timed) a second.
rm -rf "$dir/sample-sweep"
start=$(date +%s.%N)
for c in configs/kernel_sampling/test/*.yml; do
	"$bin/kernel-sample" run "$c" --device cuda --precision "$prec" -q --output-dir "$dir/sample-sweep"
done
end=$(date +%s.%N)
rows=$(cat "$dir"/sample-sweep/sampling_data/*.csv | grep -c '^[0-9]')
# The same sweeps by one process (kernel-sample runs several configs in
# turn): the program's start and the GPU's context paid once.
rm -rf "$dir/sample-sweep1"
start1=$(date +%s.%N)
"$bin/kernel-sample" run configs/kernel_sampling/test/*.yml --device cuda --precision "$prec" -q \
	--output-dir "$dir/sample-sweep1"
end1=$(date +%s.%N)
rows1=$(cat "$dir"/sample-sweep1/sampling_data/*.csv | grep -c '^[0-9]')

python3 - "$dir" "$rows" "$start" "$end" "$rows1" "$start1" "$end1" <<'PY'
import csv, re, statistics, sys
d, rows, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows1, start1, end1 = int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
def table(path):
    out = {}
    for r in csv.reader(line for line in open(path) if not line.startswith("#")):
        if len(r) >= 5 and r[0] != "op":
            out[(r[0], r[1])] = (float(r[3]) if r[3] else None, float(r[4]) if r[4] else None, r[5:])
    return out
ours, torch = table(f"{d}/sample-ours.csv"), table(f"{d}/sample-torch.csv")
for key in sorted(torch):
    mine = (key[0].split("@")[0], key[1])
    if mine not in ours:
        continue
    (of, ob, extra), (tf, tb, _) = ours[mine], torch[key]
    ratio = lambda o, t: f"{o / t:5.2f}" if o and t else "  -  "
    print(f"SUMMARY {key[0]:<32} {key[1]:<28} fwd {of:9.1f} us (torch {tf:9.1f}, ours/torch "
          f"{ratio(of, tf)})  bwd {ob or 0:9.1f} us (torch {tb or 0:9.1f}, {ratio(ob, tb)})  "
          + " ".join(e.strip() for e in extra[:2]))
f = [float(m.group(1)) for m in (re.search(r"timecost\(us\) \[fwd, bwd\]: \[([0-9.]+),", l) for l in open(f"{d}/sample-spread.txt")) if m]
if f:
    print(f"SUMMARY spread of layernorm 4,2048,4096 sampled {len(f)} times: forward median "
          f"{statistics.median(f):.1f} us, (max - min) / median {(max(f) - min(f)) / statistics.median(f):.1%}")
print(f"SUMMARY test configs: {rows} samples in {end - start:.1f} s, {rows / (end - start):.1f} samples a second")
print(f"SUMMARY test configs in one process: {rows1} samples in {end1 - start1:.1f} s, "
      f"{rows1 / (end1 - start1):.1f} samples a second")
PY
