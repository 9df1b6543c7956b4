#!/usr/bin/env bats
# maxk-train: what runs without a GPU (usage, errors); the kernel
# benchmark itself runs on the GPU machine (scripts/bench-maxk.sh).
load helpers

G=maxk-train

@test "--help describes the benchmark mode and says training is not built yet" {
	run "$BIN/$G" --help
	[ "$status" -eq 0 ]
	[[ $output == *"--bench-kernels"* ]]
	[[ $output == *"training"*"not built yet"* ]]
}

@test "usage errors exit 2" {
	run "$BIN/$G"
	assert_error 2 $G "training is not built yet"
	run "$BIN/$G" --bench-kernels
	assert_error 2 $G "no GRAPH given"
	run "$BIN/$G" --bench-kernels g.npz --synthetic flickr_like
	assert_error 2 $G "not both"
	run "$BIN/$G" --bench-kernels g.npz extra
	assert_error 2 $G "unexpected argument 'extra'"
	run "$BIN/$G" --bench-kernels g.npz --maxk 0
	assert_error 2 $G "--maxk"
	run "$BIN/$G" --bench-kernels g.npz --hidden 64 --maxk 65
	assert_error 2 $G "--maxk 65 is larger than --hidden 64"
	run "$BIN/$G" --bench-kernels g.npz --hidden 2048
	assert_error 2 $G "--hidden"
	run "$BIN/$G" --bench-kernels g.npz --append
	assert_error 2 $G "--append needs -o FILE"
	run "$BIN/$G" --bench-kernels g.npz --reps 0
	assert_error 2 $G "--reps"
}

@test "without a usable GPU: one line saying why, exit 1, no output" {
	if "$BIN/$G" --bench-kernels --synthetic powerlaw:nodes=10,edges=20 --reps 1 >/dev/null 2>&1; then
		skip "a GPU is usable here"
	fi
	run "$BIN/$G" --bench-kernels --synthetic flickr_like -o "$T/out.csv"
	assert_error 1 $G "--bench-kernels: no usable CUDA device"
	assert_only_files "$T"
}
