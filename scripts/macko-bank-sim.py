"""Shared-memory wavefronts of the MACKO kernel's x gathers, counted on random
rows (run with /usr/bin/python3; NumPy only):

  macko-bank-sim.py [ROWS]     ROWS random rows of 8192 columns (default 40)
                               at d = 0.5 and 0.1

A warp's gather costs as many wavefronts as the most distinct 4-byte words
any one of the 32 banks must deliver (16-byte gathers go a quarter-warp at
a time, over 8 groups of 4 banks). It prints the mean per gather for:

  - the kernel's assignment (lane l holds elements 8l..8l+7 of each half of
    a 512-element step; one gather instruction is element k of every lane's
    chunk), x as fp32 or fp16, under several column-to-bank mappings;
  - g lanes interleaving a run of 8g elements (lane j of a group holds
    elements j, j + g, ...), which needs a scan over g lanes per element;
  - one row a lane, all lanes at the same element index;
  - 16-byte gathers (eight vectors) for the kernel's assignment and g = 8;
  - x stored as pairs (x[c], x[c+1]) for one vector: per 8 elements of a
    lane, the wavefronts of the kernel's scheme (multiply_one: the second
    element of each pair gathers only if its delta is not 0; lanes that do
    not gather do not count) and of a greedy chain (each element gathers
    unless the one before it gathered and its delta is 0), against the 8
    full gathers of one element each, and the kernel's pairs gathered in
    a rotation of the lane's four pairs chosen greedily lane by lane (what
    an order like eight vectors' would give one vector).

bench/RESULTS.md (macko-spmv, 'Bank layouts of x' and 'Ideal banks') has the
numbers and what they mean.
"""
import sys

import numpy as np

COLS = 8192
rng = np.random.default_rng(1)


def macko_columns(d):
    """Columns of the stored elements of one random row of density d: the
    nonzeros and every 16th zero of a run (the format's rule)."""
    nz = rng.random(COLS) < d
    cols, run = [], 0
    for c in range(COLS):
        if nz[c] or run == 15:
            cols.append(c)
            run = 0
        else:
            run += 1
    return np.array(cols)


def wavefronts4(cols, word):
    words = np.unique(word(cols))
    return np.bincount(words % 32, minlength=32).max()


def wavefronts16(cols):
    return sum(np.bincount(np.unique(cols[8 * q:8 * q + 8]) % 8, minlength=8).max()
               for q in range(4))


def gathers(cols, g):
    """Each gather instruction's 32 columns, g lanes interleaving runs of
    8g elements (g = 1: the kernel's contiguous chunks). Only whole
    instructions, so the row's end does not count."""
    n = len(cols)
    lanes = np.arange(32)
    for base in range(0, n, 256):
        for k in range(8):
            e = base + (lanes // g) * 8 * g + k * g + lanes % g
            if (e < n).all():
                yield cols[e]


MAPPINGS = {
    "fp32": lambda c: c,
    "fp32, xor c>>5": lambda c: (c & ~31) | ((c ^ (c >> 5)) & 31),
    "fp32, skew c>>5": lambda c: c + (c >> 5),
    "fp32, xor c>>3": lambda c: (c & ~31) | ((c ^ (c >> 3)) & 31),
    "fp16": lambda c: c >> 1,
}


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def pair_gathers(cols):
    """Wavefronts per 8 elements of a lane, x in pairs: (one gather an
    element, the kernel's pairs, the greedy chain), over the row's whole
    256-element halves of steps."""
    lanes = np.arange(32)

    def cost(active, c):
        return wavefronts4(c[active], MAPPINGS["fp32"]) if active.any() else 0

    for base in range(0, len(cols) - 255, 256):
        c = cols[base + lanes[:, None] * 8 + np.arange(8)[None, :]]
        every = sum(cost(np.ones(32, bool), c[:, k]) for k in range(8))
        pairs = 0
        for k in range(0, 8, 2):
            pairs += cost(np.ones(32, bool), c[:, k])
            pairs += cost(c[:, k + 1] != c[:, k] + 1, c[:, k + 1])
        greedy, gathered = 0, np.ones(32, bool)
        for k in range(8):
            if k:
                gathered = ~(gathered & (c[:, k] == c[:, k - 1] + 1))
            greedy += cost(gathered, c[:, k])
        yield every, pairs, greedy, rotated_pairs(c)


def rotated_pairs(c):
    """The kernel's pairs, each lane's four pairs gathered from pair r on
    and round (r of 0..3, two bits a chunk), r chosen greedily lane by lane
    for the fewest wavefronts added to the lanes before it."""
    words = [[set() for _ in range(32)] for _ in range(8)]  # [gather][bank]

    def most(g):
        return max(len(b) for b in words[g])

    def placed(lane, r):
        for i in range(4):
            k = 2 * ((i + r) % 4)
            yield 2 * i, c[lane, k]
            if c[lane, k + 1] != c[lane, k] + 1:
                yield 2 * i + 1, c[lane, k + 1]

    for lane in range(32):
        def added(r):
            return sum(max(most(g), len(words[g][col % 32] | {col})) - most(g)
                       for g, col in placed(lane, r))
        best = min(range(4), key=added)
        for g, col in placed(lane, best):
            words[g][col % 32].add(col)
    return sum(most(g) for g in range(8))


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    for d in (0.5, 0.1):
        data = [macko_columns(d) for _ in range(rows)]
        print(f"d = {d}")
        for name, word in MAPPINGS.items():
            w = mean(wavefronts4(g, word) for c in data for g in gathers(c, 1))
            print(f"  kernel's chunks, x {name:16s} {w:5.2f} a 4-byte gather")
        for g in (8, 16, 32):
            for name in ("fp32", "fp16"):
                w = mean(wavefronts4(x, MAPPINGS[name]) for c in data for x in gathers(c, g))
                print(f"  {g:2d} lanes interleaved, x {name:8s}  {w:5.2f} a 4-byte gather")
        n = min(len(c) for c in data[:32])
        lockstep = np.stack([c[:n] for c in data[:32]])
        for name in ("fp32", "fp16"):
            w = mean(wavefronts4(lockstep[:, e], MAPPINGS[name]) for e in range(n))
            print(f"  one row a lane, x {name:15s} {w:5.2f} a 4-byte gather")
        for g in (1, 8):
            w = mean(wavefronts16(x) for c in data for x in gathers(c, g))
            print(f"  16-byte gathers, {g} lane(s) a run      {w:5.2f}")
        sums = np.array([t for c in data for t in pair_gathers(c)]).mean(axis=0)
        print(f"  x in pairs, a lane's 8 elements: {sums[0]:5.2f} one gather each, "
              f"{sums[1]:5.2f} pairs ({1 - sums[1] / sums[0]:.0%} fewer), "
              f"{sums[2]:5.2f} greedy chain ({1 - sums[2] / sums[0]:.0%} fewer), "
              f"{sums[3]:5.2f} pairs in a rotation chosen a lane at a time "
              f"({1 - sums[3] / sums[1]:.0%} fewer than pairs)")


if __name__ == "__main__":
    main()
