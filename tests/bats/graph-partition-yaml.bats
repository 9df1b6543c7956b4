#!/usr/bin/env bats
# graph-partition on YAML models: the shipped examples' numbers, the same
# analysis as the ONNX twin of a model, the man page's example, and every
# error with its file and line.
load helpers

G=graph-partition
CONF=$REPO/configs/models

json_get() { # FILE EXPR: a Python expression over the report j
	$PY -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"
}

# yaml_error STATUS PATTERN: graph-partition on $T/m.yaml fails with one line
# matching "m.yaml:LINE: PATTERN" and leaves no output file.
yaml_error() {
	run "$BIN/$G" "$T/m.yaml" -b 2 -f json -o "$T/out.json"
	assert_error 1 "$G" "m.yaml:$1: $2"
	[ ! -e "$T/out.json" ]
}

@test "mlp.yaml: FLOPs by hand, a symbolic batch, Gemm+Relu fusions" {
	"$BIN/$G" "$CONF/mlp.yaml" --batch 64 -f json -o "$T/m.json"
	[ "$(json_get "$T/m.json" "j['summary']['matmul_flops']")" = $((2 * 64 * (784 * 256 + 256 * 256 + 256 * 10))) ]
	[ "$(json_get "$T/m.json" "j['summary']['params']")" = $((784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10)) ]
	[ "$(json_get "$T/m.json" "[f['pattern'] for f in j['fusions']]")" = "['Gemm+Relu', 'Gemm+Relu']" ]
	"$BIN/$G" "$CONF/mlp.yaml" --input-shape x=8x784 -f json -o "$T/m8.json"
	[ "$(json_get "$T/m8.json" "j['ops'][-1]['output_shape']")" = "[8, 10]" ]
	run "$BIN/$G" "$CONF/mlp.yaml"
	assert_error 1 "$G" "mlp.yaml: input 'x' dim 0 is symbolic; give --batch or --input-shape"
	run "$BIN/$G" "$CONF/mlp.yaml" --input-shape y=8x784
	assert_error 1 "$G" "--input-shape: .*mlp.yaml has no graph input 'y'"
}

@test "a YAML model and its ONNX twin give the same report" {
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T"
	"$BIN/$G" "$CONF/mlp.yaml" -b 4 -f json -o "$T/yaml.json"
	"$BIN/$G" "$T/mlp.onnx" -b 4 -f json -o "$T/onnx.json"
	$PY - "$T/yaml.json" "$T/onnx.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for j in (a, b):
    del j["model"]
assert a == b, (a["summary"], b["summary"])
PY
}

@test "resnet_basic.yaml: the repeated block, Conv+BN+Relu chains, the shortcut beside its block" {
	"$BIN/$G" "$CONF/resnet_basic.yaml" -b 1 -f json -o "$T/r.json"
	# 7x7/2 stem, four 3x3 64-channel convs at 56x56, the 128-channel block
	# at 28x28 with its 1x1/2 shortcut
	want=$((2 * 64 * 112 * 112 * 3 * 49 + 4 * 2 * 64 * 56 * 56 * 64 * 9 + 2 * 128 * 28 * 28 * (64 * 9 + 128 * 9 + 64)))
	[ "$(json_get "$T/r.json" "j['summary']['matmul_flops']")" = "$want" ]
	[ "$(json_get "$T/r.json" "[(o['name'], o['stage']) for o in j['ops'] if o['name'] in ('down.conv1', 'down.shortcut')]")" = \
	  "[('down.conv1', 18), ('down.shortcut', 18)]" ]
	[ "$(json_get "$T/r.json" "j['summary']['max_parallel_ops']")" = 2 ]
	[ "$(json_get "$T/r.json" "[f['pattern'] for f in j['fusions']].count('Conv+BatchNormalization+Relu')")" = 4 ]
	[ "$(json_get "$T/r.json" "[f['pattern'] for f in j['fusions']].count('Conv+BatchNormalization')")" = 4 ]
	# copy 1 of the repeated block reads copy 0's output, which is not the block's
	[ "$(json_get "$T/r.json" "[o['output_shape'] for o in j['ops'] if o['name'] == 'l1.1.add']")" = "[[1, 64, 56, 56]]" ]
	io() { json_get "$T/r.json" "[(o['inputs'], o['outputs']) for o in j['ops'] if o['name'] == '$1'][0]"; }
	[ "$(io l1.0.conv1)" = "(['stem', 'l1.0.conv1.w'], ['l1.0.c1'])" ]
	[ "$(io l1.0.relu2)" = "(['l1.0.sum'], ['layer1#0'])" ]
	[ "$(io l1.1.add)" = "(['l1.1.b2', 'layer1#0'], ['l1.1.sum'])" ]
	[ "$(io l1.1.relu2)" = "(['l1.1.sum'], ['layer1'])" ]
}

@test "vit_b16.yaml: torchvision's vit_b_16 parameters and FLOPs, 12 blocks" {
	"$BIN/$G" "$CONF/vit_b16.yaml" -b 1 -f json -o "$T/v.json"
	[ "$(json_get "$T/v.json" "j['summary']['params']")" = 86567656 ]
	# patch conv, then per block qkv, scores, context, proj, fc1, fc2; the head
	block=$((2 * 197 * 768 * 2304 + 2 * 2 * 12 * 197 * 197 * 64 + 2 * 197 * 768 * 768 + 2 * 2 * 197 * 768 * 3072))
	[ "$(json_get "$T/v.json" "j['summary']['matmul_flops']")" = $((2 * 196 * 768 * 768 + 12 * block + 2 * 768 * 1000)) ]
	[ "$(json_get "$T/v.json" "j['summary']['op_types']['Softmax'], j['summary']['op_types']['LayerNormalization']")" = "12 25" ]
	[ "$(json_get "$T/v.json" "[f['pattern'] for f in j['fusions']].count('MatMul+Add+Gelu')")" = 12 ]
	# the class token's shape arithmetic runs once, ahead: Shape and its chain are constants
	[ "$(json_get "$T/v.json" "[o['stage'] for o in j['ops'] if o['name'] in ('x.shape', 'batch', 'cls.shape')]")" = "[-1, -1, -1]" ]
	[ "$(json_get "$T/v.json" "[o['output_shape'] for o in j['ops'] if o['name'] in ('cls.expand', 'head')]")" = "[[1, 1, 768], [1, 1000]]" ]
}

@test "the man page's YAML example runs" {
	groff -mandoc -Tascii -P-cbu "$REPO/man/man1/$G.1" | sed -n '/^YAML MODELS/,/^HARDWARE FILES/p' |
		sed -n '/name: mlp/,/outputs: \[y\]/p' | sed 's/^              //' >"$T/example.yaml"
	[ "$(wc -l <"$T/example.yaml")" -gt 20 ]
	"$BIN/$G" "$T/example.yaml" -b 2 -f json -o "$T/e.json"
	[ "$(json_get "$T/e.json" "[o['name'] for o in j['ops']]")" = \
	  "['fc1', 'a', 'blk0.mm', 'blk0.relu', 'blk1.mm', 'blk1.relu', 'blk2.mm', 'blk2.relu', 'blk3.mm', 'blk3.relu']" ]
	[ "$(json_get "$T/e.json" "j['ops'][-1]['output_shape']")" = "[2, 256]" ]
}

@test "constants, attributes of each kind, a shared param, ConstantOfShape's value" {
	cat >"$T/m.yaml" <<'EOF'
inputs: {x: [2, 3, 8, 8]}
params: {w: [4, 3, 3, 3]}
constants:
  target: [2, -1]
  scales: [1, 1, 2.0, 2]
  shape3: [3]
nodes:
  - {op: Conv, name: conv, inputs: [x, w], outputs: [c],
     attrs: {pads: [1, 1, 1, 1], auto_pad: NOTSET, group: 1}}
  - {op: Resize, name: up, inputs: [c, "", scales], outputs: [u], attrs: {mode: linear}}
  - {op: LeakyRelu, name: leaky, inputs: [u], outputs: [l], attrs: {alpha: 0.1}}
  - repeat: 3
    input: l
    output: y
    params: {shared: [1]}
    nodes:
      - {op: Mul, name: scale$i, inputs: [$in, shared], outputs: [$out]}
  - {op: Reshape, name: flat, inputs: [y, target], outputs: [f]}
  - {op: ConstantOfShape, name: fill, inputs: [shape3], outputs: [k], attrs: {value: 2}}
outputs: [f]
EOF
	"$BIN/$G" "$T/m.yaml" -f json -o "$T/m.json"
	[ "$(json_get "$T/m.json" "[(o['name'], o['output_shape']) for o in j['ops']][1:]")" = \
	  "[('fill', [3]), ('up', [2, 4, 16, 16]), ('leaky', [2, 4, 16, 16]), ('scale0', [2, 4, 16, 16]), ('scale1', [2, 4, 16, 16]), ('scale2', [2, 4, 16, 16]), ('flat', [2, 1024])]" ]
	# the weights and the one shared scale; constants are not parameters
	[ "$(json_get "$T/m.json" "j['summary']['params']")" = $((4 * 3 * 9 + 1)) ]
}

@test "a model with no nodes: every format reports none" {
	printf 'inputs: {x: [1, 4]}\nnodes: []\n' >"$T/m.yaml"
	for f in table csv json dot; do
		"$BIN/$G" "$T/m.yaml" -f $f -o "$T/r.$f"
	done
	[ "$(json_get "$T/r.json" "(j['summary']['ops'], j['ops'])")" = "(0, [])" ]
	[ "$(wc -l <"$T/r.csv")" = 1 ]
	grep -q '^ops  *0$' "$T/r.table"
}

@test "a node with an empty name, first in the table, gets a blank name column" {
	# UBSan stopped the table at the null buffer of its first line (found by
	# fuzz_model_yaml; the input is in its corpus)
	printf '%s\n' "inputs: {x: [1, 2]}" "nodes:" \
		"  - {op: Add, name: '', inputs: [x, x], outputs: [a]}" >"$T/m.yaml"
	run "$BIN/$G" "$T/m.yaml" -b 3
	[ "$status" -eq 0 ]
	[[ ${lines[1]} =~ ^\ {41}Add\ +elementwise\  ]]
}

@test "YAML errors: one line with file and line, exit 1, no output" {
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, inputs: [x], outputs: [y]\n' >"$T/m.yaml"
	yaml_error 4 "syntax error"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, imputs: [x], outputs: [y]}\n' >"$T/m.yaml"
	yaml_error 3 "unknown key 'imputs' in a node \(expected op, name, inputs, outputs, attrs\)"
	printf 'inputs: {x: [1, 4]}\nnodez: []\n' >"$T/m.yaml"
	yaml_error 2 "unknown key 'nodez' in a model"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {inputs: [x], outputs: [y]}\n' >"$T/m.yaml"
	yaml_error 3 "missing key 'op'"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, inputs: [x], outputs: []}\n' >"$T/m.yaml"
	yaml_error 3 "outputs: expected at least one name"
	printf 'inputs: {x: [1, 4]}\nparams:\n  x: [4]\nnodes: []\n' >"$T/m.yaml"
	yaml_error 3 "'x' is declared twice"
	printf 'inputs: {x: [1, -3]}\nnodes: []\n' >"$T/m.yaml"
	yaml_error 1 "'x': dim 1 is negative \(-3\)"
	printf 'params: {w: [N, 3]}\nnodes: []\n' >"$T/m.yaml"
	yaml_error 1 "'w': dim 0 is not an integer"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, name: a, inputs: [x], outputs: [h]}\n  - {op: Relu, name: b, inputs: [x], outputs: [h]}\n' >"$T/m.yaml"
	yaml_error 4 "node 'b': output 'h' is already produced by node 'a' \(line 3\)"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, inputs: [x], outputs: [x]}\n' >"$T/m.yaml"
	yaml_error 3 "node 'x': output 'x' is an input, a param or a constant"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, inputs: [x], outputs: [y$i]}\n' >"$T/m.yaml"
	yaml_error 3 "'y\\\$i': \\\$i outside a repeated block"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - repeat: 2\n    nodes:\n      - {op: Relu, inputs: [$in], outputs: [y$i]}\n' >"$T/m.yaml"
	yaml_error 5 "'\\\$in': \\\$in outside a repeated block with that key"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - repeat: 2\n    input: x\n    nodes:\n      - {op: Relu, inputs: [$in], outputs: [y$j]}\n' >"$T/m.yaml"
	yaml_error 6 "'y\\\$j': unknown placeholder '\\\$j' \(expected \\\$i, \\\$in or \\\$out\)"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - repeat: 0\n    nodes: []\n' >"$T/m.yaml"
	yaml_error 3 "repeat: 0 copies of 0 nodes: expected 1 or more"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - repeat: 2\n    nodes:\n      - repeat: 2\n        nodes: []\n' >"$T/m.yaml"
	yaml_error 5 "a repeated block inside a repeated block"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Pad, inputs: [x], outputs: [y], attrs: {pads: [1, a]}}\n' >"$T/m.yaml"
	yaml_error 3 "attribute 'pads': a list must hold numbers only"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, inputs: [x], outputs: [y]}\noutputs: [z]\n' >"$T/m.yaml"
	yaml_error 4 "output 'z' is no tensor of the model"
	printf 'inputs: {x: [1, 4]}\nconstants: {c: {a: 1}}\nnodes: []\n' >"$T/m.yaml"
	yaml_error 2 "'c': expected a number or a list of at most 64"
	printf 'inputs: {x: [1, 4]}\nconstants: {c: [1, two]}\nnodes: []\n' >"$T/m.yaml"
	yaml_error 2 "c: expected a finite number, found 'two'"
	# errors found by shape inference carry the node's line too
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Relu, name: r, inputs: [x], outputs: [y]}\n  - {op: MatMul, name: mm, inputs: [y, ghost], outputs: [z]}\n' >"$T/m.yaml"
	yaml_error 4 "node 'mm' \(MatMul\): input 'ghost' is never produced"
	printf 'inputs: {x: [1, 3, 8, 8]}\nparams: {w: [4, 2, 3, 3]}\nnodes:\n  - {op: Conv, name: conv, inputs: [x, w], outputs: [y]}\n' >"$T/m.yaml"
	yaml_error 4 "node 'conv' \(Conv\): input channels 3 are not weight channels 2 x group 1"
	printf 'inputs: {x: [2, 3]}\nparams: {w: [4, 3]}\nnodes:\n  - {op: Add, name: add, inputs: [x, w], outputs: [y]}\n' >"$T/m.yaml"
	yaml_error 4 "node 'add' \(Add\): shapes \(2,3\) and \(4,3\) \('w'\) cannot broadcast"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Add, name: first, inputs: [x, b], outputs: [a]}\n  - {op: Relu, name: second, inputs: [a], outputs: [b]}\n' >"$T/m.yaml"
	yaml_error 3 "the graph has a cycle through node 'first' \(Add\)"
	printf 'inputs: {x: [1, 4]}\nnodes:\n  - {op: Frobnicate, name: f, inputs: [x], outputs: [y]}\n' >"$T/m.yaml"
	yaml_error 3 "node 'f' \(Frobnicate\): no shape rule for this op"
	run "$BIN/$G" "$T/missing.yaml"
	assert_error 1 "$G" "missing.yaml: cannot open"
	printf '' >"$T/empty.yml"
	run "$BIN/$G" "$T/empty.yml"
	assert_error 1 "$G" "empty.yml: empty document"
	assert_only_files "$T" empty.yml m.yaml
}

@test "an opset the shape rules do not know is refused, YAML (file:line) and ONNX alike" {
	printf 'opset: 5\ninputs:\n  x: [2, 3]\nnodes:\n  - {op: Relu, inputs: [x], outputs: [y]}\noutputs: [y]\n' >"$T/m.yaml"
	yaml_error 1 "opset 5: graph-partition reads ONNX opsets 10 to 21"
	sed -i 's/opset: 5/opset: 22/' "$T/m.yaml"
	yaml_error 1 "opset 22: graph-partition reads ONNX opsets 10 to 21"
	$PY - "$T" <<'PY'
import sys
from onnx import TensorProto, helper as h, save
g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                 [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                 [h.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
for opset in (9, 22, 17):
    save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)]), f"{sys.argv[1]}/o{opset}.onnx")
PY
	for opset in 9 22; do
		run "$BIN/$G" "$T/o$opset.onnx" -f json -o "$T/out.json"
		assert_error 1 "$G" "o$opset.onnx: opset $opset: graph-partition reads ONNX opsets 10 to 21"
		[ ! -e "$T/out.json" ]
	done
	"$BIN/$G" "$T/o17.onnx" -f json -o "$T/out.json"
}
