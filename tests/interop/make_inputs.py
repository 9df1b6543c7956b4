"""Writes the NumPy/SciPy files that tests/unit/test_numpy_interop.c reads.

usage: make_inputs.py DIR

Array values follow formulas of the flat index i that the C test computes
too, so it can check what it read without trusting its own writer.
"""
import sys

import numpy as np
import scipy.sparse as sp

FORMULAS = {
    "b1": lambda i: np.bool_(i % 3 == 0),
    "u1": lambda i: np.uint8((i * 37 + 11) % 256),
    "i4": lambda i: np.int32((i * 7919) % 2001 - 1000),
    "i8": lambda i: np.int64((i - 12) * 3000000000),
    "f2": lambda i: np.float16((i - 12) * 0.375),
    "f4": lambda i: np.float32((i - 12) / 8.0 + 0.1),
    "f8": lambda i: np.float64((i - 12) / 3.0),
    "S5": lambda i: np.bytes_(b"s%d" % i),
}
SHAPES = {"0d": (), "1d": (5,), "3d": (2, 3, 4)}


def array(kind, shape):
    n = int(np.prod(shape))
    dtype = "?" if kind == "b1" else kind
    return np.array([FORMULAS[kind](i) for i in range(n)], dtype=dtype).reshape(shape)


def main(out):
    for kind in FORMULAS:
        for name, shape in SHAPES.items():
            np.save(f"{out}/{kind}_{name}.npy", array(kind, shape))
    for version in (2, 3):
        with open(f"{out}/f4_v{version}.npy", "wb") as f:
            np.lib.format.write_array(f, array("f4", (2, 3, 4)), version=(version, 0))
        with open(f"{out}/i8_v{version}.npy", "wb") as f:
            np.lib.format.write_array(f, array("i8", (5,)), version=(version, 0))
    members = {"a": array("f4", (2, 3, 4)), "b": array("i8", (5,)), "c": array("S5", ())}
    np.savez(f"{out}/savez.npz", **members)
    np.savez_compressed(f"{out}/savez_compressed.npz", **members)

    # A 50 x 40 matrix with an empty row and an empty column.
    rng = np.random.default_rng(7)
    m = sp.random(50, 40, density=0.1, format="csr", dtype=np.float32, random_state=rng)
    m = m.multiply(np.arange(50)[:, None] != 17).multiply(np.arange(40)[None, :] != 5)
    m = sp.csr_matrix(m, dtype=np.float32)
    m.eliminate_zeros()
    m.sort_indices()
    np.save(f"{out}/ref_indptr.npy", m.indptr.astype(np.int64))
    np.save(f"{out}/ref_indices.npy", m.indices.astype(np.int32))
    np.save(f"{out}/ref_data.npy", m.data.astype(np.float32))
    for compressed in (True, False):
        suffix = "" if compressed else "_raw"
        sp.save_npz(f"{out}/csr{suffix}.npz", m, compressed=compressed)
        sp.save_npz(f"{out}/coo{suffix}.npz", m.tocoo(), compressed=compressed)
    # SciPy's defaults: float64 data; int64 indices appear on large matrices.
    big = m.astype(np.float64)
    big.indices = big.indices.astype(np.int64)
    big.indptr = big.indptr.astype(np.int64)
    sp.save_npz(f"{out}/csr_f8_i8.npz", big)
    assert np.load(f"{out}/csr_f8_i8.npz")["indices"].dtype == np.int64


if __name__ == "__main__":
    main(sys.argv[1])
