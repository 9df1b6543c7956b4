"""python3 gnn_forward.py DATASET MODEL.npz LOGITS.npy NONLINEAR K [selfloop]:
the model saved by maxk-train --save-model, evaluated (no dropout) on the
dataset folder in NumPy from MaxK-GNN's definitions, equals the logits
maxk-train wrote with --predict. The conv (SAGE, GCN, GIN), the layer count
and LayerNorm are read from the parameter names."""
import sys

import numpy as np
import scipy.sparse as sp

ds, model, logits, nonlinear, k = sys.argv[1:6]
k = int(k)
p = {name: v.astype(np.float64) for name, v in np.load(model).items()}
a = sp.load_npz(f"{ds}/graph.npz").tocsr().astype(np.float64)
a.data[:] = 1
if len(sys.argv) > 6 and sys.argv[6] == "selfloop":
    a = (a + sp.identity(a.shape[0], format="csr")).tocsr()
    a.data[:] = 1
deg = np.asarray(a.sum(axis=1)).ravel()
inv = np.divide(1, deg, out=np.zeros_like(deg), where=deg > 0)
mean = sp.diags(inv) @ a
gcn = sp.diags(np.sqrt(inv)) @ a @ sp.diags(np.sqrt(inv))


def act(x):
    if nonlinear == "relu":
        return np.maximum(x, 0)
    keep = np.argsort(-x, axis=1, kind="stable")[:, :k]
    out = np.zeros_like(x)
    np.put_along_axis(out, keep, np.take_along_axis(x, keep, axis=1), axis=1)
    return out


x = np.load(f"{ds}/features.npy").astype(np.float64) @ p["lin_in.weight"].T + p["lin_in.bias"]
layers = len({n.split(".")[1] for n in p if n.startswith("layers.")})
if layers == 0:
    x = act(x)
for l in range(layers):
    h, pre = act(x), f"layers.{l}."
    if pre + "fc_self.weight" in p:
        x = h @ p[pre + "fc_self.weight"].T + (mean @ h) @ p[pre + "fc_neigh.weight"].T
        x += p[pre + "bias"]
    elif pre + "weight" in p:
        x = (gcn @ h) @ p[pre + "weight"] + p[pre + "bias"]
    else:
        x = (1 + p[pre + "eps"][0]) * h + a @ h
        x = x @ p[pre + "apply_func.weight"].T + p[pre + "apply_func.bias"]
    if f"norms.{l}.weight" in p:
        mu, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
        x = (x - mu) / np.sqrt(var + 1e-5) * p[f"norms.{l}.weight"] + p[f"norms.{l}.bias"]
want = x @ p["lin_out.weight"].T + p["lin_out.bias"]
got = np.load(logits)
assert got.shape == want.shape, (got.shape, want.shape)
err = np.abs(got - want).max() / max(1, np.abs(want).max())
assert err < 1e-4, err
print(f"{err:.2e}")
