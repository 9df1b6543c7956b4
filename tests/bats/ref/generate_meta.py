"""The original MaxK-GNN generate_meta.py loop, as an independent reference:
reads a SciPy .npz graph, writes the .warp4 records to argv[2]."""
import sys

import numpy as np
import scipy.sparse as sp

graph, out, warp_max_nz = sys.argv[1], sys.argv[2], int(sys.argv[3])
indptr = sp.load_npz(graph).tocsr().indptr
rows, locs, lens = [], [], []
cur = 0
for i in range(len(indptr) - 1):
    deg = int(indptr[i + 1] - indptr[i])
    done = 0
    while done < deg:
        n = min(warp_max_nz, deg - done)
        rows.append(i)
        locs.append(cur)
        lens.append(n)
        cur += n
        done += n
pad = np.zeros(len(rows), dtype=np.int32)
np.dstack([rows, locs, lens, pad]).flatten().astype(np.int32).tofile(out)
