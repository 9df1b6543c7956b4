#!/usr/bin/env bash
# The KSMM benchmark of issue 26, side by side in one run on one card:
# `ksmm-tune bench` (the tuned kernel, or its default configuration where no
# table is given, against cuBLAS dense fp32 and TF32, the bmm algorithm and
# cuSPARSE BSR) and scripts/bench-ksmm-torch.py (PyTorch's dense, bmm and
# einsum), on KSMM_PATTERNS (default configs/ksmm/patterns_short.in) at
# KSMM_BATCHES (default 25088,1024), KSMM_DTYPES (default fp32,fp16,bf16) and
# KSMM_LAYOUTS (default bsl,bsf); KSMM_TABLE a best table; KSMM_SKIP
# baselines left out (default bsr: cuSPARSE BSR takes seconds a row and is
# never the best here; KSMM_SKIP= runs it). Writes
# $SPKIT_BENCH_DIR/ksmm-bench.csv and ksmm-torch.csv; SUMMARY lines last:
# per dtype, layout and batch, the patterns won against the best baseline
# (cuBLAS fp32 without TF32, bmm, BSR and PyTorch's three; TF32 counted for
# fp32 separately), the median speedup, and the median of kernel / floor.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
patterns=${KSMM_PATTERNS:-configs/ksmm/patterns_short.in}
batches=${KSMM_BATCHES:-25088,1024}
reps=${KSMM_REPS:-20}
dtypes=${KSMM_DTYPES:-fp32,fp16,bf16}
layouts=${KSMM_LAYOUTS:-bsl,bsf}
skip=${KSMM_SKIP-bsr}
mkdir -p "$dir"
table=()
[ -n "${KSMM_TABLE:-}" ] && table=(--table "$KSMM_TABLE")
[ -n "$skip" ] && table+=(--skip "$skip")
"$bin/ksmm-tune" bench -q --patterns "$patterns" --batch "$batches" --dtype "$dtypes" \
	--layout "$layouts" --reps "$reps" --warmup 3 "${table[@]}" -o "$dir/ksmm-bench.csv"
first=1
for b in ${batches//,/ }; do
	python3 scripts/bench-ksmm-torch.py --patterns "$patterns" --batch "$b" --reps "$reps" \
		--warmup 3 --dtypes "$dtypes" --layouts "$layouts" -o "$dir/ksmm-torch-$b.csv"
	# one header, then every batch's rows
	tail -n +$((first ? 1 : 2)) "$dir/ksmm-torch-$b.csv"
	first=0
	rm -f "$dir/ksmm-torch-$b.csv"
done > "$dir/ksmm-torch.csv.part"
mv "$dir/ksmm-torch.csv.part" "$dir/ksmm-torch.csv"
python3 - "$dir/ksmm-bench.csv" "$dir/ksmm-torch.csv" <<'PY'
import csv, statistics, sys
ours = list(csv.DictReader(open(sys.argv[1])))
torch = {}
for r in csv.DictReader(open(sys.argv[2])):
    key = tuple(r[k] for k in ("batch", "a", "b", "c", "d", "dtype", "layout"))
    try:
        ms = float(r["ms"])
    except ValueError:
        continue
    if ms == ms:
        torch.setdefault(key, {})["torch_" + r["method"]] = ms
groups = {}
for r in ours:
    key = tuple(r[k] for k in ("batch", "a", "b", "c", "d", "dtype", "layout"))
    if r["kernel_status"] != "ok":
        groups.setdefault(key[5:] + (key[0],), []).append(None)
        continue
    k = float(r["kernel_ms"])
    base = {m: float(r[m + "_ms"]) for m in ("dense", "bmm", "bsr") if r[m + "_status"] == "ok"}
    base.update(torch.get(key, {}))
    tf32 = float(r["dense_tf32_ms"]) if r["dense_tf32_status"] == "ok" else float("inf")
    best = min(base.values())
    groups.setdefault(key[5:] + (key[0],), []).append(
        (best / k, k / float(r["floor_ms"]), min(best, tf32) / k, min(base, key=base.get)))
for (dtype, layout, batch), rows in sorted(groups.items()):
    ok = [r for r in rows if r]
    if not ok:
        print(f"SUMMARY {dtype} {layout} batch {batch}: no kernel row ran ({len(rows)} patterns)")
        continue
    wins = sum(r[0] > 1 for r in ok)
    line = (f"SUMMARY {dtype} {layout} batch {batch:>5}: won {wins}/{len(rows)}, median speedup "
            f"{statistics.median(r[0] for r in ok):.2f}x over the best baseline, kernel/floor "
            f"{statistics.median(r[1] for r in ok):.2f}")
    if dtype == "fp32":
        line += f", {statistics.median(r[2] for r in ok):.2f}x counting TF32"
    print(line)
PY
