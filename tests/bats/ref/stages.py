"""python3 stages.py MODEL.onnx REPORT.json: recompute the stages and the
critical paths from the ONNX graph (with graph-partition's per-op FLOPs) and
check the report's summary and per-op stages; prints the summary values."""
import json
import sys

import onnx

g = onnx.load(sys.argv[1]).graph
rep = json.load(open(sys.argv[2]))
flops = {o["name"]: o["flops"] for o in rep["ops"]}
inputs = {i.name for i in g.input} - {t.name for t in g.initializer}
producer = {out: n.name for n in g.node for out in n.output}
stage, path = {}, {}
pending = list(g.node)
while pending:  # the file's order need not be topological
    rest = []
    for n in pending:
        prods = [producer[i] for i in n.input if i in producer]
        if any(p not in stage for p in prods):
            rest.append(n)
            continue
        staged = [p for p in prods if stage[p] >= 0]
        if staged:
            stage[n.name] = max(stage[p] for p in staged) + 1
        else:
            stage[n.name] = 0 if any(i in inputs for i in n.input) else -1
        if stage[n.name] >= 0:
            path[n.name] = flops[n.name] + max([path[p] for p in staged], default=0)
    pending = rest
levels = [s for s in stage.values() if s >= 0]
want = {"stages": max(levels) + 1,
        "max_parallel_ops": max(levels.count(s) for s in set(levels)),
        "critical_path_ops": max(levels) + 1,
        "critical_path_flops": max(path.values())}
got = {k: rep["summary"][k] for k in want}
assert got == want, (got, want)
assert all(o["stage"] == stage[o["name"]] for o in rep["ops"])
print(" ".join(f"{k}={v}" for k, v in want.items()))
