"""Checks the files tests/unit/test_numpy_interop.c wrote, with NumPy and SciPy.

usage: check_outputs.py npy|npz|sparse DIR

Each out_NAME file must hold what NAME (written by make_inputs.py) holds;
.npy files written by np.save must also match byte for byte. Prints what
differs and exits 1.
"""
import glob
import os
import sys
import zipfile

import numpy as np
import scipy.sparse as sp

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def same_array(a, b, what):
    check(a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}")
    check(a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}")
    if a.dtype == b.dtype and a.shape == b.shape:
        check(np.array_equal(a, b), f"{what}: values differ")


def check_npy(d):
    outs = sorted(glob.glob(f"{d}/out_*.npy"))
    check(len(outs) >= 28, f"only {len(outs)} out_*.npy files")
    for out in outs:
        orig = os.path.join(d, os.path.basename(out)[4:])
        same_array(np.load(out), np.load(orig), out)
        if "_v" not in orig:  # np.save's own bytes
            with open(out, "rb") as f, open(orig, "rb") as g:
                check(f.read() == g.read(), f"{out}: bytes differ from np.save's")


def check_npz(d):
    want = np.load(f"{d}/savez.npz")
    outs = sorted(glob.glob(f"{d}/out_*.npz"))
    check(len(outs) >= 3, f"only {len(outs)} out_*.npz files")
    for out in outs:
        with zipfile.ZipFile(out) as z:
            check(z.testzip() is None, f"{out}: zipfile finds a bad member")
        got = np.load(out)
        check(sorted(got.files) == sorted(want.files), f"{out}: members {got.files}")
        for name in want.files:
            if name in got.files:
                same_array(got[name], want[name], f"{out}[{name}]")


def members(path):
    with np.load(path) as z:
        return [(n, z[n].dtype.str, z[n].shape) for n in z.files]


def check_sparse(d):
    ref = sp.load_npz(f"{d}/csr.npz")
    outs = sorted(glob.glob(f"{d}/out_csr_*.npz"))
    check(len(outs) == 2, f"{len(outs)} out_csr_*.npz files")
    sp.save_npz(f"{d}/scipy_again.npz", ref)
    for out in outs:
        m = sp.load_npz(out)
        check(m.format == "csr", f"{out}: format {m.format}")
        check(m.shape == ref.shape, f"{out}: shape {m.shape}")
        for name in ("indptr", "indices", "data"):
            same_array(getattr(m, name), getattr(ref, name), f"{out}.{name}")
        check(members(out) == members(f"{d}/scipy_again.npz"),
              f"{out}: members {members(out)} differ from save_npz's")


if __name__ == "__main__":
    {"npy": check_npy, "npz": check_npz, "sparse": check_sparse}[sys.argv[1]](sys.argv[2])
    for f in failures:
        print(f)
    sys.exit(1 if failures else 0)
