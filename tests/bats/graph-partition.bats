#!/usr/bin/env bats
# graph-partition: the shipped models' numbers, every option, every error path.
load helpers
bats_require_minimum_version 1.5.0

G=graph-partition
MODELS=/work/shared/models

models() { # the small test models, into $T
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T"
}

json_get() { # FILE EXPR: a Python expression over the report j
	$PY -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"
}

@test "--help lists every option and an example; --version" {
	run "$BIN/$G" --help
	[ "$status" -eq 0 ]
	[[ $output == *"Usage: graph-partition"* ]]
	[[ $output == *"Example:"* ]]
	run "$BIN/$G" --version
	[[ $output =~ ^graph-partition\ \(spkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "resnet18: matmul FLOPs and parameters equal torch's counts (H200.md)" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/r.json"
	[ "$(json_get "$T/r.json" "j['summary']['matmul_flops']")" = 3628146688 ]
	[ "$(json_get "$T/r.json" "j['summary']['params']")" = 11684712 ]
	[ "$(json_get "$T/r.json" "j['summary']['macs']")" = 1814073344 ]
	[ "$(json_get "$T/r.json" "len(j['ops'])")" = 65 ]
	# the totals are the sums of the rows
	[ "$(json_get "$T/r.json" "sum(o['flops'] for o in j['ops']) == j['summary']['total_flops']")" = True ]
	[ "$(json_get "$T/r.json" "sum(o['input_bytes'] + o['output_bytes'] + o['weight_bytes'] for o in j['ops']) == j['summary']['memory_bytes']")" = True ]
	[ "$(json_get "$T/r.json" "[o['output_shape'] for o in j['ops'] if o['op_type'] == 'Gemm']")" = "[[1, 1000]]" ]
}

@test "mobilenet_v2: matmul FLOPs and parameters equal torch's counts (H200.md)" {
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -f json -o "$T/m.json"
	[ "$(json_get "$T/m.json" "j['summary']['matmul_flops']")" = 601548544 ]
	[ "$(json_get "$T/m.json" "j['summary']['params']")" = 3487816 ]
	[ "$(json_get "$T/m.json" "len(j['ops'])")" = 209 ]
}

@test "every output shape agrees with onnx.shape_inference on the shipped models" {
	for m in resnet18:65 mobilenet_v2:209; do
		"$BIN/$G" "$MODELS/${m%:*}.onnx" -f json -o "$T/r.json"
		[ "$($PY "$REPO/tests/bats/ref/check_shapes.py" "$MODELS/${m%:*}.onnx" "$T/r.json")" = "${m#*:}" ]
	done
}

@test "a dynamic vision-transformer block: shapes agree with onnx, FLOPs by hand" {
	models
	for m in vit_block:27 conv_group_dilation:2 matmul_broadcast:2 pools:5; do
		"$BIN/$G" "$T/${m%:*}.onnx" -f json -o "$T/r.json"
		[ "$($PY "$REPO/tests/bats/ref/check_shapes.py" "$T/${m%:*}.onnx" "$T/r.json")" = "${m#*:}" ]
	done
	"$BIN/$G" "$T/vit_block.onnx" -f json -o "$T/v.json"
	# patch conv, qkv, q.kT, attention.v, head (the Shape ops are constants: no cost)
	want=$((2 * 2 * 64 * 4 * 4 * 3 * 64 + 2 * 2 * 17 * 192 * 64 + 2 * 2 * 2 * 17 * 17 * 64 + 2 * 2 * 10 * 64))
	[ "$(json_get "$T/v.json" "j['summary']['matmul_flops']")" = "$want" ]
}

@test "Resize, ConvTranspose, Pad, TopK, Tile, Einsum, OneHot ...: shapes agree with onnx, the rest by hand" {
	models
	"$BIN/$G" "$T/ops_misc.onnx" -f json -o "$T/m.json"
	# onnx 1.12 infers 26 of the 30; its data propagation stops at the float
	# sizes, Einsum, OneHot's depth and Mod, so those four are checked by hand
	[ "$($PY "$REPO/tests/bats/ref/check_shapes.py" "$T/ops_misc.onnx" "$T/m.json")" = 26 ]
	shape_of() { json_get "$T/m.json" "[o['output_shape'] for o in j['ops'] if o['name'] == '$1'][0]"; }
	[ "$(shape_of resize_dynamic)" = "[1, 3, 14, 18]" ] # (7, 9) x 2.0 through Cast and Mul
	[ "$(shape_of einsum)" = "[2, 4, 5, 6]" ]
	[ "$(shape_of onehot)" = "[3, 2, 10]" ]
	[ "$(shape_of q_reshape)" = "[2, 160]" ] # 8 mod 6 = 2 rows
	flops_of() { json_get "$T/m.json" "[o['flops'] for o in j['ops'] if o['name'] == '$1'][0]"; }
	[ "$(flops_of einsum)" = $((2 * 2 * 4 * 5 * 6 * 8)) ]
	[ "$(flops_of resize_sizes)" = $((2 * 4 * 3 * 10 * 12)) ]  # linear on 2 axes: 4 taps
	[ "$(flops_of resize_scales)" = 0 ]                         # nearest
	[ "$(flops_of deconv_same)" = $((2 * 3 * 7 * 9 * 4 * 9)) ] # 2*B*Cin*Hin*Win*(Cout/g)*K
	[ "$(flops_of topk)" = $((3 * 7 * 9)) ]
	# opset 18: Pad's axes input, Resize's axes and keep_aspect_ratio_policy
	"$BIN/$G" "$T/opset18.onnx" -f json -o "$T/o.json"
	[ "$(json_get "$T/o.json" "[o['output_shape'] for o in j['ops']]")" = \
	  "[[1, 8, 6, 12], [1, 2, 7, 9], [1, 2, 6, 4]]" ]
}

@test "stages and critical paths: checked against a Python recomputation" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/r.json"
	run $PY "$REPO/tests/bats/ref/stages.py" "$MODELS/resnet18.onnx" "$T/r.json"
	[ "$status" -eq 0 ]
	[[ $output == "stages=46 max_parallel_ops=2 critical_path_ops=46 critical_path_flops="* ]]
	# the residual blocks with a downsampling conv: two convs in one stage, three times
	[ "$(json_get "$T/r.json" "sum(1 for s in set(o['stage'] for o in j['ops']) if sum(o['op_type'] == 'Conv' and o['stage'] == s for o in j['ops']) == 2)")" = 3 ]
	# each downsampling conv shares its stage with the first conv of its block
	[ "$(json_get "$T/r.json" "sorted((o['name'].split('/')[2], p['name'].split('/')[-2]) for o in j['ops'] for p in j['ops'] if 'downsample' in o['name'] and o['op_type'] == 'Conv' and p['op_type'] == 'Conv' and p is not o and p['stage'] == o['stage'])")" = \
	  "[('layer2.0', 'conv1'), ('layer3.0', 'conv1'), ('layer4.0', 'conv1')]" ]
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -f json -o "$T/m.json"
	$PY "$REPO/tests/bats/ref/stages.py" "$MODELS/mobilenet_v2.onnx" "$T/m.json"
	models
	"$BIN/$G" "$T/vit_block.onnx" -f json -o "$T/v.json"
	$PY "$REPO/tests/bats/ref/stages.py" "$T/vit_block.onnx" "$T/v.json"
}

@test "table format (default) ends with the summary; csv has one row per op" {
	run "$BIN/$G" "$MODELS/resnet18.onnx"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == name*op_type*flops* ]]
	[[ $output == *"matmul_flops  3628146688"* ]]
	[[ $output == *"params        11684712"* ]]
	[[ $output == *"max_parallel_ops     2"* ]]
	[[ $output == *"op_types             Conv 20, Relu 17, Identity 16, Add 8, Flatten 1, Gemm 1, GlobalAveragePool 1, MaxPool 1"* ]]
	[[ $output == *"fusion_candidates    9"* ]]
	"$BIN/$G" "$MODELS/resnet18.onnx" --format csv -o "$T/r.csv"
	"$BIN/$G" "$MODELS/resnet18.onnx" --format json -o "$T/r.json"
	$PY -c "
import csv, json
rows = list(csv.DictReader(open('$T/r.csv')))
ops = json.load(open('$T/r.json'))['ops']
assert len(rows) == 65, len(rows)
assert sum(int(r['flops']) for r in rows if r['class'] == 'matmul') == 3628146688
assert list(rows[0]) == ['name', 'op_type', 'class', 'stage', 'output_shape', 'flops', 'macs', 'input_bytes', 'output_bytes', 'weight_bytes', 'intensity', 'threads', 'groups', 'depthwise', 'bottleneck', 'time_us', 'critical']
for r, o in zip(rows, ops):  # the same numbers as the JSON's
    assert (r['name'], int(r['threads']), r['bottleneck'], int(r['critical'])) == (o['name'], o['threads'], o['bottleneck'], int(o['critical']))
"
	run "$BIN/$G" "$MODELS/resnet18.onnx" --format yaml
	assert_error 2 "$G" "--format: 'yaml' is not one of table, json, csv, dot"
}

@test "per op: threads are output elements; depthwise and grouped convolutions flagged" {
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -f json -o "$T/m.json"
	$PY - "$T/m.json" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
for o in j["ops"]:
    want = math.prod(o["output_shape"]) if o["kernel"] and o["stage"] >= 0 else 0
    assert o["threads"] == want, o
dw = [o for o in j["ops"] if o["depthwise"]]
# MobileNet-V2: 17 depthwise 3x3 convolutions, each with as many groups as channels
assert len(dw) == 17 and all(o["op_type"] == "Conv" and o["groups"] == o["output_shape"][1] for o in dw)
assert not any(o["grouped"] for o in j["ops"])
s = j["summary"]
assert s["depthwise_ops"] == 17 and s["grouped_ops"] == 0
assert sum(s["op_types"].values()) == s["ops"] == len(j["ops"])
assert sum(s["parallelism"].values()) == s["kernels"]
assert abs(s["avg_threads"] - sum(o["threads"] for o in j["ops"]) / s["kernels"]) < 1e-3 * s["avg_threads"]
PY
	models
	"$BIN/$G" "$T/conv_group_dilation.onnx" -f json -o "$T/c.json"
	[ "$(json_get "$T/c.json" "(j['ops'][0]['grouped'], j['ops'][0]['groups'], j['ops'][0]['depthwise'], j['summary']['grouped_ops'])")" = "(True, 4, False, 1)" ]
	run "$BIN/$G" "$T/conv_group_dilation.onnx"
	[[ ${lines[1]} == "conv "*" g4 "* ]]
}

@test "roofline: every op's time and class recomputed, on each hardware file and both thresholds" {
	for h in default "$REPO/configs/hardware/a100.yaml" "$REPO/configs/hardware/h100.yaml"; do
		for t in ridge fixed; do
			opts=(--thresholds "$t")
			[ "$h" = default ] || opts+=(--hardware "$h")
			"$BIN/$G" "$MODELS/resnet18.onnx" -b 32 --dtype bf16 "${opts[@]}" -f json -o "$T/r.json"
			run $PY "$REPO/tests/bats/ref/roofline.py" "$T/r.json" "$h"
			[ "$status" -eq 0 ] || { echo "$output"; return 1; }
		done
	done
	# at batch 32 in bf16 on the H200 the convolutions are compute-bound, the rest
	# memory- or latency-bound; with the fixed cut-offs, their four classes
	"$BIN/$G" "$MODELS/resnet18.onnx" -b 32 --dtype bf16 -f json -o "$T/r.json"
	[ "$($PY "$REPO/tests/bats/ref/roofline.py" "$T/r.json" default)" = "65 compute_bound latency_bound memory_bound none" ]
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -b 16 --thresholds fixed -f json -o "$T/m.json"
	[ "$($PY "$REPO/tests/bats/ref/roofline.py" "$T/m.json" default)" = "209 balanced bandwidth_bound compute_bound memory_bound none" ]
	[ "$(json_get "$T/m.json" "sorted(j['summary']['bottlenecks'])")" = "['balanced', 'bandwidth_bound', 'compute_bound', 'memory_bound', 'none']" ]
	run "$BIN/$G" "$MODELS/resnet18.onnx" --thresholds cutoffs
	assert_error 2 "$G" "--thresholds: 'cutoffs' is not one of ridge, fixed, seed"
	run "$BIN/$G" "$MODELS/resnet18.onnx" --dtype fp64
	assert_error 2 "$G" "--dtype: 'fp64' is not one of fp32, tf32, fp16, bf16, int8"
}

@test "--thresholds seed: the name the fixed cut-offs had first, the same report" {
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -b 16 --thresholds fixed -f json -o "$T/fixed.json"
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -b 16 --thresholds seed -f json -o "$T/seed.json"
	cmp "$T/fixed.json" "$T/seed.json"
	[ "$(json_get "$T/seed.json" "j['thresholds']")" = "fixed" ]
}

@test "--hardware: the shipped files load; the built-in default is h200.yaml's numbers" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/default.json"
	"$BIN/$G" "$MODELS/resnet18.onnx" --hardware "$REPO/configs/hardware/h200.yaml" -f json -o "$T/h200.json"
	cmp "$T/default.json" "$T/h200.json"
	"$BIN/$G" "$MODELS/resnet18.onnx" --hardware "$REPO/configs/hardware/a100.yaml" -f json -o "$T/a100.json"
	[ "$(json_get "$T/a100.json" "(j['hardware']['name'], j['hardware']['sms'], j['hardware']['bandwidth'])")" = "('NVIDIA A100 SXM4 80GB', 108, 2039000000000)" ]
	# the same model takes longer on the A100
	[ "$(json_get "$T/a100.json" "j['summary']['roofline_time_us'] > $(json_get "$T/default.json" "j['summary']['roofline_time_us']")")" = True ]
	run "$BIN/$G" "$MODELS/resnet18.onnx" --hardware "$REPO/configs/hardware/h100.yaml"
	[[ $output == *"hardware             NVIDIA H100 SXM (ridge point 20.0 FLOP/byte for matrix products at fp32"* ]]
}

@test "--hardware errors: file and line, exit 1, no output" {
	h200="$REPO/configs/hardware/h200.yaml"
	grep -v '^sms:' "$h200" >"$T/nosms.yaml"
	sed 's/^sms:/smz:/' "$h200" >"$T/typo.yaml"
	sed 's/^memory_bandwidth_gbs: .*/memory_bandwidth_gbs: -1/' "$h200" >"$T/negative.yaml"
	sed 's/^  bf16: .*/  bf16: fast/' "$h200" >"$T/word.yaml"
	sed 's/^  int8: .*/  fp8: 3957.8/' "$h200" >"$T/fp8.yaml"
	printf 'name: [unclosed
' >"$T/syntax.yaml"
	for case in "nosms.yaml:nosms.yaml:[0-9]+: missing key 'sms'" \
		"typo.yaml:typo.yaml:[0-9]+: unknown key 'smz' in a hardware file \(expected name, sms," \
		"negative.yaml:negative.yaml:[0-9]+: memory_bandwidth_gbs: expected a positive number" \
		"word.yaml:word.yaml:[0-9]+: bf16: expected a finite number, found 'fast'" \
		"fp8.yaml:fp8.yaml:[0-9]+: unknown key 'fp8' in peak_tflops" \
		"syntax.yaml:syntax.yaml:[0-9]+: syntax error" "missing.yaml:missing.yaml: cannot open"; do
		run "$BIN/$G" "$MODELS/resnet18.onnx" --hardware "$T/${case%%:*}" -o "$T/out.txt"
		assert_error 1 "$G" "${case#*:}"
		[ ! -e "$T/out.txt" ]
	done
}

@test "--format dot --all-ops: one box per op coloured by class, the edges, one rank per stage" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -f dot --all-ops -o "$T/r.dot"
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/r.json"
	$PY - "$T/r.dot" "$T/r.json" "$MODELS/resnet18.onnx" <<'PY'
import json, re, sys
import onnx
dot, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
g = onnx.load(sys.argv[3]).graph
assert dot.startswith('digraph "') and dot.rstrip().endswith("}")
colours = {"none": "#e0e0e0", "compute_bound": "#e4572e", "memory_bound": "#4e79a7",
           "latency_bound": "#f2c14e"}
boxes = re.findall(r'^  (n\d+) \[label="([^"\\]*)\\n.*fillcolor="(#[0-9a-f]+)"(, penwidth=2.5)?', dot, re.M)
assert len(boxes) == len(rep["ops"]) == len(g.node), len(boxes)
by_name = {o["name"]: o for o in rep["ops"]}
ids = {}
for node_id, name, colour, bold in boxes:
    o = by_name[name]
    assert colour == colours[o["bottleneck"]], (name, colour)
    assert bool(bold) == o["critical"], name
    ids[name] = node_id
# an edge for every input a node reads from another node
producer = {out: n.name for n in g.node for out in n.output}
want = sorted((ids[producer[i]], ids[n.name]) for n in g.node for i in n.input if i in producer)
edges = sorted(re.findall(r"^  (n\d+) -> (n\d+) \[label=", dot, re.M))
assert edges == want, (len(edges), len(want))
# a rank per stage, holding exactly that stage's ops
ranks = re.findall(r"^  \{ rank=same;((?: n\d+;)+) \}", dot, re.M)
assert len(ranks) == rep["summary"]["stages"]
for s, rank in enumerate(ranks):
    assert sorted(re.findall(r"n\d+", rank)) == sorted(ids[o["name"]] for o in rep["ops"] if o["stage"] == s)
# the legend counts the classes
for c, n in rep["summary"]["bottlenecks"].items():
    assert f'legend_{c} [label="{c}: {n}"' in dot
PY
	if command -v dot >/dev/null; then # Graphviz is not a build dependency
		dot -Tsvg "$T/r.dot" -o "$T/r.svg"
		grep -q "</svg>" "$T/r.svg"
	fi
	# names with quotes and backslashes stay inside their strings
	models
	"$BIN/$G" "$T/quoted_names.onnx" -f dot -o "$T/q.dot"
	grep -qF 'label="say \"hi\" \\ bye\n' "$T/q.dot"
}

@test "fusion candidates: Conv+BN+Relu, Gemm+act, MatMul+bias; never across a shared or output tensor" {
	models
	"$BIN/$G" "$T/fusion_cases.onnx" -f json -o "$T/f.json"
	[ "$(json_get "$T/f.json" "[(f['pattern'], f['ops'], f['saved_bytes']) for f in j['fusions']]")" = \
	  "[('Conv+BatchNormalization+Relu', ['conv1', 'bn1', 'relu1'], $((2 * 2 * 4 * 4 * 5 * 5))), ('Gemm+Sigmoid', ['gemm', 'sigmoid'], 24), ('MatMul+Add', ['matmul', 'bias'], 48)]" ]
	[ "$(json_get "$T/f.json" "j['summary']['fusion_candidates']")" = 3 ]
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/r.json"
	# the export folds BatchNorm: every Conv whose output only a Relu reads
	[ "$(json_get "$T/r.json" "(sorted(set(f['pattern'] for f in j['fusions'])), len(j['fusions']))")" = "(['Conv+Relu'], 9)" ]
	"$BIN/$G" "$MODELS/mobilenet_v2.onnx" -f json -o "$T/m.json"
	[ "$(json_get "$T/m.json" "(sorted(set(f['pattern'] for f in j['fusions'])), len(j['fusions']))")" = "(['Conv+Clip'], 35)" ]
	run "$BIN/$G" "$T/fusion_cases.onnx"
	[[ $output == *"fusion_candidates    3"*"Conv+BatchNormalization+Relu         saves         1600 bytes: conv1 bn1 relu1"* ]]
}

@test "a model's weights are never read: memory stays with the graph, not the 64 MB of data" {
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/w.onnx" weights 64
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/s.onnx" stripped 64
	[ "$(stat -c %s "$T/w.onnx")" -gt $((64 << 20)) ]
	rss() { # MODEL: graph-partition's peak RSS in KiB (from -v), the report in $T/MODEL.json
		"$BIN/$G" "$T/$1" -v -f json -o "$T/$1.json" 2>&1 |
			sed -n 's/.*peak RSS \([0-9]*\)\.\([0-9]\) MiB$/\1\2/p' | awk '{printf "%d\n", $1 * 1024 / 10}'
	}
	run "$BIN/$G" "$T/w.onnx" -v -o /dev/null
	[[ $output == *"($((16 * 4 << 20)) bytes of tensor data left unread)"* ]]
	with=$(rss w.onnx) without=$(rss s.onnx)
	echo "peak RSS with weights $with KiB, without $without KiB"
	# the same as the stripped twin's, give or take 2 MiB (not 64); under 8 MiB
	# in a plain build (a sanitizer's shadow memory adds to both)
	[ "$with" -lt $((without + 2048)) ]
	[[ $BIN == */san/* ]] || [ "$with" -lt $((8 << 10)) ]
	[ "$(json_get "$T/w.onnx.json" "(j['summary']['params'], j['summary']['matmul_flops'])")" = "($((16 << 20)), $((16 * 2 * 4 << 20)))" ]
	$PY -c "import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:]); del a['model'], b['model']; assert a == b" \
		"$T/w.onnx.json" "$T/s.onnx.json"
}

@test "conv with groups, dilation, strides and asymmetric pads" {
	models
	"$BIN/$G" "$T/conv_group_dilation.onnx" -f json -o "$T/c.json"
	[ "$(json_get "$T/c.json" "j['ops'][0]['output_shape']")" = "[2, 16, 16, 15]" ]
	# 2*B*Cout*Hout*Wout*(Cin/groups)*Kh*Kw
	[ "$(json_get "$T/c.json" "j['ops'][0]['flops']")" = $((2 * 2 * 16 * 16 * 15 * 2 * 3 * 3)) ]
	[ "$(json_get "$T/c.json" "j['ops'][1]['flops']")" = $((2 * 16 * 16 * 15)) ]
	[ "$(json_get "$T/c.json" "j['summary']['params']")" = $((16 * 2 * 9 + 16)) ]
}

@test "matmul broadcasting and softmax" {
	models
	"$BIN/$G" "$T/matmul_broadcast.onnx" -f json -o "$T/m.json"
	[ "$(json_get "$T/m.json" "j['ops'][0]['output_shape']")" = "[3, 6, 4, 7]" ]
	[ "$(json_get "$T/m.json" "j['ops'][0]['flops']")" = $((2 * 3 * 6 * 4 * 7 * 5)) ]
	[ "$(json_get "$T/m.json" "j['ops'][1]['flops']")" = $((5 * 3 * 6 * 4 * 7)) ]
}

@test "pools, flatten and an input-shape override" {
	models
	"$BIN/$G" "$T/pools.onnx" -f json -o "$T/p.json"
	[ "$(json_get "$T/p.json" "[o['output_shape'] for o in j['ops']]")" = \
	  "[[1, 8, 8, 8], [1, 8, 4, 4], [1, 8, 1, 1], [1, 8], [1, 8]]" ]
	"$BIN/$G" "$T/pools.onnx" -f json --input-shape x=2x8x31x31 --input-shape bias=1x8 -o "$T/p2.json"
	[ "$(json_get "$T/p2.json" "j['ops'][0]['output_shape']")" = "[2, 8, 16, 16]" ]
	[ "$(json_get "$T/p2.json" "j['ops'][4]['output_shape']")" = "[2, 8]" ]
}

@test "--batch scales resnet18 and fills a dynamic export's symbolic batch" {
	"$BIN/$G" "$MODELS/resnet18.onnx" --batch 4 -f json -o "$T/r4.json"
	[ "$(json_get "$T/r4.json" "j['summary']['matmul_flops']")" = $((4 * 3628146688)) ]
	[ "$(json_get "$T/r4.json" "j['summary']['params']")" = 11684712 ]
	models
	"$BIN/$G" "$T/reshape_dynamic.onnx" -b 3 -f json -o "$T/d.json"
	[ "$(json_get "$T/d.json" "[o['output_shape'] for o in j['ops'] if o['name'] in ('reshape', 'fc')]")" = "[[3, 144], [3, 10]]" ]
	run "$BIN/$G" "$T/reshape_dynamic.onnx"
	assert_error 1 "$G" "reshape_dynamic.onnx: input 'x' dim 0 is symbolic; give --batch"
	run "$BIN/$G" "$T/pools.onnx" --batch 0 -o "$T/out.json"
	assert_error 2 "$G" "--batch"
	run "$BIN/$G" "$T/pools.onnx" --batch x1 -o "$T/out.json"
	assert_error 2 "$G" "--batch"
	[ ! -e "$T/out.json" ]
}

@test "--dtype scales the byte counts, not the FLOPs" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/a.json"
	for t in fp16:2 bf16:2 int8:4; do
		"$BIN/$G" "$MODELS/resnet18.onnx" -f json --dtype "${t%:*}" -o "$T/b.json"
		[ "$(json_get "$T/b.json" "j['summary']['memory_bytes'] * ${t#*:}")" = \
		  "$(json_get "$T/a.json" "j['summary']['memory_bytes']")" ]
		[ "$(json_get "$T/b.json" "j['summary']['total_flops']")" = \
		  "$(json_get "$T/a.json" "j['summary']['total_flops']")" ]
	done
	run "$BIN/$G" "$MODELS/resnet18.onnx" --dtype fp64
	assert_error 2 "$G" "--dtype: 'fp64'"
}

@test "node and op names with a newline, escape sequences or a C1 control print escaped in the table: a row an op, nothing for the terminal" {
	models
	run --separate-stderr "$BIN/$G" "$T/hostile_names.onnx" --allow-unknown
	[ "$status" -eq 0 ]
	[[ $output$stderr != *$'\033'* ]]
	[[ $output != *$'\xc2\x9b'* ]]
	printf '%s' "$output" | iconv -f UTF-8 -t UTF-8 >/dev/null
	[[ ${lines[1]} == 'conv\nred\x1b[31m '*' Conv '* ]]
	[[ ${lines[2]} == 'relu\xc2\x9b1 '*' Relu '* ]]
	[[ ${lines[3]} == 'evil '*' Evil\x1b[2J '* ]]
	[[ $output == *'op_types             Conv 1, Evil\x1b[2J 1, Relu 1'* ]]
	[[ $output == *'bytes: conv\nred\x1b[31m relu\xc2\x9b1'* ]]
	# the other formats encode the names their own way
	run "$BIN/$G" "$T/hostile_names.onnx" --allow-unknown -f json -o "$T/h.json"
	[ "$(json_get "$T/h.json" "[o['name'] for o in j['ops']]")" = "['conv\\nred\\x1b[31m', 'relu\\x9b1', 'evil']" ]
}

@test "an unknown op is an error naming it; --allow-unknown counts it as zero with a warning" {
	models
	run "$BIN/$G" "$T/unknown_op.onnx" -o "$T/out.txt"
	assert_error 1 "$G" "unknown_op.onnx: node 'frob' \(Frobnicate\): no shape rule"
	assert_only_files "$T" $(cd "$T" && ls *.onnx)
	run "$BIN/$G" "$T/unknown_op.onnx" --allow-unknown -f json -o "$T/u.json"
	[ "$status" -eq 0 ]
	[[ $output == *"warning: "*"node 'frob' (Frobnicate): no shape rule; counted as zero"* ]]
	[ "$(json_get "$T/u.json" "[(o['class'], o['flops']) for o in j['ops']]")" = \
	  "[('elementwise', 48), ('unknown', 0), ('elementwise', 48)]" ]
	run "$BIN/$G" "$T/unknown_op.onnx" --allow-unknown -q -o "$T/u.json"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "-v prints timings; -o writes the file and nothing on stdout" {
	run "$BIN/$G" "$MODELS/resnet18.onnx" -v -o "$T/r.txt"
	[ "$status" -eq 0 ]
	[[ $output == *"resnet18.onnx: load: "*" s ("*" bytes of tensor data left unread), analysis: "*" s"* ]]
	[[ $output == *"report: "*" s"* ]]
	[[ $output == *"peak RSS "*" MiB"* ]]
	grep -q "^matmul_flops  3628146688$" "$T/r.txt"
}

@test "bad models: one line naming the file or node, exit 1, no output" {
	models
	head -c 3000 "$MODELS/mobilenet_v2.onnx" >"$T/trunc.onnx"
	printf 'name,op\nconv,Conv\n' >"$T/text.onnx"
	mkdir "$T/dir.onnx"
	for case in "missing.onnx:missing.onnx: cannot open" "dir.onnx:dir.onnx: is a directory" \
		"trunc.onnx:trunc.onnx: not an ONNX model" "text.onnx:text.onnx: not an ONNX model" \
		"cycle.onnx:cycle.onnx: the graph has a cycle through node 'first'" \
		"negative_dim.onnx:negative_dim.onnx: tensor 'w' has a negative dim -4" \
		"never_produced.onnx:node 'add' \(Add\): input 'ghost' is never produced" \
		"no_broadcast.onnx:node 'add' \(Add\): shapes \(2,3\) and \(4,3\) \('y'\) cannot broadcast"; do
		run "$BIN/$G" "$T/${case%%:*}" -f json -o "$T/out.json"
		assert_error 1 "$G" "${case#*:}"
		[ ! -e "$T/out.json" ]
	done
	assert_only_files "$T" $(cd "$T" && ls -A | grep -v '^out.json$')
}

@test "a type nested 3000 levels deep: one line naming the file, not a stack overflow" {
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/deep.onnx" deep_type 3000
	# a 1 MiB stack, where protobuf-c's unpack of those levels overflows
	run bash -c 'ulimit -s 1024 && exec "$1" "$2" -f json -o "$3"' _ "$BIN/$G" "$T/deep.onnx" "$T/out.json"
	assert_error 1 "$G" "deep.onnx: messages nested deeper than 32 \(at byte [0-9]+\)"
	[ ! -e "$T/out.json" ]
}

@test "--input-shape naming no input, or with bad dims" {
	models
	run "$BIN/$G" "$T/pools.onnx" --input-shape nope=1x8x15x15 -o "$T/out.json"
	assert_error 1 "$G" "--input-shape: .*pools.onnx has no graph input 'nope'"
	run "$BIN/$G" "$T/pools.onnx" --input-shape x=1x0x15 -o "$T/out.json"
	assert_error 2 "$G" "--input-shape: dim '0' in '1x0x15' is not a positive integer"
	run "$BIN/$G" "$T/pools.onnx" --input-shape 1x8x15x15 -o "$T/out.json"
	assert_error 2 "$G" "--input-shape: '1x8x15x15' is not NAME=DIMS"
	run "$BIN/$G" "$T/pools.onnx" --input-shape x=1x8x1x1 -o "$T/out.json"
	assert_error 1 "$G" "node 'avgpool' \(AveragePool\): spatial dim 0: input 1 \(padded 1\) is smaller than the kernel extent 2"
	[ ! -e "$T/out.json" ]
}

@test "usage errors: no model; DOT of two models" {
	run "$BIN/$G"
	assert_error 2 "$G" "no MODEL given"
	run "$BIN/$G" a.onnx b.onnx -f dot
	assert_error 2 "$G" "--format dot draws one model; a comparison is a table, csv or json"
	run "$BIN/$G" a.onnx --compare -f dot
	assert_error 2 "$G" "--format dot draws one model; a comparison is a table, csv or json"
}
