#!/usr/bin/env python3
"""Summarize `ksmm-tune bench` CSVs beside scripts/bench-ksmm-torch.py's, as
issue 26's speed targets are stated: per dtype, layout and batch, the
patterns on which the kernel beats the best baseline (cuBLAS dense fp32
without TF32, the bmm algorithm, cuSPARSE BSR where run, PyTorch's dense, bmm
and einsum; TF32 counted apart for fp32), the median and worst speedup over
it, and the median of the kernel's time over the memory floor and over the
roofline, max(memory floor, FLOPs at the card's peak): fp32 without tensor
cores is compute-bound on most of the grid (2 B a b c d FLOPs at 67 TFLOP/s).

  scripts/ksmm-summary.py BENCH.csv... [--torch TORCH.csv]... [--peak fp32=66.9,fp16=989,bf16=989]
Peaks in TFLOP/s; the defaults are the H100 SXM's dense figures at its boost
clock (132 SMs). Prints one SUMMARY line per group.
"""
import argparse
import csv
import statistics

KEY = ("batch", "a", "b", "c", "d", "dtype", "layout")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--torch", action="append", default=[])
    ap.add_argument("--peak", default="fp32=66.9,fp16=989,bf16=989")
    args = ap.parse_args()
    peak = {k: float(v) * 1e12 for k, v in (p.split("=") for p in args.peak.split(","))}
    torch = {}
    for path in args.torch:
        for r in csv.DictReader(open(path)):
            try:
                ms = float(r["ms"])
            except ValueError:
                continue
            if ms == ms:
                torch.setdefault(tuple(r[k] for k in KEY), {})["torch_" + r["method"]] = ms
    groups, seen = {}, set()
    for path in args.bench:
        for r in csv.DictReader(open(path)):
            key = tuple(r[k] for k in KEY)
            if key in seen:  # a pattern listed twice counts once
                continue
            seen.add(key)
            group = groups.setdefault(key[5:] + (int(key[0]),), [])
            if r["kernel_status"] != "ok":
                group.append(None)
                continue
            k = float(r["kernel_ms"])
            base = {m: float(r[m + "_ms"]) for m in ("dense", "bmm", "bsr")
                    if r[m + "_status"] == "ok"}
            base.update(torch.get(key, {}))
            tf32 = float(r["dense_tf32_ms"]) if r["dense_tf32_status"] == "ok" else float("inf")
            best = min(base.values())
            a, b, c, d, batch = (int(r[x]) for x in ("a", "b", "c", "d", "batch"))
            floor = float(r["floor_ms"])
            roof = max(floor, 2 * batch * a * b * c * d / peak[r["dtype"]] * 1e3)
            group.append({"speedup": best / k, "floor": k / floor, "roof": k / roof,
                          "tf32": min(best, tf32) / k, "pattern": ",".join(key[1:5])})
    for (dtype, layout, batch), rows in sorted(groups.items()):
        ok = [r for r in rows if r]
        if not ok:
            print(f"SUMMARY {dtype} {layout} batch {batch}: no kernel row ran ({len(rows)} patterns)")
            continue
        worst = min(ok, key=lambda r: r["speedup"])
        med = lambda f: statistics.median(r[f] for r in ok)
        line = (f"SUMMARY {dtype} {layout} batch {batch:>5}: won {sum(r['speedup'] > 1 for r in ok)}"
                f"/{len(rows)}, median speedup {med('speedup'):.2f}x over the best baseline "
                f"(worst {worst['speedup']:.2f}x at {worst['pattern']}), kernel/floor "
                f"{med('floor'):.2f}, kernel/roofline {med('roof'):.2f}")
        if dtype == "fp32":
            line += f", {med('tf32'):.2f}x counting TF32"
        print(line)


if __name__ == "__main__":
    main()
