#!/usr/bin/env bash
# Runs each libFuzzer target (build/fuzz/fuzz_NAME) for FUZZ_SECONDS (default
# 300) on a scratch copy of its seed corpus (tests/fuzz/corpus/NAME), so the
# committed seeds never grow. FUZZ_JOBS targets run at once (default: the
# number of cores, so each gets a whole core for its time). Crash, leak and
# timeout inputs are kept in build/fuzz/artifacts/NAME/ and fail the run.
# Ends with "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-300}
jobs=${FUZZ_JOBS:-$(nproc)}
results=$(mktemp -d)

fuzz_one() { # binary
	local bin=$1 name work artifacts
	name=$(basename "$bin")
	name=${name#fuzz_}
	work=$(mktemp -d)
	[ -d "$here/corpus/$name" ] && cp -r "$here/corpus/$name/." "$work/"
	artifacts=$(cd "$(dirname "$bin")" && pwd)/artifacts/$name/
	mkdir -p "$artifacts"
	if "$bin" -max_total_time="$seconds" -timeout=10 -artifact_prefix="$artifacts" "$work" \
		>"$work.log" 2>&1; then
		echo "ok - fuzz $name ${seconds}s: $(grep -o 'Done [0-9]* runs.*' "$work.log")" >"$results/$name"
	else
		{
			grep -E 'ERROR|SUMMARY|Test unit written' "$work.log" | head -5 | sed 's/^/# /'
			echo "not ok - fuzz $name: see $artifacts"
		} >"$results/$name"
	fi
	rm -rf "$work" "$work.log"
}

echo "# fuzzing $# targets for ${seconds}s each, $jobs at a time"
running=0
for bin in "$@"; do
	fuzz_one "$bin" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
cat "$results"/*
passed=$(cat "$results"/* | grep -c '^ok ')
failed=$(cat "$results"/* | grep -c '^not ok ')
rm -rf "$results"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -eq $# ]
