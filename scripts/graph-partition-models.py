"""Models for graph-partition's benchmark and tests, written with Debian's
python3-onnx (run with /usr/bin/python3):

  graph-partition-models.py OUTDIR vit        vit_b16.onnx: ViT-B/16 as a
      torch.onnx export of torchvision's vit_b_16 writes it (opset 17,
      dynamic batch, weights stripped): the patch embedding, multi-head
      attention decomposed into Shape/Gather/Unsqueeze/Concat/Reshape
      arithmetic around the projections, erf-GELU, 12 blocks; 1,088 nodes.
  graph-partition-models.py OUTDIR vit-weights  vit_b16_weights.onnx: the same
      with random fp32 weights in every initializer (about 330 MB).
  graph-partition-models.py OUTDIR chain N    chain.onnx: N nodes of residual
      MLP blocks (MatMul, Add, Relu, Add), weights stripped.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

E, HEADS, MLP, LAYERS, PATCH, IMAGE, CLASSES = 768, 12, 3072, 12, 16, 224, 1000
TOKENS = (IMAGE // PATCH) ** 2 + 1


class Graph:
    def __init__(self, weights):
        self.nodes, self.inits, self.weights, self.count = [], [], weights, 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def op(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(h.make_node(op, inputs, outs, name=self.name("/" + op), **attrs))
        return outs[0] if n_out == 1 else outs

    def param(self, base, dims):
        name = self.name(base)
        if self.weights:
            data = np.random.default_rng(self.count).standard_normal(dims, dtype=np.float32)
            self.inits.append(nh.from_array(data * 0.02, name))
        else:  # dims only, no data: as the stripped exports in ../shared/models
            t = onnx.TensorProto(name=name, data_type=TensorProto.FLOAT)
            t.dims.extend(dims)
            self.inits.append(t)
        return name

    def const(self, values, scalar=False, node=False):
        """An int64 constant: an initializer, or a Constant node as exports also write."""
        t = h.make_tensor(self.name("const"), TensorProto.INT64, [] if scalar else [len(values)],
                          values)
        if node:
            return self.op("Constant", [], value=t)
        self.inits.append(t)
        return t.name

    def dim(self, x, i):  # a dim of x as a 1-D int64, the way exports compute it
        s = self.op("Shape", [x])
        g = self.op("Gather", [s, self.const([i], scalar=True)], axis=0)
        return self.op("Unsqueeze", [g, self.const([0])])

    def linear(self, x, n_in, n_out):
        y = self.op("MatMul", [x, self.param("weight", [n_in, n_out])])
        return self.op("Add", [y, self.param("bias", [n_out])])


def attention(g, x):
    # x: (L, B, E) as torch's MultiheadAttention sees it
    L, B = g.dim(x, 0), g.dim(x, 1)
    qkv = g.linear(x, E, 3 * E)
    tgt = g.op("Concat", [L, B, g.const([3]), g.const([E])], axis=0)
    qkv = g.op("Reshape", [qkv, tgt])
    qkv = g.op("Unsqueeze", [qkv, g.const([0])])
    qkv = g.op("Transpose", [qkv], perm=[3, 1, 2, 0, 4])
    qkv = g.op("Squeeze", [qkv, g.const([3])])
    heads = []
    for i in range(3):  # each size() call is a Shape and a Gather of its own
        t = g.op("Gather", [qkv, g.const([i], scalar=True, node=True)], axis=0)
        bh = g.op("Mul", [g.dim(x, 1), g.const([HEADS])])
        t = g.op("Reshape", [t, g.op("Concat", [g.dim(x, 0), bh,
                                                g.const([E // HEADS], node=True)], axis=0)])
        heads.append(g.op("Transpose", [t], perm=[1, 0, 2]))
    q, k, v = heads
    # the scale, from the head dim through floats as the SDPA export computes it
    d = g.op("Slice", [g.op("Shape", [q]), g.const([-1]), g.const([2 ** 62])])
    d = g.op("Cast", [d], to=TensorProto.FLOAT)
    one = g.op("Cast", [g.const([1], node=True)], to=TensorProto.FLOAT)
    scale = g.op("Div", [one, g.op("Sqrt", [d])])
    root = g.op("Sqrt", [scale])
    q = g.op("Mul", [q, root])
    kt = g.op("Mul", [g.op("Transpose", [k], perm=[0, 2, 1]), root])
    att = g.op("Softmax", [g.op("MatMul", [q, kt])], axis=-1)
    ctx = g.op("Transpose", [g.op("MatMul", [att, v])], perm=[1, 0, 2])
    lb = g.op("Mul", [L, B])
    ctx = g.op("Reshape", [ctx, g.op("Concat", [lb, g.const([E])], axis=0)])
    out = g.linear(ctx, E, E)
    return g.op("Reshape", [out, g.op("Concat", [L, B, g.const([E])], axis=0)])


def vit(weights):
    g = Graph(weights)
    x = g.op("Conv", ["x", g.param("conv_proj.weight", [E, 3, PATCH, PATCH]),
                      g.param("conv_proj.bias", [E])],
             kernel_shape=[PATCH, PATCH], strides=[PATCH, PATCH])
    n = g.dim("x", 0)
    x = g.op("Reshape", [x, g.op("Concat", [n, g.const([E, -1], node=True)], axis=0)])
    x = g.op("Transpose", [x], perm=[0, 2, 1])
    # expand(n, -1, -1): torch writes the -1 entries as Where(Equal(s, -1), 1, s)
    s = g.op("Concat", [n, g.const([-1, -1], node=True)], axis=0)
    s = g.op("Where", [g.op("Equal", [s, g.const([-1], node=True)]),
                       g.const([1, 1, 1], node=True), s])
    cls = g.op("Expand", [g.param("class_token", [1, 1, E]), s])
    x = g.op("Concat", [cls, x], axis=1)
    x = g.op("Add", [x, g.param("pos_embedding", [1, TOKENS, E])])
    for _ in range(LAYERS):
        ln = g.op("LayerNormalization", [x, g.param("ln_1.weight", [E]),
                                         g.param("ln_1.bias", [E])], axis=-1, epsilon=1e-6)
        a = g.op("Transpose", [attention(g, g.op("Transpose", [ln], perm=[1, 0, 2]))],
                 perm=[1, 0, 2])
        x = g.op("Add", [a, x])
        y = g.op("LayerNormalization", [x, g.param("ln_2.weight", [E]),
                                        g.param("ln_2.bias", [E])], axis=-1, epsilon=1e-6)
        y = g.linear(y, E, MLP)
        erf = g.op("Erf", [g.op("Div", [y, g.param("sqrt2", [])])])
        y = g.op("Mul", [g.op("Mul", [y, g.op("Add", [erf, g.param("one", [])])]),
                         g.param("half", [])])
        x = g.op("Add", [x, g.linear(y, MLP, E)])
    x = g.op("LayerNormalization", [x, g.param("ln.weight", [E]), g.param("ln.bias", [E])],
             axis=-1, epsilon=1e-6)
    x = g.op("Gather", [x, g.const([0], scalar=True)], axis=1)
    logits = g.op("Gemm", [x, g.param("head.weight", [CLASSES, E]),
                           g.param("head.bias", [CLASSES])], transB=1)
    graph = h.make_graph(g.nodes, "vit_b_16",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT,
                                                   ["batch", 3, IMAGE, IMAGE])],
                         [h.make_tensor_value_info(logits, TensorProto.FLOAT, None)],
                         initializer=g.inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def chain(n):
    g = Graph(False)
    x = "x"
    while len(g.nodes) + 4 <= n:
        y = g.op("Relu", [g.linear(x, 64, 64)])
        x = g.op("Add", [x, y])
    while len(g.nodes) < n:
        x = g.op("Relu", [x])
    graph = h.make_graph(g.nodes, "chain",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
                         [h.make_tensor_value_info(x, TensorProto.FLOAT, None)],
                         initializer=g.inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


if __name__ == "__main__":
    out, what = sys.argv[1], sys.argv[2]
    if what == "vit":
        onnx.save(vit(False), f"{out}/vit_b16.onnx")
    elif what == "vit-weights":
        onnx.save(vit(True), f"{out}/vit_b16_weights.onnx")
    elif what == "chain":
        onnx.save(chain(int(sys.argv[3])), f"{out}/chain.onnx")
    else:
        sys.exit(f"unknown model '{what}'")
