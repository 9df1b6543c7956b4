#!/usr/bin/env bats
# The GPU benchmark scripts' parts that run without a GPU: the commands
# scripts/bench-sample.sh gives nvidia-smi, with a fake one on PATH, and the
# inputs scripts/bench-sample-torch.py draws, with a fake torch module.
load helpers

# A fake nvidia-smi that writes its arguments to $T/smi.args, and a fake
# build/dev whose first probe waits for them (up to 10 s) and fails, ending
# the script there.
fake_gpu_tools() {
	mkdir -p "$T/path" "$T/dev"
	cat >"$T/path/nvidia-smi" <<EOF
#!/bin/sh
echo "\$@" >"$T/smi.args.tmp" && mv "$T/smi.args.tmp" "$T/smi.args"
EOF
	cat >"$T/dev/sample_ops_time" <<EOF
#!/bin/sh
for i in \$(seq 100); do [ -e "$T/smi.args" ] && exit 1; sleep 0.1; done
exit 1
EOF
	chmod +x "$T/path/nvidia-smi" "$T/dev/sample_ops_time"
}

# smi_args [CUDA_VISIBLE_DEVICES]: bench-sample.sh run until its first probe,
# the fake nvidia-smi's arguments in $output.
smi_args() {
	local visible=(-u CUDA_VISIBLE_DEVICES)
	[ $# -eq 0 ] || visible=(CUDA_VISIBLE_DEVICES="$1")
	rm -f "$T/smi.args"
	cd "$REPO"
	run env "${visible[@]}" PATH="$T/path:$PATH" SPKIT_DEV="$T/dev" \
		SPKIT_BENCH_DIR="$T/bench" scripts/bench-sample.sh
	[ "$status" -ne 0 ]
	output=$(cat "$T/smi.args")
}

@test "bench-sample.sh: nvidia-smi watches the GPU the run uses, the first of CUDA_VISIBLE_DEVICES (0 without)" {
	fake_gpu_tools
	smi_args "2,3"
	[[ " $output " == *" -i 2 "* ]]
	[[ $output == *"--query-gpu="* ]]
	smi_args "GPU-8c2f1e4a-0000-1111-2222-333344445555"
	[[ " $output " == *" -i GPU-8c2f1e4a-0000-1111-2222-333344445555 "* ]]
	smi_args
	[[ " $output " == *" -i 0 "* ]]
}

# torch_draws OP INPUTS: the random draws bench-sample-torch.py's make()
# asks of a fake torch for OP at the small shape, fp16, --inputs INPUTS, one
# "function:dtype" a draw.
torch_draws() {
	mkdir -p "$T/fake/torch/nn"
	cat >"$T/fake/torch/__init__.py" <<'EOF'
"""Just enough of torch for make(): tensors that absorb every operation,
and the random draws recorded."""
draws = []
float16, float32 = "float16", "float32"


class Tensor:
    def __getattr__(self, name):
        return lambda *a, **k: self

    def __call__(self, *a, **k):
        return self

    def _op(self, *a):
        return self
    __mul__ = __rmul__ = __add__ = __radd__ = __sub__ = __rsub__ = __truediv__ = _op
    __getitem__ = _op


def _draw(name):
    def draw(*shape, dtype=None, **k):
        draws.append(f"{name}:{dtype}")
        return Tensor()
    return draw


rand, randn, randint = _draw("rand"), _draw("randn"), _draw("randint")


class autograd:
    class Function:
        pass


def __getattr__(name):
    return Tensor()
EOF
	echo 'def __getattr__(name): return lambda *a, **k: None' >"$T/fake/torch/nn/__init__.py"
	cp "$T/fake/torch/nn/__init__.py" "$T/fake/torch/nn/functional.py"
	run "$PY" - "$REPO/scripts/bench-sample-torch.py" "$1" "$2" <<EOF
import importlib.util, sys
sys.path.insert(0, "$T/fake")
import torch
spec = importlib.util.spec_from_file_location("bench", sys.argv[1])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
bench.INPUTS = sys.argv[3]
bench.make(sys.argv[2], bench.SMALL, torch.float16)
print(" ".join(torch.draws))
EOF
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "bench-sample-torch.py: flash_atten's q, k, v and gradient drawn as --inputs says, as the other operators'" {
	for op in flash_atten flash_atten_causal layernorm; do
		# signed: uniform fp32 in [0, 1), scaled to [-1, 1) and cast
		torch_draws $op signed
		[ -n "$output" ]
		[ "$(tr ' ' '\n' <<<"$output" | sort -u)" = "rand:float32" ]
		torch_draws $op unsigned
		[ "$(tr ' ' '\n' <<<"$output" | sort -u)" = "rand:float16" ]
	done
	torch_draws flash_atten signed
	[ "$output" = "rand:float32 rand:float32 rand:float32 rand:float32" ]
}
