#!/usr/bin/env python3
"""Summaries of the per-warp timelines dev/cuda/macko_trace.cu writes (make dev;
build/dev/macko_trace ROWS COLS DENSITY OUTDIR).

    python3 scripts/macko-trace.py [--bin US] [--bins] OUTDIR/trace-*.bin

For each file: when the warps started, had their first row ends, had their own
loads of x in and had x staged (these three MACKO only), finished their first
step and ended; the steps finished per bin of US microseconds (--bins prints
them all); the steady rate (the median bin of the middle half), the time all
steps would take at that rate, and how much longer the kernel took ('lost':
its late start plus its tail). Times are microseconds from the first warp's
entry.
"""
import argparse
import sys

import numpy as np

SLOTS, ENTRY, ENDS, STAGED, EXIT, SM, STEPS, X_IN, STEP0 = 96, 0, 1, 2, 3, 4, 5, 6, 8


def spread(v):
    p = np.percentile(v, [10, 50, 90])
    return "min %.2f p10 %.2f med %.2f p90 %.2f max %.2f" % (v.min(), p[0], p[1], p[2], v.max())


def summary(path, width, show_bins):
    a = np.fromfile(path, dtype=np.uint64).reshape(-1, SLOTS).astype(np.int64)
    a = a[a[:, ENTRY] > 0]
    if len(a) == 0:
        sys.exit("macko-trace.py: %s: no warp was stamped" % path)
    t0 = a[:, ENTRY].min()
    us = lambda col: (a[:, col] - t0) / 1e3
    steps = a[:, STEPS]
    stamped = [(a[w, STEP0:STEP0 + min(steps[w], SLOTS - STEP0)] - t0) / 1e3
               for w in range(len(a))]
    done = np.concatenate(stamped)
    end = us(EXIT)
    print("%s: %d warps, %d steps (%d to %d a warp)" % (path, len(a), steps.sum(), steps.min(), steps.max()))
    print("  entry      ", spread(us(ENTRY)))
    if (a[:, ENDS] > 0).all():
        print("  row ends   ", spread(us(ENDS)))
        if (a[:, X_IN] > 0).all():
            print("  x arrived  ", spread(us(X_IN)))
        print("  x staged   ", spread(us(STAGED)))
    print("  first step ", spread(np.array([s[0] for s in stamped if len(s)])))
    print("  end        ", spread(end))
    hist = np.histogram(done, bins=np.arange(0, end.max() + width, width))[0]
    steady = np.median(hist[len(hist) // 4:3 * len(hist) // 4])
    ideal = done.size / steady * width
    print("  steady %.0f steps a %.2f us bin: all steps in %.2f us at that rate;" % (steady, width, ideal),
          "last end %.2f, lost %.2f us" % (end.max(), end.max() - ideal))
    sm_end = np.array([end[a[:, SM] == s].max() for s in np.unique(a[:, SM])])
    print("  each SM's last end", spread(sm_end), "; mean warp end %.2f" % end.mean())
    if show_bins:
        print("  steps a bin:", " ".join(str(n) for n in hist))
    if steps.max() > SLOTS - STEP0:
        print("  (steps past %d a warp are counted, not stamped: the histogram leaves them out)"
              % (SLOTS - STEP0))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--bin", type=float, default=0.5, help="bin width in us (default 0.5)")
    p.add_argument("--bins", action="store_true", help="print every bin's count")
    o = p.parse_args()
    for f in o.files:
        summary(f, o.bin, o.bins)


if __name__ == "__main__":
    main()
