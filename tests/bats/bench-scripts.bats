#!/usr/bin/env bats
# The GPU benchmark scripts' parts that run without a GPU: the commands
# scripts/bench-sample.sh gives nvidia-smi, with a fake one on PATH.
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
