"""Writes a GNN dataset folder and an OGB raw folder with NumPy, SciPy and
Python's gzip, for tests/unit/test_numpy_interop.c to load.

usage: make_gnn_dataset.py DIR  (writes DIR/gnn_folder and DIR/gnn_ogb)

Values follow formulas of the node number i that the C test computes too:
50 nodes; edges i -> (7i + 3) mod 50 and (in the folder) i -> (13i + 1) mod 50;
feature k of node i is (i - 25) / 4 + k / 8 (6 features); label i mod 7;
i mod 10 below 6 trains, 6 and 7 validate, the rest test.
"""
import gzip
import os
import sys

import numpy as np
import scipy.sparse as sp

N = 50


def main(out):
    i = np.arange(N)
    features = (i[:, None] - 25) / 4 + np.arange(6)[None, :] / 8
    labels = i % 7
    split = {"train": i % 10 < 6, "valid": (i % 10 == 6) | (i % 10 == 7), "test": i % 10 >= 8}

    folder = f"{out}/gnn_folder"
    os.makedirs(folder)
    # Nodes 17 and 42 have their two edges to one node: SciPy sums them
    # into a 2. Rows are stored in descending order, which SciPy allows
    # (has_sorted_indices False) and the loader must sort.
    rows = np.concatenate([i, i])
    cols = np.concatenate([(7 * i + 3) % N, (13 * i + 1) % N])
    g = sp.csr_matrix((np.ones(2 * N), (rows, cols)), shape=(N, N))
    for r in range(N):
        lo, hi = g.indptr[r], g.indptr[r + 1]
        g.indices[lo:hi] = g.indices[lo:hi][::-1].copy()
    g.has_sorted_indices = False
    assert g.data.max() == 2 and g.indices[0] > g.indices[1]
    sp.save_npz(f"{folder}/graph.npz", g, compressed=True)
    np.save(f"{folder}/features.npy", features)  # float64
    np.save(f"{folder}/labels.npy", labels.astype(np.int64))
    for name, mask in (("train", split["train"]), ("val", split["valid"]), ("test", split["test"])):
        np.save(f"{folder}/{name}_mask.npy", mask)

    ogb = f"{out}/gnn_ogb"
    os.makedirs(f"{ogb}/raw")
    os.makedirs(f"{ogb}/split/random")

    def write(path, lines):
        with gzip.open(f"{ogb}/{path}", "wt") as f:
            f.write("".join(line + "\n" for line in lines))

    write("raw/num-node-list.csv.gz", [str(N)])
    write("raw/edge.csv.gz", [f"{a},{(7 * a + 3) % N}" for a in range(N)])
    write("raw/node-feat.csv.gz", [",".join(repr(float(v)) for v in row) for row in features])
    write("raw/node-label.csv.gz", [str(v) for v in labels])
    for name, mask in split.items():
        write(f"split/random/{name}.csv.gz", [str(v) for v in np.flatnonzero(mask)])


if __name__ == "__main__":
    main(sys.argv[1])
