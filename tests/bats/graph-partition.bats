#!/usr/bin/env bats
# graph-partition: the shipped models' numbers, every option, every error path.
load helpers

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
	# patch conv, qkv, q.kT, attention.v, head
	want=$((2 * 2 * 64 * 4 * 4 * 3 * 64 + 2 * 2 * 17 * 192 * 64 + 2 * 2 * 2 * 17 * 17 * 64 + 2 * 2 * 10 * 64))
	[ "$(json_get "$T/v.json" "j['summary']['matmul_flops']")" = "$want" ]
}

@test "stages and critical paths: checked against a Python recomputation" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/r.json"
	run $PY "$REPO/tests/bats/ref/stages.py" "$MODELS/resnet18.onnx" "$T/r.json"
	[ "$status" -eq 0 ]
	[[ $output == "stages=46 max_parallel_ops=2 critical_path_ops=46 critical_path_flops="* ]]
	# the residual blocks with a downsampling conv: two convs in one stage, three times
	[ "$(json_get "$T/r.json" "sum(1 for s in set(o['stage'] for o in j['ops']) if sum(o['op_type'] == 'Conv' and o['stage'] == s for o in j['ops']) == 2)")" = 3 ]
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
	"$BIN/$G" "$MODELS/resnet18.onnx" --format csv -o "$T/r.csv"
	$PY -c "
import csv, sys
rows = list(csv.DictReader(open('$T/r.csv')))
assert len(rows) == 65, len(rows)
assert sum(int(r['flops']) for r in rows if r['class'] == 'matmul') == 3628146688
"
	run "$BIN/$G" "$MODELS/resnet18.onnx" --format yaml
	assert_error 2 "$G" "--format: 'yaml' is not table, json, csv or dot"
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
	[[ $output == *"load: "*" s ("*" bytes of tensor data left unread), analysis: "*" s, report: "* ]]
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

@test "usage errors: no model, two models" {
	run "$BIN/$G"
	assert_error 2 "$G" "no MODEL given"
	run "$BIN/$G" a.onnx b.onnx
	assert_error 2 "$G" "unexpected argument 'b.onnx'"
}
