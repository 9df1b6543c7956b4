"""python3 check_shapes.py MODEL.onnx REPORT.json: every operator's output
shape in graph-partition's JSON report equals what onnx.shape_inference
(with data propagation) infers; prints how many were compared."""
import json
import sys

import onnx

m = onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]), strict_mode=True, data_prop=True)
ref = {}
for v in list(m.graph.value_info) + list(m.graph.output):
    if not v.type.tensor_type.HasField("shape"):
        continue
    dims = v.type.tensor_type.shape.dim
    if all(d.HasField("dim_value") for d in dims):
        ref[v.name] = [d.dim_value for d in dims]
outs = {n.name: n.output[0] for n in m.graph.node}
checked = 0
for op in json.load(open(sys.argv[2]))["ops"]:
    want = ref.get(outs[op["name"]])
    if want is not None:
        assert op["output_shape"] == want, (op["name"], op["output_shape"], want)
        checked += 1
print(checked)
