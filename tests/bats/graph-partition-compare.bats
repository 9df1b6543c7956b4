#!/usr/bin/env bats
# graph-partition: several models compared (table, CSV, JSON), constant ops
# hidden unless --all-ops, model-local ONNX functions inlined.
load helpers

G=graph-partition
MODELS=/work/shared/models

@test "several models: one comparison whose numbers are each model's own report's" {
	"$BIN/$G" "$MODELS/resnet18.onnx" "$MODELS/mobilenet_v2.onnx" -f json -o "$T/c.json"
	"$BIN/$G" "$MODELS/resnet18.onnx" "$MODELS/mobilenet_v2.onnx" -f csv -o "$T/c.csv"
	"$BIN/$G" "$MODELS/resnet18.onnx" "$MODELS/mobilenet_v2.onnx" -o "$T/c.txt"
	for m in resnet18 mobilenet_v2; do
		"$BIN/$G" "$MODELS/$m.onnx" -f json -o "$T/$m.json"
	done
	$PY - "$T" "$MODELS" <<'PY'
import csv, json, sys
t, models = sys.argv[1], sys.argv[2]
rows = json.load(open(f"{t}/c.json"))
table = {l.split()[0]: l.split()[1:] for l in open(f"{t}/c.txt")}
assert [r["model"] for r in rows] == [f"{models}/resnet18.onnx", f"{models}/mobilenet_v2.onnx"]
assert table["model"] == [r["model"] for r in rows]
for r, c, name in zip(rows, csv.DictReader(open(f"{t}/c.csv")), ["resnet18", "mobilenet_v2"]):
    rep = json.load(open(f"{t}/{name}.json"))
    s = rep["summary"]
    for k in ["total_flops", "matmul_flops", "params", "kernels", "stages", "max_parallel_ops",
              "critical_path_ops"]:
        assert r[k] == s[k], (name, k)
    assert r["ops"] == len(rep["ops"])
    assert r["weight_mb"] == s["params"] * 4 / 1e6
    assert abs(r["intensity"] - s["total_flops"] / s["memory_bytes"]) < 1e-12 * r["intensity"]
    # the same units (microseconds) in the comparison and the report: the same numbers
    assert r["roofline_time_us"] == s["roofline_time_us"]
    assert r["critical_path_time_us"] == s["critical_path_time_us"]
    shares = {k[:-6]: v for k, v in r.items() if k.endswith("_share")}
    assert set(shares) == set(s["bottlenecks"]) - {"none"}, shares
    for cls, v in shares.items():
        assert v == s["bottlenecks"][cls] / s["kernels"], (name, cls)
    # CSV: the same columns and numbers, shortest round-trip text
    assert list(c) == list(r), list(c)
    for k, v in r.items():
        assert (c[k] if k == "model" else json.loads(c[k])) == v, (k, c[k], v)
    # the table: the same numbers, 3 decimals
    col = rows.index(r)
    for k, v in r.items():
        if k != "model":
            assert abs(float(table[k][col]) - v) <= 5e-4, (k, table[k][col], v)
print("ok")
PY
}

@test "peak activation: by hand on resnet18 and the local-function model; with --batch and --dtype" {
	peak() { "$BIN/$G" --compare "$@" -f json | $PY -c "import json, sys; print(json.load(sys.stdin)[0]['peak_activation_mb'])"; }
	# the input, conv1's output and relu's, while relu runs (3x224x224 + 2 x 64x112x112)
	[ "$(peak "$MODELS/resnet18.onnx")" = "$($PY -c "print((3*224*224 + 2*64*112*112) * 4 / 1e6)")" ]
	[ "$(peak "$MODELS/resnet18.onnx" -b 8 --dtype fp16)" = "$($PY -c "print(8 * (3*224*224 + 2*64*112*112) * 2 / 1e6)")" ]
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/f.onnx" functions
	# input (held), a conv output and its relu's: 3 x 8x16x16 floats
	[ "$(peak "$T/f.onnx")" = "$($PY -c "print(3 * 8*16*16 * 4 / 1e6)")" ]
}

@test "batch to saturate: latency-bound one batch below, not at it (per-op roofline times summed)" {
	for m in resnet18 mobilenet_v2; do
		b=$("$BIN/$G" "$MODELS/$m.onnx" --compare -f csv | $PY -c "import csv, sys; print(next(csv.DictReader(sys.stdin))['batch_to_saturate'])")
		[ "$b" -gt 1 ]
		for at in $((b - 1)):True $b:False; do
			"$BIN/$G" "$MODELS/$m.onnx" -b "${at%:*}" -f json -o "$T/r.json"
			[ "$($PY -c "
import json
j = json.load(open('$T/r.json'))
overhead = j['summary']['kernels'] * j['hardware']['launch_overhead_us']
work = sum(o['time_us'] for o in j['ops']) - overhead
print(overhead > work)")" = "${at#*:}" ]
		done
	done
	# a slower GPU saturates at a smaller batch
	a100=$("$BIN/$G" "$MODELS/resnet18.onnx" --compare -f csv --hardware "$REPO/configs/hardware/a100.yaml" | $PY -c "import csv, sys; print(next(csv.DictReader(sys.stdin))['batch_to_saturate'])")
	[ "$a100" -le "$b" ]
}

@test "batch to saturate: none when --input-shape fixes the batch ('-', empty, null)" {
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T"
	run "$BIN/$G" "$T/mlp.onnx" --compare --input-shape x=1x784
	[ "$status" -eq 0 ]
	[[ $output == *"batch_to_saturate"*" -"* ]]
	"$BIN/$G" "$T/mlp.onnx" --compare --input-shape x=1x784 -f csv -o "$T/m.csv"
	[ "$($PY -c "import csv; print(repr(next(csv.DictReader(open('$T/m.csv')))['batch_to_saturate']))")" = "''" ]
	"$BIN/$G" "$T/mlp.onnx" --compare --input-shape x=1x784 -f json -o "$T/m.json"
	grep -q '"batch_to_saturate": null}' "$T/m.json"
}

@test "constant ops: hidden from the table and DOT, listed with --all-ops; JSON keeps them" {
	"$BIN/$G" "$MODELS/resnet18.onnx" -o "$T/t.txt"
	"$BIN/$G" "$MODELS/resnet18.onnx" --all-ops -o "$T/all.txt"
	rows() { sed '/^$/q' "$1" | grep -c . ; }
	# resnet18's 16 Identity ops alias initializers: stage -1
	[ "$(rows "$T/t.txt")" = $((1 + 49)) ]
	[ "$(rows "$T/all.txt")" = $((1 + 65)) ]
	! sed '/^$/q' "$T/t.txt" | grep -q "^Identity_"
	grep -q "^constant_ops  16 (not listed above; --all-ops lists them)$" "$T/t.txt"
	grep -q "^constant_ops  16$" "$T/all.txt"
	"$BIN/$G" "$MODELS/resnet18.onnx" -f dot -o "$T/r.dot"
	[ "$(grep -c '^  n[0-9]* \[label=' "$T/r.dot")" = 49 ]
	! grep -q 'Identity' "$T/r.dot"
	"$BIN/$G" "$MODELS/resnet18.onnx" -f json -o "$T/r.json"
	[ "$($PY -c "import json; j = json.load(open('$T/r.json')); print(len(j['ops']), sum(o['stage'] < 0 for o in j['ops']), j['summary']['constant_ops'])")" = "65 16 16" ]
	# shape arithmetic: the vision-transformer block's Shape ops
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T"
	"$BIN/$G" "$T/vit_block.onnx" -f json -o "$T/v.json"
	n=$($PY -c "import json; print(json.load(open('$T/v.json'))['summary']['constant_ops'])")
	[ "$n" -gt 0 ]
	"$BIN/$G" "$T/vit_block.onnx" -o "$T/v.txt"
	[ "$(rows "$T/v.txt")" = $((1 + 27 - n)) ]
}

@test "ONNX local functions: inlined, nested, attribute references resolved, named under the caller" {
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/f.onnx" functions
	"$BIN/$G" "$T/f.onnx" -f json -o "$T/f.json"
	$PY - "$T/f.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
assert [(o["name"], o["op_type"]) for o in ops] == [
    ("pair/first/conv", "Conv"), ("pair/first/act", "Relu"),
    ("pair/second/conv", "Conv"), ("pair/second/act", "Relu")], ops
# the first block's group is Pair's groups=4 through two references; the second's g=1
assert [o["groups"] for o in ops] == [4, 1, 1, 1]
assert ops[0]["flops"] == 2 * 8 * 16 * 16 * (8 // 4) * 9
assert ops[2]["flops"] == 2 * 8 * 16 * 16 * 8 * 9
assert [o["stage"] for o in ops] == [0, 1, 2, 3]
# a function's own values under its caller's name; formal ones the caller's, through every level
assert ops[1]["inputs"] == ["pair/first/c"] and ops[3]["outputs"] == ["y"]
assert ops[0]["inputs"] == ["x", "w1"] and ops[2]["inputs"] == ["pair/h", "w2"]
assert ops[1]["outputs"] == ["pair/h"]
PY
}

@test "a function calling itself or expanding past 2^20 nodes, a bad model among several: one line, exit 1, no output" {
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/r.onnx" recursive_function
	run "$BIN/$G" "$T/r.onnx" -o "$T/out"
	assert_error 1 "$G" "r.onnx: node 'pair/first(/act){15}': function 'ConvBlock' nested more than 16 deep \(a function calling itself\)$"
	$PY "$REPO/tests/bats/ref/onnx_models.py" "$T/e.onnx" exploding_functions
	run "$BIN/$G" "$T/e.onnx" -o "$T/out"
	assert_error 1 "$G" "e.onnx: node 'top(/c[0-7])+(/relu)?': model-local functions expand to more than 1048576 nodes$"
	rm "$T/e.onnx"
	printf 'junk' > "$T/bad.onnx"
	run "$BIN/$G" "$MODELS/resnet18.onnx" "$T/bad.onnx" -f csv -o "$T/out"
	assert_error 1 "$G" "bad.onnx: "
	assert_only_files "$T" r.onnx bad.onnx
}
