#!/usr/bin/env python3
"""PyTorch's baselines for Kronecker-sparse factors, to run beside
`ksmm-tune bench` in the same device call (the speed claims of issue 26 are
side by side on one card).

For each pattern (a,b,c,d), batch, dtype and layout, times:
  dense   the factor as a dense (a*b*d) x (a*c*d) matrix, one matmul
  bmm     X permuted to (a*d, B, c), torch.bmm against W as (a*d, b, c)
          (prepared once, outside the timing), the result permuted back: the
          algorithm of Monarch and of PascalCarrivain/ksmm's bmm baseline
  einsum  torch.einsum on the (a,b,c,d) weights
fp32 runs with TF32 off (cuBLAS SGEMM); fp16 and bf16 in their type. Each
time is the median of --reps CUDA-event timings after --warmup runs, with
the L2 cache flushed (a 256 MiB buffer zeroed) before every timed run,
outside the events. Each result is checked against a float64 einsum
(max |y - ref| / max |ref|). Also the memory floor: (x + y + w) bytes over
the device-to-device copy bandwidth measured in the same run. As in
`ksmm-tune bench`, dense runs last and is not built past 8 GiB of matrix
(ms NaN), and when its first timed run takes more than twice bmm's median it
is not timed further (runs = 1 in the CSV): it cannot be the fastest.

  scripts/bench-ksmm-torch.py --batch 25088 --patterns configs/ksmm/patterns.in \
      --dtypes fp32,fp16,bf16 --layouts bsl,bsf -o torch.csv
Patterns: --pattern a,b,c,d (repeatable) or --patterns FILE (one a,b,c,d a
line, an optional fifth field the batch, # comments).
"""
import argparse
import csv
import statistics
import sys

import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def parse_patterns(args):
    out = []
    for text in args.pattern or []:
        out.append(tuple(int(v) for v in text.split(",")[:4]) + (args.batch,))
    if args.patterns:
        with open(args.patterns) as f:
            for n, line in enumerate(f, 1):
                line = line.split("#")[0].strip()
                if not line:
                    continue
                fields = [int(v) for v in line.split(",")]
                if len(fields) not in (4, 5) or min(fields) < 1:
                    sys.exit(f"bench-ksmm-torch: error: {args.patterns}: line {n}: "
                             "expected a,b,c,d[,batch]")
                batch = fields[4] if len(fields) == 5 else args.batch
                out.append(tuple(fields[:4]) + (batch,))
    if not out:
        sys.exit("bench-ksmm-torch: error: no patterns (--pattern or --patterns)")
    return out


class Timer:
    def __init__(self, warmup, reps):
        self.warmup, self.reps = warmup, reps
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def median_ms(self, fn, warmup=None, reps=None):
        warmup = self.warmup if warmup is None else warmup
        reps = self.reps if reps is None else reps
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(reps)]
        for start, end in events:
            self.flush.zero_()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in events)

    def copy_gbs(self):
        src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda").fill_(0xA5)
        dst = torch.empty_like(src)
        ms = self.median_ms(lambda: dst.copy_(src))
        return 2 * src.numel() / (ms * 1e-3) / 1e9


def dense_factor(w):
    """K[al*b*d + be*d + de, al*c*d + ga*d + de] = W[al,be,ga,de]."""
    a, b, c, d = w.shape
    k = torch.zeros(a, b, d, a, c, d, dtype=w.dtype, device=w.device)
    al = torch.arange(a, device=w.device)
    de = torch.arange(d, device=w.device)
    # k[al, :, de, al, :, de] = w[al, :, :, de]
    k[al[:, None], :, de[None, :], al[:, None], :, de[None, :]] = w.permute(0, 3, 1, 2)
    return k.reshape(a * b * d, a * c * d)


DENSE_MAX_BYTES = 8 << 30  # as ksmm-tune bench


def methods(w, layout):
    """The three algorithms as closures over x (in the layout's shape), bmm
    first and dense last; the dense matrix is built on dense's first call."""
    a, b, c, d = w.shape
    dense_k = []

    def k():
        if not dense_k:
            dense_k.append(dense_factor(w))
        return dense_k[0]
    wb = w.permute(0, 3, 1, 2).reshape(a * d, b, c).transpose(1, 2)  # (a*d, c, b) view
    if layout == "bsl":  # x: (a*c*d, B)
        def dense(x):
            return k() @ x

        def bmm(x):
            B = x.shape[1]
            xp = x.reshape(a, c, d, B).permute(0, 2, 3, 1).reshape(a * d, B, c)
            yp = torch.bmm(xp, wb)  # (a*d, B, b)
            return yp.reshape(a, d, B, b).permute(0, 3, 1, 2).reshape(a * b * d, B)

        def einsum(x):
            B = x.shape[1]
            return torch.einsum("abcd,acdn->abdn", w, x.reshape(a, c, d, B)).reshape(a * b * d, B)
    else:  # x: (B, a*c*d)
        def dense(x):
            return x @ k().T

        def bmm(x):
            B = x.shape[0]
            xp = x.reshape(B, a, c, d).permute(1, 3, 0, 2).reshape(a * d, B, c)
            yp = torch.bmm(xp, wb)
            return yp.reshape(a, d, B, b).permute(2, 0, 3, 1).reshape(B, a * b * d)

        def einsum(x):
            B = x.shape[0]
            return torch.einsum("abcd,nacd->nabd", w, x.reshape(B, a, c, d)).reshape(B, a * b * d)
    return {"bmm": bmm, "einsum": einsum, "dense": dense}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pattern", action="append", help="a,b,c,d (repeatable)")
    ap.add_argument("--patterns", help="file of a,b,c,d[,batch] lines")
    ap.add_argument("--batch", type=int, default=25088)
    ap.add_argument("--dtypes", default="fp32,fp16,bf16")
    ap.add_argument("--layouts", default="bsl,bsf")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", help="CSV file (default: stdout)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench-ksmm-torch: error: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(args.seed)

    timer = Timer(args.warmup, args.reps)
    gbs = timer.copy_gbs()
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    wr = csv.writer(out)
    wr.writerow(["batch", "a", "b", "c", "d", "dtype", "layout", "method", "ms", "rel_err", "runs",
                 "floor_ms", "copy_gbs", "device", "torch"])
    device = torch.cuda.get_device_name()
    for a, b, c, d, batch in parse_patterns(args):
        for dname in args.dtypes.split(","):
            dt = DTYPES[dname]
            for layout in args.layouts.split(","):
                w = (torch.rand(a, b, c, d, device="cuda") * 2 - 1).to(dt)
                shape = (a * c * d, batch) if layout == "bsl" else (batch, a * c * d)
                x = (torch.rand(*shape, device="cuda") * 2 - 1).to(dt)
                ref = methods(w.double(), layout)["einsum"](x.double())
                ref_max = ref.abs().max().item()
                es = x.element_size()
                floor_ms = (x.numel() + ref.numel() + w.numel()) * es / (gbs * 1e9) * 1e3
                times = {}
                for name, fn in methods(w, layout).items():
                    err, ms, runs = float("nan"), float("nan"), 0
                    if name == "dense" and a * b * d * a * c * d * es > DENSE_MAX_BYTES:
                        pass
                    else:
                        try:
                            diff = fn(x).double()  # one double temporary, in place
                            err = diff.sub_(ref).abs_().max().item() / ref_max
                            del diff
                            runs = timer.reps
                            if name == "dense" and times.get("bmm", 0) > 0:
                                ms = timer.median_ms(lambda: fn(x), 0, 1)
                                runs = 1 if ms > 2 * times["bmm"] else runs
                            if runs == timer.reps:
                                ms = timer.median_ms(lambda: fn(x))
                        except torch.cuda.OutOfMemoryError:
                            torch.cuda.empty_cache()
                            err, ms, runs = float("nan"), float("nan"), 0
                    times[name] = ms
                    wr.writerow([batch, a, b, c, d, dname, layout, name, f"{ms:.4f}",
                                 f"{err:.2e}", runs, f"{floor_ms:.4f}", f"{gbs:.0f}", device,
                                 torch.__version__])
                    out.flush()
                del w, x, ref
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
