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
    # Node and op names holding a newline, escape sequences and a C1
    # control (U+009B, CSI), for the table's escaping.
    "hostile_names": model(
        "hostile", [
            h.make_node("Conv", ["x", "w", "b"], ["y"], name="conv\nred\x1b[31m",
                        kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            h.make_node("Relu", ["y"], ["z"], name="relu\u009b1"),
            h.make_node("Evil\x1b[2J", ["z"], ["out"], name="evil")],
        [f32("x", [1, 4, 8, 8])], [f32("out", None)],
        [weight("w", [4, 4, 3, 3]), weight("b", [4])]),
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
    "negative_dim": model(
        "neg", [h.make_node("Add", ["x", "w"], ["y"], name="add")],
        [f32("x", [1, 4])], [f32("y", None)], [weight("w", [-4])]),
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
    # A small vision-transformer block, as dynamic exports write it: patch
    # embedding, Shape/Slice/Concat/Reshape, a class token through
    # ConstantOfShape and Expand, LayerNormalization, one attention head from
    # a Split, Erf, Pad, Range and Gather, a mean over tokens and the head.
    "vit_block": model(
        "vit", [
            h.make_node("Conv", ["x", "patch_w"], ["p"], name="patch", kernel_shape=[8, 8],
                        strides=[8, 8]),
            h.make_node("Shape", ["p"], ["ps"], name="p_shape"),
            h.make_node("Slice", ["ps", "zero1", "two1"], ["bc"], name="p_slice"),
            h.make_node("Concat", ["bc", "minus1"], ["tgt"], name="tgt", axis=0),
            h.make_node("Reshape", ["p", "tgt"], ["pr"], name="flatten_patches"),
            h.make_node("Transpose", ["pr"], ["tok"], name="to_tokens", perm=[0, 2, 1]),
            h.make_node("ConstantOfShape", ["cls_shape"], ["cls"], name="cls",
                        value=h.make_tensor("v", TensorProto.FLOAT, [1], [0.0])),
            h.make_node("Gather", ["ps", "zero"], ["b"], name="batch", axis=0),
            h.make_node("Unsqueeze", ["b", "zero1"], ["b1"], name="batch1"),
            h.make_node("Concat", ["b1", "one64"], ["cls_tgt"], name="cls_tgt", axis=0),
            h.make_node("Expand", ["cls", "cls_tgt"], ["clsb"], name="cls_expand"),
            h.make_node("Concat", ["clsb", "tok"], ["seq"], name="seq", axis=1),
            h.make_node("LayerNormalization", ["seq", "ln_w", "ln_b"], ["ln"], name="ln",
                        axis=-1),
            h.make_node("MatMul", ["ln", "qkv_w"], ["qkv"], name="qkv"),
            h.make_node("Split", ["qkv", "split"], ["q", "k", "v"], name="split", axis=-1),
            h.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
            h.make_node("MatMul", ["q", "kt"], ["att"], name="scores"),
            h.make_node("Div", ["att", "scale"], ["atts"], name="scale"),
            h.make_node("Softmax", ["atts"], ["attp"], name="softmax", axis=-1),
            h.make_node("MatMul", ["attp", "v"], ["ctx"], name="context"),
            h.make_node("Add", ["ctx", "seq"], ["res"], name="residual"),
            h.make_node("Erf", ["res"], ["e"], name="erf"),
            h.make_node("Pad", ["e", "pads"], ["padded"], name="pad"),
            h.make_node("Range", ["r0", "r17", "r1"], ["idx"], name="range"),
            h.make_node("Gather", ["padded", "idx"], ["sel"], name="select", axis=1),
            h.make_node("ReduceMean", ["sel"], ["pooled"], name="mean", axes=[1], keepdims=0),
            h.make_node("Gemm", ["pooled", "head_w", "head_b"], ["logits"], name="head",
                        transB=1)],
        [f32("x", [2, 3, 32, 32])], [f32("logits", None)],
        [weight("patch_w", [64, 3, 8, 8]), i64("zero1", [0]), i64("two1", [2]),
         i64("minus1", [-1]), i64("cls_shape", [1, 1, 64]),
         h.make_tensor("zero", TensorProto.INT64, [], [0]), i64("one64", [1, 64]),
         weight("ln_w", [64]), weight("ln_b", [64]), weight("qkv_w", [64, 192]),
         i64("split", [64, 64, 64]), weight("scale", []), i64("pads", [0, 1, 0, 0, 2, 0]),
         h.make_tensor("r0", TensorProto.INT64, [], [0]),
         h.make_tensor("r17", TensorProto.INT64, [], [17]),
         h.make_tensor("r1", TensorProto.INT64, [], [1]),
         weight("head_w", [10, 64]), weight("head_b", [10])]),
    # Rules beyond the classifiers: Resize by scales, by sizes and by sizes
    # computed from a shape in floating point, ConvTranspose with SAME
    # padding and with output_shape, Pad, TopK, Tile, DepthToSpace,
    # SpaceToDepth, Size, GatherElements, OneHot, Einsum, ArgMax, ReduceL2,
    # LayerNormalization's mean, and a Reshape target through Mod.
    "ops_misc": model(
        "misc", [
            h.make_node("Resize", ["x", "", "scales"], ["r1"], name="resize_scales",
                        mode="nearest"),
            h.make_node("Resize", ["x", "", "", "sizes"], ["r2"], name="resize_sizes",
                        mode="linear"),
            h.make_node("Shape", ["x"], ["xs"], name="x_shape"),
            h.make_node("Slice", ["xs", "two1", "four1"], ["hw"], name="hw"),
            h.make_node("Slice", ["xs", "zero1", "two1"], ["nc"], name="nc"),
            h.make_node("Cast", ["hw"], ["hwf"], name="hw_float", to=TensorProto.FLOAT),
            h.make_node("Mul", ["hwf", "two_f"], ["hw2f"], name="hw_twice"),
            h.make_node("Cast", ["hw2f"], ["hw2"], name="hw_int", to=TensorProto.INT64),
            h.make_node("Concat", ["nc", "hw2"], ["sz"], name="sizes_dyn", axis=0),
            h.make_node("Resize", ["x", "", "", "sz"], ["r3"], name="resize_dynamic"),
            h.make_node("ConvTranspose", ["x", "wt"], ["ct1"], name="deconv_same",
                        strides=[2, 2], auto_pad="SAME_UPPER"),
            h.make_node("ConvTranspose", ["x", "wt"], ["ct2"], name="deconv_shape",
                        strides=[2, 2], output_shape=[15, 19]),
            h.make_node("Pad", ["x", "pads"], ["pd"], name="pad", mode="reflect"),
            h.make_node("TopK", ["x", "k3"], ["tv", "ti"], name="topk", axis=3),
            h.make_node("Tile", ["x", "reps"], ["tl"], name="tile"),
            h.make_node("DepthToSpace", ["d"], ["d2s"], name="d2s", blocksize=2),
            h.make_node("SpaceToDepth", ["d"], ["s2d"], name="s2d", blocksize=2),
            h.make_node("Size", ["x"], ["n"], name="size"),
            h.make_node("GatherElements", ["x", "gidx"], ["ge"], name="gather_el", axis=2),
            h.make_node("OneHot", ["cls", "depth", "onoff"], ["oh"], name="onehot"),
            h.make_node("Einsum", ["q", "k"], ["qk"], name="einsum",
                        equation="bhid,bhjd->bhij"),
            h.make_node("ArgMax", ["x"], ["am"], name="argmax", axis=1, keepdims=0),
            h.make_node("ReduceL2", ["x"], ["l2"], name="l2", axes=[2, 3]),
            h.make_node("LayerNormalization", ["q", "lw"], ["ln", "lmean"], name="ln",
                        axis=-2),
            h.make_node("Shape", ["q"], ["qs"], name="q_shape"),
            h.make_node("Gather", ["qs", "three"], ["qd"], name="q_dim"),
            h.make_node("Mod", ["qd", "six"], ["qm"], name="q_mod"),
            h.make_node("Unsqueeze", ["qm", "zero1"], ["qm1"], name="q_mod1"),
            h.make_node("Concat", ["qm1", "minus1"], ["qt"], name="q_target", axis=0),
            h.make_node("Reshape", ["q", "qt"], ["qr"], name="q_reshape")],
        [f32("x", [1, 3, 7, 9]), f32("d", [2, 8, 6, 4]), f32("q", [2, 4, 5, 8]),
         f32("k", [2, 4, 6, 8]), h.make_tensor_value_info("cls", TensorProto.INT64, [3, 2])],
        [f32("r1", None)],
        [h.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 1.5]),
         i64("sizes", [1, 3, 10, 12]), i64("two1", [2]), i64("four1", [4]),
         i64("zero1", [0]), h.make_tensor("two_f", TensorProto.FLOAT, [], [2.0]),
         weight("wt", [3, 4, 3, 3]), i64("pads", [0, 0, 1, 2, 0, 0, 3, 4]), i64("k3", [3]),
         i64("reps", [2, 1, 1, 3]), h.make_tensor("gidx", TensorProto.INT64, [1, 3, 2, 9],
                                                   [0] * 54),
         h.make_tensor("depth", TensorProto.INT64, [], [10]),
         h.make_tensor("onoff", TensorProto.FLOAT, [2], [0, 1]), weight("lw", [5, 8]),
         h.make_tensor("three", TensorProto.INT64, [], [3]),
         h.make_tensor("six", TensorProto.INT64, [], [6]), i64("minus1", [-1])]),
    # Opset 18: Pad over the axes of its fourth input; Resize over its axes
    # attribute, by sizes kept in aspect (not_larger) and by scales.
    "opset18": model(
        "o18", [
            h.make_node("Pad", ["x", "pads", "", "axes"], ["p"], name="pad_axes"),
            h.make_node("Resize", ["x", "", "", "sizes"], ["r"], name="resize_keep",
                        axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
            h.make_node("Resize", ["x", "", "scales"], ["s"], name="resize_axes", axes=[3],
                        mode="linear")],
        [f32("x", [1, 2, 6, 8])], [f32("p", None)],
        [i64("pads", [1, 2, 3, 4]), i64("axes", [-1, 1]), i64("sizes", [9, 9]),
         h.make_tensor("scales", TensorProto.FLOAT, [1], [0.5])], opset=18),
    # Fusion: conv1, its BatchNormalization and Relu are a chain; conv2's
    # output has two consumers (no chain); gemm and its Sigmoid are one;
    # matmul and its bias Add are one, which stops there because the sum is
    # a graph output.
    "fusion_cases": model(
        "fus", [
            h.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", kernel_shape=[3, 3],
                        pads=[1, 1, 1, 1]),
            h.make_node("BatchNormalization", ["c1", "s", "b", "m", "v"], ["n1"], name="bn1"),
            h.make_node("Relu", ["n1"], ["r1"], name="relu1"),
            h.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", kernel_shape=[1, 1]),
            h.make_node("Relu", ["c2"], ["r2"], name="relu2"),
            h.make_node("Add", ["c2", "r2"], ["sum"], name="add"),
            h.make_node("Flatten", ["sum"], ["f"], name="flatten"),
            h.make_node("Gemm", ["f", "wf"], ["g"], name="gemm", transB=1),
            h.make_node("Sigmoid", ["g"], ["out"], name="sigmoid"),
            h.make_node("MatMul", ["f", "wm"], ["mm"], name="matmul"),
            h.make_node("Add", ["mm", "bm"], ["mb"], name="bias"),
            h.make_node("Gelu", ["mb"], ["out2"], name="gelu"),
            h.make_node("Relu", ["out2"], ["out3"], name="relu3")],
        [f32("x", [1, 4, 5, 5])], [f32("out", None), f32("out3", None), f32("mb", None)],
        [weight("w1", [4, 4, 3, 3]), weight("s", [4]), weight("b", [4]), weight("m", [4]),
         weight("v", [4]), weight("w2", [4, 4, 1, 1]), weight("wf", [3, 100]),
         weight("wm", [100, 6]), weight("bm", [6])], opset=20),
    # A node name with a quote and a backslash, for the DOT output's escaping.
    "quoted_names": model(
        "q", [h.make_node("Relu", ["x"], ["y"], name='say "hi" \\ bye')],
        [f32("x", [1, 4])], [f32("y", None)]),
    # The ONNX twin of configs/models/mlp.yaml.
    "mlp": model(
        "mlp", [
            h.make_node("Gemm", ["x", "fc1.w", "fc1.b"], ["h1"], name="fc1", transB=1),
            h.make_node("Relu", ["h1"], ["a1"], name="relu1"),
            h.make_node("Gemm", ["a1", "fc2.w", "fc2.b"], ["h2"], name="fc2", transB=1),
            h.make_node("Relu", ["h2"], ["a2"], name="relu2"),
            h.make_node("Gemm", ["a2", "fc3.w", "fc3.b"], ["logits"], name="fc3", transB=1),
            h.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1)],
        [f32("x", ["N", 784])], [f32("probs", None)],
        [weight("fc1.w", [256, 784]), weight("fc1.b", [256]), weight("fc2.w", [256, 256]),
         weight("fc2.b", [256]), weight("fc3.w", [10, 256]), weight("fc3.b", [10])]),
}


def attr_ref(name, ref, kind=onnx.AttributeProto.INT):
    """An attribute of a function's node that takes the caller's ref."""
    a = onnx.AttributeProto()
    a.name, a.ref_attr_name, a.type = name, ref, kind
    return a


def local_functions(path, recursive=False):
    """Model-local functions (ONNX's FunctionProto), nested: Pair calls
    ConvBlock twice; ConvBlock is a grouped Conv (its group the caller's
    attribute g) and a Relu. recursive: ConvBlock calls itself."""
    conv = h.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1])
    conv.attribute.append(attr_ref("group", "g"))
    body = [conv, h.make_node("ConvBlock" if recursive else "Relu", ["c"], ["y"], name="act",
                              domain="spkit.test" if recursive else "")]
    block = h.make_function("spkit.test", "ConvBlock", ["x", "w"], ["y"], body,
                            [h.make_opsetid("", 17)], ["g"])
    first = h.make_node("ConvBlock", ["x", "w1"], ["h"], name="first", domain="spkit.test")
    first.attribute.append(attr_ref("g", "groups"))
    pair = h.make_function("spkit.test", "Pair", ["x", "w1", "w2"], ["y"], [
        first, h.make_node("ConvBlock", ["h", "w2"], ["y"], name="second",
                           domain="spkit.test", g=1)],
        [h.make_opsetid("", 17), h.make_opsetid("spkit.test", 1)], ["groups"])
    g = h.make_graph([h.make_node("Pair", ["x", "w1", "w2"], ["y"], name="pair",
                                  domain="spkit.test", groups=4)],
                     "functions", [f32("x", [1, 8, 16, 16])], [f32("y", None)],
                     [weight("w1", [8, 2, 3, 3]), weight("w2", [8, 8, 3, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("spkit.test", 1)],
                     functions=[block, pair])
    onnx.save(m, path)


def exploding_functions(path, levels=12, calls=8):
    """Function f0 calls f1 eight times, f1 calls f2 eight times, ...: 8^12
    Relus once inlined, from a file of a few kilobytes."""
    fns = [h.make_function("spkit.test", f"f{levels}", ["x"], ["y"],
                           [h.make_node("Relu", ["x"], ["y"], name="relu")],
                           [h.make_opsetid("", 17)], [])]
    for lv in range(levels - 1, -1, -1):
        nodes = [h.make_node(f"f{lv + 1}", ["x" if i == 0 else f"t{i - 1}"],
                             ["y" if i == calls - 1 else f"t{i}"], name=f"c{i}",
                             domain="spkit.test") for i in range(calls)]
        fns.append(h.make_function("spkit.test", f"f{lv}", ["x"], ["y"], nodes,
                                   [h.make_opsetid("", 17), h.make_opsetid("spkit.test", 1)], []))
    g = h.make_graph([h.make_node("f0", ["x"], ["y"], name="top", domain="spkit.test")],
                     "explode", [f32("x", [4])], [f32("y", None)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17),
                                             h.make_opsetid("spkit.test", 1)], functions=fns), path)


def with_weights(path, megabytes, stripped):
    """A chain of MatMuls whose weights hold data, megabytes of it in all; or,
    stripped, the same graph with dims only."""
    import numpy as np
    from onnx import numpy_helper
    n = max(1, megabytes // 4)  # 1024 x 1024 fp32 each
    nodes, inits, x = [], [], "x"
    for i in range(n):
        inits.append(weight(f"w{i}", [1024, 1024]) if stripped else
                     numpy_helper.from_array(np.full((1024, 1024), 0.5, np.float32), f"w{i}"))
        nodes.append(h.make_node("MatMul", [x, f"w{i}"], [f"y{i}"], name=f"mm{i}"))
        x = f"y{i}"
    onnx.save(model("weights", nodes, [f32("x", [4, 1024])], [f32(x, None)], inits), path)


def deep_type(path, levels):
    """A model whose graph input is a sequence of a sequence of ... levels
    deep, its protobuf bytes written by hand."""
    def varint(n):
        out = bytearray()
        while True:
            out.append((n & 0x7f) | (0x80 if n > 0x7f else 0))
            n >>= 7
            if not n:
                return bytes(out)

    def field(num, body):
        return varint(num << 3 | 2) + varint(len(body)) + body
    t = field(1, b"\x08\x01")  # tensor_type { elem_type: FLOAT }
    for _ in range(levels):  # sequence_type { elem_type: t }
        t = field(4, field(1, t))
    graph = field(2, b"g") + field(11, field(1, b"x") + field(2, t))
    with open(path, "wb") as f:  # ir_version 8, opset 17, the graph
        f.write(b"\x08\x08" + field(8, b"\x10\x11") + field(7, graph))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] in ("weights", "stripped"):
        with_weights(sys.argv[1], int(sys.argv[3]), sys.argv[2] == "stripped")
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[2] == "exploding_functions":
        exploding_functions(sys.argv[1])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[2] in ("functions", "recursive_function"):
        local_functions(sys.argv[1], sys.argv[2] == "recursive_function")
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[2] == "deep_type":
        deep_type(sys.argv[1], int(sys.argv[3]))
        sys.exit(0)
    for name, m in MODELS.items():
        onnx.save(m, f"{sys.argv[1]}/{name}.onnx")
