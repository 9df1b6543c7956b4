"""python3 gnn_dataset.py DIR [FLAW]: a small GNN dataset folder (SPEC.md's
layout: graph.npz, features.npy, labels.npy, train/val/test_mask.npy) with
two communities that the graph separates, or with one FLAW:
features_rows, labels_range, masks_overlap, mask_empty, nan_features,
selfloops (a valid graph that already has some self-loops), multilabel
(a valid 0/1 label matrix), ogb (the OGB raw layout instead),
ogb_missing (the OGB layout without raw/node-label.csv.gz)."""
import gzip
import os
import sys

import numpy as np
import scipy.sparse as sp

out, flaw = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
rng = np.random.default_rng(5)
n, f, c = 120, 6, 3
y = np.arange(n) % c
# Edges mostly inside a class, symmetric.
src, dst = [], []
for i in range(n):
    for j in rng.choice(n, 4, replace=False):
        if j != i and (y[i] == y[j] or rng.random() < 0.2):
            src += [i, j]
            dst += [j, i]
if flaw == "selfloops":
    src += [0, 5]
    dst += [0, 5]
a = sp.csr_matrix((np.ones(len(src), np.float32), (src, dst)), shape=(n, n))
a.sum_duplicates()
a.data[:] = 1
x = (rng.standard_normal((n, f)) + 0.5 * np.eye(c, f)[y]).astype(np.float32)
split = np.arange(n) % 10
train, val, test = split < 6, (split >= 6) & (split < 8), split >= 8
labels = y.astype(np.int64)
if flaw == "multilabel":
    labels = (rng.random((n, 4)) < 0.3).astype(np.float32)
    labels[:, 0] = y == 0
if flaw == "features_rows":
    x = x[:-1]
if flaw == "labels_range":
    labels[7] = -1
if flaw == "masks_overlap":
    val[0] = True
if flaw == "mask_empty":
    test[:] = False
if flaw == "nan_features":
    x[3, 2] = np.nan

os.makedirs(out, exist_ok=True)
if flaw.startswith("ogb"):
    os.makedirs(f"{out}/raw", exist_ok=True)
    os.makedirs(f"{out}/split/random", exist_ok=True)

    def gz(path, lines):
        with gzip.open(f"{out}/{path}", "wt") as fp:
            fp.write("".join(line + "\n" for line in lines))

    coo = sp.triu(a).tocoo()
    gz("raw/edge.csv.gz", [f"{s},{d}" for s, d in zip(coo.row, coo.col)])
    gz("raw/node-feat.csv.gz", [",".join(repr(float(v)) for v in row) for row in x])
    if flaw != "ogb_missing":
        gz("raw/node-label.csv.gz", [str(v) for v in labels])
    for name, mask in (("train", train), ("valid", val), ("test", test)):
        gz(f"split/random/{name}.csv.gz", [str(i) for i in np.flatnonzero(mask)])
else:
    sp.save_npz(f"{out}/graph.npz", a)
    np.save(f"{out}/features.npy", x)
    np.save(f"{out}/labels.npy", labels)
    np.save(f"{out}/train_mask.npy", train)
    np.save(f"{out}/val_mask.npy", val)
    np.save(f"{out}/test_mask.npy", test)
