"""Small ONNX models for the graph-partition tests, written with Debian's
python3-onnx: python3 onnx_models.py OUTDIR. Each exercises shape rules whose
results the tests check by hand-computed numbers."""
import sys

import onnx
from onnx import TensorProto, helper as h


def model(name, nodes, inputs, outputs, inits=(), value_info=(), opset=17):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits),
                     value_info=list(value_info))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def f32(name, dims):
    return h.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def weight(name, dims):  # dims only, no data: as the stripped exports
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    return t


def i64(name, values):
    return h.make_tensor(name, TensorProto.INT64, [len(values)], values)


MODELS = {
    # Conv with group 4, dilation 2, stride 2 and asymmetric pads, then Relu:
    # out 16 x ((32+1+2-2*2-1)//2+1 = 16) x ((32+1+1-5)//2+1 = 15)
    "conv_group_dilation": model(
        "conv", [
            h.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", group=4,
                        dilations=[2, 2], strides=[2, 2], pads=[1, 1, 2, 1],
                        kernel_shape=[3, 3]),
            h.make_node("Relu", ["y"], ["z"], name="relu")],
        [f32("x", [2, 8, 32, 32])], [f32("z", None)],
        [weight("w", [16, 2, 3, 3]), weight("b", [16])]),
    # MatMul broadcasting (3,1,4,5) @ (6,5,7) -> (3,6,4,7), then Softmax.
    "matmul_broadcast": model(
        "mm", [
            h.make_node("MatMul", ["a", "b"], ["c"], name="mm"),
            h.make_node("Softmax", ["c"], ["d"], name="softmax", axis=-1)],
        [f32("a", [3, 1, 4, 5]), f32("b", [6, 5, 7])], [f32("d", None)]),
    # A dynamic-shape export's Reshape: Shape -> Gather -> Unsqueeze -> Concat.
    "reshape_dynamic": model(
        "dyn", [
            h.make_node("Shape", ["x"], ["s"], name="shape"),
            h.make_node("Constant", [], ["zero"], name="c0",
                        value=h.make_tensor("v", TensorProto.INT64, [], [0])),
            h.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
            h.make_node("Constant", [], ["axes"], name="c1", value=i64("a", [0])),
            h.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq"),
            h.make_node("Constant", [], ["rest"], name="c2", value=i64("r", [-1])),
            h.make_node("Concat", ["n1", "rest"], ["target"], name="concat", axis=0),
            h.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
            h.make_node("Gemm", ["y", "w"], ["z"], name="fc", transB=1)],
        [f32("x", ["batch", 4, 6, 6])], [f32("z", None)], [weight("w", [10, 144])]),
    # An op without a shape rule; value_info gives its output's shape.
    "unknown_op": model(
        "unk", [
            h.make_node("Relu", ["x"], ["y"], name="relu"),
            h.make_node("Frobnicate", ["y"], ["z"], name="frob"),
            h.make_node("Relu", ["z"], ["out"], name="relu2")],
        [f32("x", [1, 3, 4, 4])], [f32("out", None)], value_info=[f32("z", [1, 3, 4, 4])]),
    "never_produced": model(
        "np", [h.make_node("Add", ["x", "ghost"], ["y"], name="add")],
        [f32("x", [1, 4])], [f32("y", None)]),
    "cycle": model(
        "cyc", [
            h.make_node("Add", ["x", "b"], ["a"], name="first"),
            h.make_node("Relu", ["a"], ["b"], name="second")],
        [f32("x", [1, 4])], [f32("b", None)]),
    "no_broadcast": model(
        "nb", [h.make_node("Add", ["x", "y"], ["z"], name="add")],
        [f32("x", [2, 3]), f32("y", [4, 3])], [f32("z", None)]),
    # Pools and the rest of a classifier head; two inputs for --input-shape.
    "pools": model(
        "pools", [
            h.make_node("MaxPool", ["x"], ["p"], name="maxpool", kernel_shape=[3, 3],
                        strides=[2, 2], pads=[1, 1, 1, 1]),
            h.make_node("AveragePool", ["p"], ["q"], name="avgpool", kernel_shape=[2, 2],
                        strides=[2, 2], ceil_mode=1),
            h.make_node("GlobalAveragePool", ["q"], ["g"], name="gap"),
            h.make_node("Flatten", ["g"], ["f"], name="flatten"),
            h.make_node("Add", ["f", "bias"], ["out"], name="add")],
        [f32("x", [1, 8, 15, 15]), f32("bias", [1, 8])], [f32("out", None)]),
}

if __name__ == "__main__":
    for name, m in MODELS.items():
        onnx.save(m, f"{sys.argv[1]}/{name}.onnx")
