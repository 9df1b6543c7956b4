"""Wavefronts of the eight-vector MACKO kernel's 16-byte x gathers under
gather orders richer than the one it uses (run with /usr/bin/python3; NumPy
only):

  macko-order-sim.py [STEPS] [TRIES]   STEPS random 512-element steps at
                                       d = 0.5 and 0.1 (default 8), TRIES
                                       swaps a step for the regrouping
                                       (default 3000)

A step is 64 chunks of 8 elements; a gather instruction takes element k of
8 chunks per quarter-warp, and costs the most chunks that hit one of the 8
bank groups (column mod 8). Printed, per quarter-warp gather:

  - none: every chunk in order (the plain order, without a gather order);
  - rotations: each chunk starts at element r and goes round, r chosen
    greedily lane by lane (kernels/macko/macko_order.cu, the kernel's);
  - rotations and reversal: 16 orders a chunk (4 bits, a nibble);
  - any permutation of a chunk, chosen greedily (24 bits a chunk);
  - regrouped: which 8 chunks share a quarter-warp is chosen too (random
    swaps of two chunks between groups, kept when no worse), each group's
    rotations greedy. Needs each lane to load a chunk that is not its own
    (6 bits a chunk more, known a step ahead) and a scan in chunk order.

bench/RESULTS.md (macko-spmv, 'Regrouped gather order') has the numbers and
what they mean.
"""
import importlib.util
import itertools
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bank", os.path.join(here, "macko-bank-sim.py"))
bank = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bank)
rng = np.random.default_rng(2)

ROTATIONS = np.array([[(i + r) % 8 for i in range(8)] for r in range(8)])
REVERSALS = np.concatenate([ROTATIONS, ROTATIONS[:, ::-1]])
PERMUTATIONS = np.array(list(itertools.permutations(range(8))))


def step_groups(d):
    """Bank groups of a random step's 64 chunks (64 x 8), from one row."""
    cols = np.asarray(bank.macko_columns(d))
    start = rng.integers(0, max(1, len(cols) - 512))
    return cols[start:start + 512].reshape(64, 8) % 8


def group_cost(chunks, orders):
    """Wavefronts of one quarter-warp over its 8 instructions, each chunk
    taking, in turn, the order that adds the fewest."""
    count = np.zeros((8, 8), int)
    k = np.arange(8)
    for g in chunks:
        gg = g[orders]  # (orders, 8): the group each instruction hits
        added = (count[k, gg] + 1 > count.max(1)).sum(1)
        count[k, gg[np.argmin(added)]] += 1
    return count.max(1).sum()


def fixed(groups, orders):
    return sum(group_cost(groups[q * 8:(q + 1) * 8], orders) for q in range(8))


def regrouped(groups, tries):
    members = [list(range(q * 8, (q + 1) * 8)) for q in range(8)]
    cost = [group_cost(groups[m], ROTATIONS) for m in members]
    for _ in range(tries):
        a, b = rng.choice(8, 2, replace=False)
        i, j = rng.integers(8, size=2)
        ma, mb = members[a].copy(), members[b].copy()
        ma[i], mb[j] = mb[j], ma[i]
        ca, cb = group_cost(groups[ma], ROTATIONS), group_cost(groups[mb], ROTATIONS)
        if ca + cb <= cost[a] + cost[b]:
            members[a], members[b], cost[a], cost[b] = ma, mb, ca, cb
    return sum(cost)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    tries = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    schemes = [("none", lambda g: fixed(g, ROTATIONS[:1])),
               ("rotations (the kernel)", lambda g: fixed(g, ROTATIONS)),
               ("rotations and reversal", lambda g: fixed(g, REVERSALS)),
               ("any permutation", lambda g: fixed(g, PERMUTATIONS)),
               ("regrouped, rotations", lambda g: regrouped(g, tries))]
    for d in (0.5, 0.1):
        samples = [step_groups(d) for _ in range(steps)]
        for name, run in schemes:
            per_gather = np.mean([run(g) for g in samples]) / 64
            print(f"d = {d}: {name:24s} {per_gather:.3f} wavefronts a quarter-warp's gather")


if __name__ == "__main__":
    main()
