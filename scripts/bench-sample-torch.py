#!/usr/bin/env python3
"""PyTorch's time for kernel-sample's operators, the baseline of its
calibrate report: each operator as estimate-train-time's target_functions.py
(DebarghaG/estimate-train-time) runs it, at the shapes of
../shared/anchors/H100.md's operator table and the same sizes for the
operators that table leaves out, in the same layouts (sequence-first
activations, heads split by mp, vocabulary padded to a multiple of 128 mp).

Forward: the median of --reps CUDA-event timings of the operator's forward
after --warmup runs, with the L2 cache flushed (a read of twice its size)
before each, outside the events. Backward, as H100.md defines it: the median
of forward + backward (torch.autograd.backward with a fixed upstream
gradient) minus the forward's median. fillmask and the causal softmax's
backward are their backward kernels timed alone (see their functions).
flash_atten and flash_atten_causal: F.scaled_dot_product_attention on the
(b, l, h/mp, d) tensors transposed (views) to the (b, h, l, d) it takes, as
PyTorch picks the backend (op name alone), and with each backend forced:
op@FLASH_ATTENTION (FlashAttention-2), op@CUDNN_ATTENTION.

  python3 scripts/bench-sample-torch.py [--precision fp16] [--reps 50] [--ops a,b]
      [--inputs signed|unsigned] > torch.csv

Output CSV: op,shape,precision,F_dur(us),B_dur(us),device where shape names
the columns as the configs do ("mp=1 b=4 l=2048 dim=4096"); B_dur is empty
for res_add and the optimizer steps (no backward). --ops also takes the
training-step operators (TRAIN_SHAPES: moe with a per-expert loop or
torch._grouped_mm, the optimizer stages with fused Adam). Needs a CUDA GPU
and torch.
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F

VOCAB = 50257


def vocab_partition(mp):
    return math.ceil(VOCAB / (128 * mp)) * 128


# The operator shapes: H100.md's (b4 l2048 dim4096, b8 l4096 dim8192 for
# linear1, layernorm, gelu; b4 h32 l2048 for softmax) and the same sizes for
# the others, in each config's column order.
SMALL = dict(mp=1, b=4, h=32, l=2048, dim=4096)
LARGE = dict(mp=1, b=8, h=64, l=4096, dim=8192)
COLUMNS = {
    "embedding": ["mp", "b", "l", "dim"],
    "layernorm": ["b", "l", "dim"],
    "RMSlayernorm": ["b", "l", "dim"],
    "linear1": ["mp", "b", "l", "dim"],
    "linear2": ["mp", "b", "l", "dim"],
    "linear3": ["mp", "b", "l", "dim"],
    "linear4": ["mp", "b", "l", "dim"],
    "linear_final": ["mp", "b", "l", "dim"],
    "gelu": ["mp", "b", "l", "dim"],
    "RoPE": ["mp", "b", "h", "l", "dim"],
    "res_add": ["b", "l", "dim"],
    "parallel_cross_entropy_128": ["mp", "b", "l"],
    "softmax": ["mp", "b", "h", "l"],
    "fillmask": ["mp", "b", "h", "l", "dim"],
    "baddbmm": ["mp", "b", "h", "l", "dim"],
    "bmm": ["mp", "b", "h", "l", "dim"],
    "ScaledUpperTriangMaskedSoftmax": ["mp", "b", "h", "l"],
    "flash_atten": ["mp", "b", "h", "l", "dim"],
    "flash_atten_causal": ["mp", "b", "h", "l", "dim"],
}
# H100.md times these at both sizes; the rest at the smaller.
BOTH = {"linear1", "layernorm", "gelu", "flash_atten", "flash_atten_causal"}
# SDPA's backends timed one by one beside its own pick.
SDPA_BACKENDS = ["FLASH_ATTENTION", "CUDNN_ATTENTION"]


class Case:
    """One operator at one shape: forward() returns the outputs that
    backward differentiates; grads are their upstream gradients."""

    def __init__(self, forward, outputs_grads=None, backward=None):
        self.forward = forward
        self.outputs_grads = outputs_grads  # list of upstream gradients, or None: no backward
        self.backward = backward  # a callable timed alone, instead of autograd


# What rand() draws (--inputs): "signed", uniform in [-1, 1) as
# kernel-sample's own inputs, or "unsigned", uniform in [0, 1) as torch.rand.
# A 16-bit GEMM at the card's power limit runs at a clock that depends on
# its data: on an H200 linear1's forward took 1026-1034 us on unsigned
# inputs, 1091-1106 on signed ones (2026-11-28).
INPUTS = "signed"


def rand(*shape, dtype, grad=False):
    if INPUTS == "signed":
        return sym(*shape, dtype=dtype, grad=grad)
    return torch.rand(*shape, dtype=dtype, device="cuda").requires_grad_(grad)


def make(op, s, dtype, backend=None):
    mp, b, h, l, dim = s["mp"], s["b"], s["h"], s["l"], s["dim"]
    if op.startswith("flash_atten"):
        hp, hd = h // mp, dim // h
        q, k, v = (rand(b, l, hp, hd, dtype=dtype, grad=True) for _ in range(3))
        causal = op == "flash_atten_causal"

        def attention():
            if backend is None:
                return [sdpa(q, k, v, causal)]
            with torch.nn.attention.sdpa_kernel(getattr(torch.nn.attention.SDPBackend, backend)):
                return [sdpa(q, k, v, causal)]

        return Case(attention, [rand(b, l, hp, hd, dtype=dtype)])
    if op == "embedding":
        v = vocab_partition(mp)
        w = rand(v, dim, dtype=dtype, grad=True)
        ids = torch.randint(0, v, (b, l), device="cuda")
        return Case(lambda: [F.embedding(ids, w)], [rand(b, l, dim, dtype=dtype)])
    if op in ("layernorm", "RMSlayernorm"):
        x = rand(l, b, dim, dtype=dtype, grad=True)
        w = rand(dim, dtype=dtype, grad=True)
        bias = rand(dim, dtype=dtype, grad=True)
        if op == "layernorm":
            return Case(lambda: [F.layer_norm(x, [dim], w, bias, 1e-5)],
                        [rand(l, b, dim, dtype=dtype)])

        def rms():  # Megatron-LM / GPT-NeoX's RMSNorm
            norm = x.norm(2, dim=-1, keepdim=True) * dim ** -0.5
            return [w * (x / (norm + 1e-8))]

        return Case(rms, [rand(l, b, dim, dtype=dtype)])
    if op.startswith("linear"):
        k, n, has_bias = {
            "linear1": (dim, 3 * dim // mp, True),
            "linear2": (dim // mp, dim, False),
            "linear3": (dim, 4 * dim // mp, False),
            "linear4": (4 * dim // mp, dim, False),
            "linear_final": (dim, vocab_partition(mp), False),
        }[op]
        x = rand(l, b, k, dtype=dtype, grad=True)
        w = rand(n, k, dtype=dtype, grad=True)
        bias = rand(n, dtype=dtype, grad=True) if has_bias else None
        return Case(lambda: [F.linear(x, w, bias)], [rand(l, b, n, dtype=dtype)])
    if op == "gelu":
        x = rand(l, b, 4 * dim // mp, dtype=dtype, grad=True)
        return Case(lambda: [F.gelu(x)], [rand(l, b, 4 * dim // mp, dtype=dtype)])
    if op == "RoPE":
        hd, hp = dim // h, h // mp
        q = rand(l, b, hp, hd, dtype=dtype, grad=True)
        k = rand(l, b, hp, hd, dtype=dtype, grad=True)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, device="cuda").float() / hd))
        freqs = torch.einsum("i,j->ij", torch.arange(l, device="cuda").float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None, None, :].to(dtype), emb.sin()[:, None, None, :].to(dtype)

        def rotate_half(x):
            x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
            return torch.cat((-x2, x1), dim=x1.ndim - 1)

        def rope():  # GPT-NeoX / Megatron-LM's apply_rotary_pos_emb
            return [q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin]

        return Case(rope, [rand(l, b, hp, hd, dtype=dtype), rand(l, b, hp, hd, dtype=dtype)])
    if op == "res_add":
        x, y = rand(l, b, dim, dtype=dtype), rand(l, b, dim, dtype=dtype)
        return Case(lambda: [x + y])
    if op == "parallel_cross_entropy_128":
        v = vocab_partition(mp)
        logits = rand(b, l, v, dtype=dtype, grad=True)
        target = torch.randint(0, VOCAB, (b, l), device="cuda")
        return Case(lambda: [VocabParallelCrossEntropy.apply(logits, target)],
                    [torch.rand(b, l, device="cuda", dtype=dtype)])
    if op in ("softmax", "ScaledUpperTriangMaskedSoftmax", "fillmask"):
        rows = b * (h // mp)
        x = rand(rows, l, l, dtype=dtype, grad=True)
        g = rand(rows, l, l, dtype=dtype)
        if op == "softmax":
            return Case(lambda: [torch.softmax(x, dim=-1)], [g])
        mask = torch.triu(torch.ones(l, l, device="cuda", dtype=torch.bool), diagonal=1)
        if op == "fillmask":
            # target_functions.py times masked_fill_ in place on the scores and,
            # in backward, what autograd runs for it: the gradient masked the same way.
            s = x.detach().clone()
            return Case(lambda: [s.masked_fill_(mask, 0)], None, lambda: g.masked_fill(mask, 0))
        # PyTorch has no fused causal softmax; Megatron-LM without its fused
        # kernel masks with -10000 and calls softmax (forward_torch_softmax).
        # Backward: softmax's backward kernel, the one autograd runs.
        y = torch.softmax(x.detach().masked_fill(mask, -10000.0), dim=-1)
        return Case(lambda: [torch.softmax(x.masked_fill(mask, -10000.0), dim=-1)], None,
                    lambda: torch._softmax_backward_data(g, y, -1, dtype))
    if op in ("baddbmm", "bmm"):
        rows, hd = b * (h // mp), dim // h
        if op == "baddbmm":
            c = torch.empty(rows, l, l, dtype=dtype, device="cuda")
            q = rand(rows, l, hd, dtype=dtype, grad=True)
            k = rand(rows, hd, l, dtype=dtype, grad=True)
            return Case(lambda: [torch.baddbmm(c, q, k, beta=0, alpha=1)],
                        [rand(rows, l, l, dtype=dtype)])
        sc = rand(rows, l, l, dtype=dtype, grad=True)
        v = rand(rows, l, hd, dtype=dtype, grad=True)
        return Case(lambda: [torch.bmm(sc, v)], [rand(rows, l, hd, dtype=dtype)])
    raise ValueError(op)


def sdpa(q, k, v, causal):
    """flash_attn_func's (b, l, h, d) through SDPA's (b, h, l, d), and back."""
    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                          is_causal=causal).transpose(1, 2)


# The training-step operators, at the shapes dev/cuda/sample_train_time.c
# times: moe at a Mixtral-like and an OLMoE-like layer, the optimizer stages
# at estimate-train-time's get_one shape.
TRAIN_SHAPES = {
    "moe": [dict(mp=1, b=4, l=2048, dim=4096, moe_num_experts=8, intermediate_size=14336, top_k=2),
            dict(mp=1, b=4, l=2048, dim=2048, moe_num_experts=64, intermediate_size=1024, top_k=8)],
    "moe[grouped_mm]": [],  # filled from moe's below
    "firstStage_optimizer": [dict(mp=2, dim=4096, encoders=8)],
    "middleStage_optimizer": [dict(mp=2, dim=4096, encoders=8)],
    "lastStage_optimizer": [dict(mp=2, dim=4096, encoders=8)],
    "middleStage_optimizer[adam only]": [dict(mp=2, dim=4096, encoders=8)],
}
TRAIN_SHAPES["moe[grouped_mm]"] = TRAIN_SHAPES["moe"]


def stage_params(op, mp, dim, encoders):
    """kernel-sample's count (lib/sample/sample_spec_train.c): a Megatron-LM GPT
    layer on one of mp ranks holds 12 dim^2/mp + 7 dim/mp + 6 dim; the first
    stage adds the embedding, the last the final LayerNorm and the LM head."""
    n = encoders * (12 * (dim // mp) * dim + 7 * (dim // mp) + 6 * dim)
    if op.startswith("first"):
        n += vocab_partition(mp) * dim
    if op.startswith("last"):
        n += 2 * dim + vocab_partition(mp) * dim
    return n


def sym(*shape, dtype, scale=1.0, grad=False):
    """Uniform in [-scale, scale), as kernel-sample's inputs."""
    t = (torch.rand(*shape, dtype=torch.float32, device="cuda") * 2 - 1) * scale
    return t.to(dtype).requires_grad_(grad)


def make_train(op, s, dtype):
    if op.startswith("moe"):
        return make_moe(s, dtype, grouped=op == "moe[grouped_mm]")
    # Mixed-precision Adam as Megatron-LM runs it: the 16-bit gradient copied
    # into the fp32 master's .grad, torch.optim.Adam(fused=True) on the fp32
    # master weights (one flat tensor, its fastest case), the 16-bit model
    # weights copied back; "[adam only]" times the fused step alone.
    n = stage_params(op, s["mp"], s["dim"], s["encoders"])
    master = torch.nn.Parameter(sym(n, dtype=torch.float32))
    master.grad = torch.empty_like(master)
    g16, w16 = sym(n, dtype=dtype), torch.empty(n, dtype=dtype, device="cuda")
    opt = torch.optim.Adam([master], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, fused=True)
    if op.endswith("[adam only]"):
        return Case(lambda: opt.step())

    def step():
        master.grad.copy_(g16)
        opt.step()
        w16.copy_(master)

    return Case(step)


def make_moe(s, dtype, grouped):
    """The dropless top-k MoE of lib/sample/sample_ref_moe.c in plain PyTorch:
    router GEMM, softmax and topk, a stable argsort of the chosen experts,
    the tokens gathered, the expert FFNs (a loop of per-expert matmuls, or
    torch._grouped_mm), the gate-weighted index_add_. Counts go to the host
    once a forward, as kernel-sample's do."""
    mp, b, l, dim = s["mp"], s["b"], s["l"], s["dim"]
    e, k, f = s["moe_num_experts"], s["top_k"], s["intermediate_size"] // mp
    t = b * (l // mp)
    x = sym(t, dim, dtype=dtype, grad=True)
    wr = sym(e, dim, dtype=dtype, scale=0.125, grad=True)
    w1 = sym(e, f, dim, dtype=dtype, scale=0.125, grad=True)
    w2 = sym(e, f, dim, dtype=dtype, scale=0.125, grad=True)
    if grouped and not hasattr(torch, "_grouped_mm"):
        raise NotImplementedError("torch._grouped_mm: not in this PyTorch")

    def moe():
        probs = (x @ wr.t()).float().softmax(dim=-1)
        gate, idx = probs.topk(k, dim=-1)
        flat = idx.flatten()
        order = flat.argsort(stable=True)
        tok = order // k
        counts = torch.bincount(flat, minlength=e)
        xp = x.index_select(0, tok)
        if grouped:
            offs = counts.cumsum(0, dtype=torch.int32)
            h = torch._grouped_mm(xp, w1.transpose(-2, -1), offs=offs)
            y = torch._grouped_mm(F.gelu(h), w2, offs=offs)
        else:
            ys = [F.gelu(xe @ w1[i].t()) @ w2[i]
                  for i, xe in enumerate(xp.split(counts.tolist())) if xe.shape[0]]
            y = torch.cat(ys)
        w = gate.flatten()[order].to(dtype).unsqueeze(1)
        return [torch.zeros_like(x).index_add_(0, tok, y * w)]

    return Case(moe, [sym(t, dim, dtype=dtype)])


class VocabParallelCrossEntropy(torch.autograd.Function):
    """Megatron-LM's vocab_parallel_cross_entropy on one partition (rank 0 of
    mp, so no all-reduce): the same tensor operations, in place where it
    works in place."""

    @staticmethod
    def forward(ctx, logits, target):
        logits_max = torch.max(logits, dim=-1)[0]
        logits = logits - logits_max.unsqueeze(dim=-1)
        v = logits.size(-1)
        target_mask = (target < 0) | (target >= v)
        masked_target = target.clone()
        masked_target[target_mask] = 0
        logits_2d = logits.view(-1, v)
        arange = torch.arange(0, logits_2d.size(0), device=logits.device)
        predicted = logits_2d[arange, masked_target.view(-1)].clone().view_as(target)
        predicted[target_mask] = 0.0
        exp_logits = torch.exp(logits, out=logits)
        sum_exp = exp_logits.sum(dim=-1)
        loss = torch.log(sum_exp) - predicted
        exp_logits.div_(sum_exp.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, target_mask, masked_target.view(-1))
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target = ctx.saved_tensors
        grad_input = softmax
        v = softmax.size(-1)
        grad_2d = grad_input.view(-1, v)
        arange = torch.arange(0, grad_2d.size(0), device=grad_2d.device)
        grad_2d[arange, masked_target] -= 1.0 - target_mask.view(-1).float()
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None


def median_us(fn, reps, warmup, flush):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.sum()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def time_case(case, reps, warmup, flush):
    fwd = median_us(case.forward, reps, warmup, flush)
    if case.backward is not None:
        return fwd, median_us(case.backward, reps, warmup, flush)
    if case.outputs_grads is None:
        return fwd, None

    def both():
        torch.autograd.backward(case.forward(), case.outputs_grads)

    return fwd, median_us(both, reps, warmup, flush) - fwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--precision", choices=["fp16", "bf16", "fp32"], default="fp16")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--ops", default=",".join(COLUMNS), help="comma-separated operator names "
                    "(the transformer's by default; also " + ",".join(TRAIN_SHAPES) + ")")
    ap.add_argument("--inputs", choices=["signed", "unsigned"], default="signed",
                    help="the operators' random inputs: uniform in [-1, 1) as kernel-sample's "
                    "(default) or in [0, 1) as torch.rand")
    args = ap.parse_args()
    global INPUTS
    INPUTS = args.inputs
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.precision]
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default, stated
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    device = torch.cuda.get_device_name(0)
    print("op,shape,precision,F_dur(us),B_dur(us),device")
    for op in args.ops.split(","):
        if op not in COLUMNS and op not in TRAIN_SHAPES:
            sys.exit(f"bench-sample-torch: unknown operator '{op}'")
        backends = [None] + SDPA_BACKENDS if op.startswith("flash_atten") else [None]
        shapes = TRAIN_SHAPES.get(op) or ([SMALL, LARGE] if op in BOTH else [SMALL])
        for s, backend in ((s, b) for s in shapes for b in backends):
            names = COLUMNS.get(op) or list(s)
            shape = " ".join(f"{c}={s[c]}" for c in names)
            name = op if backend is None else f"{op}@{backend}"
            if op.startswith("flash_atten") and dtype == torch.float32:
                continue  # fused attention is half-precision, as kernel-sample skips it
            try:
                case = (make_train(op, s, dtype) if op in TRAIN_SHAPES
                        else make(op, s, dtype, backend))
                f, b = time_case(case, args.reps, args.warmup, flush)
            except (torch.cuda.OutOfMemoryError, RuntimeError) as e:
                print(f"bench-sample-torch: {name} {shape}: {str(e).splitlines()[0]}",
                      file=sys.stderr)
                torch.cuda.empty_cache()
                continue
            except NotImplementedError as e:
                print(f"bench-sample-torch: {name} {shape}: {e}", file=sys.stderr)
                continue
            bs = "" if b is None else f"{b:.1f}"
            print(f"{name},{shape},{args.precision},{f:.1f},{bs},{device}", flush=True)
            del case
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
