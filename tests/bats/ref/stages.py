"""python3 stages.py MODEL.onnx REPORT.json: recompute the stages and the
critical paths from the ONNX graph (with graph-partition's per-op FLOPs) and
check the report's summary, per-op stages and critical path; prints the
summary values. Constant ops: those reading no graph input and no staged
op's output, and Shape and Size (they read only dims)."""
import json
import sys

import onnx

g = onnx.load(sys.argv[1]).graph
rep = json.load(open(sys.argv[2]))
flops = {o["name"]: o["flops"] for o in rep["ops"]}
inputs = {i.name for i in g.input} - {t.name for t in g.initializer}
producer = {out: n.name for n in g.node for out in n.output}
stage, path, pred = {}, {}, {}
pending = list(g.node)
while pending:  # the file's order need not be topological
    rest = []
    for n in pending:
        prods = [producer[i] for i in n.input if i in producer]
        if any(p not in stage for p in prods):
            rest.append(n)
            continue
        staged = [p for p in prods if stage[p] >= 0]
        if n.op_type in ("Shape", "Size"):
            stage[n.name] = -1
        elif staged:
            stage[n.name] = max(stage[p] for p in staged) + 1
        else:
            stage[n.name] = 0 if any(i in inputs for i in n.input) else -1
        if stage[n.name] >= 0:
            best = max(staged, key=lambda p: path[p], default=None)
            path[n.name] = flops[n.name] + (path[best] if best else 0)
            pred[n.name] = best
    pending = rest
levels = [s for s in stage.values() if s >= 0]
want = {"stages": max(levels) + 1,
        "max_parallel_ops": max(levels.count(s) for s in set(levels)),
        "critical_path_ops": max(levels) + 1,
        "critical_path_flops": max(path.values())}
got = {k: rep["summary"][k] for k in want}
assert got == want, (got, want)
assert all(o["stage"] == stage[o["name"]] for o in rep["ops"])
# the reported critical path is a chain of producers with that many FLOPs
names = rep["summary"]["critical_path"]
assert sum(flops[n] for n in names) == want["critical_path_flops"], names
assert all(pred[b] == a or path[pred[b]] == path[a] for a, b in zip(names, names[1:])), names
print(" ".join(f"{k}={v}" for k, v in want.items()))
