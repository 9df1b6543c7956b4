#!/usr/bin/env python3
"""PyTorch's cuDNN attention backend (sdpa_kernel(SDPBackend.CUDNN_ATTENTION)),
the baseline of kernel-sample's cudnn flash_atten backend, timed as
dev/cuda/attention_cudnn_time.c times spkit's: ../shared/anchors/H100.md's
shapes (b4 h32 l2048 and b8 h64 l4096, head dim 128, causal, fp16), Q, K, V
in (batch, seq, heads, head_dim) memory seen as (b, h, s, d), the median of
--reps CUDA-event timings after --warmup runs with the L2 cache flushed (a
read of twice its size) before each, outside the events. Forward: the
training forward (inputs requiring grad, so the logsumexp is written).
Backward: torch.autograd.grad of the output with a fixed upstream gradient,
timed alone. Each shape is timed twice: "torch-cudnn" with bench-sample-torch.py's
median_us (each repetition synchronized, so PyTorch's host work before its
first kernel counts, as a training step pays it), and "torch-cudnn-queued"
with a GPU sleep queued before each start event, long enough for the host
to queue the whole call, so that only device time counts, as in spkit's
probe, whose repetitions are queued back to back.

  python3 scripts/bench-attention-torch.py [--reps 20] [--warmup 3] > torch.csv

Output CSV, the probe's columns: backend,shape,precision,F_dur(us),B_dur(us),
F_TFLOPs,B_TFLOPs. Needs a CUDA GPU and torch.
"""
import argparse
import importlib.util
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(4, 32, 2048, 128), (8, 64, 4096, 128)]


def load_median_us():
    """The event timing bench-sample-torch.py uses (its median_us), shared."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-sample-torch.py")
    spec = importlib.util.spec_from_file_location("bench_sample_torch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.median_us


SLEEP_CYCLES = 2_000_000  # about 1 ms at the H100's 1.98 GHz


def queued_us(fn, reps, warmup, flush):
    """Median device time of fn: the repetitions queued behind a GPU sleep each."""
    for _ in range(warmup):
        fn()
    events = []
    for _ in range(reps):
        flush.sum()
        torch.cuda._sleep(SLEEP_CYCLES)
        pair = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        pair[0].record()
        fn()
        pair[1].record()
        events.append(pair)
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in events) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    median_us = load_median_us()
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    print(f"# torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name(dev)}")
    print("backend,shape,precision,F_dur(us),B_dur(us),F_TFLOPs,B_TFLOPs")
    for b, h, l, d in SHAPES:
        def make():
            x = torch.rand(b, l, h, d, device=dev, dtype=torch.float16) * 2 - 1
            return x.transpose(1, 2)
        q, k, v = (make().requires_grad_() for _ in range(3))
        dout = make()
        flops = 4.0 * b * h * l * l * d / 2
        for name, timer in (("torch-cudnn", median_us), ("torch-cudnn-queued", queued_us)):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                def fwd():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                          scale=1 / math.sqrt(d))
                f_us = timer(fwd, args.reps, args.warmup, flush)
                out = fwd()
                b_us = timer(lambda: torch.autograd.grad(out, (q, k, v), dout,
                                                         retain_graph=True),
                             args.reps, args.warmup, flush)
            print(f"{name},b{b} h{h} l{l} d{d} causal,fp16,{f_us:.1f},{b_us:.1f},"
                  f"{flops / f_us / 1e6:.0f},{2.5 * flops / b_us / 1e6:.0f}")
            sys.stdout.flush()
        del q, k, v, dout, out
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
