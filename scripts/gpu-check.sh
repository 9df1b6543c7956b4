#!/usr/bin/env bash
# The one command for a lent GPU machine: the GPU tests, then every
# scripts/bench-*.sh, then a summary table, printed last.
#
#   scripts/gpu-check.sh              build (make CUDA_ARCH=90 all gpu-tests), then run
#   scripts/gpu-check.sh --prebuilt   run what bin/ and build/tests/ already hold
#
# The GPU machine's image has nvcc and the CUDA libraries but not the libyaml,
# libcsv and protobuf-c headers, so the usual flow builds on the development
# machine with `make -j2 CUDA_ARCH=90 all gpu-tests`, carries bin/ and build/tests/,
# and runs `scripts/gpu-check.sh --prebuilt` on the GPU machine.
#
# Full logs go to $OUT when it is set (the device tool brings that folder
# back; at most 8 files), else to build/gpu-check/. A benchmark script is run
# with SPKIT_BIN (the programs) and SPKIT_BENCH_DIR (where it writes its CSV)
# set; its lines that start with "SUMMARY " are repeated in the table.
# Exit status: 0 all passed, 1 a test or benchmark failed, 2 no usable build.
set -u
cd "$(dirname "$0")/.." || exit 2

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
prebuilt=0
case $# in
0) ;;
1) case $1 in
	--prebuilt) prebuilt=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "gpu-check: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac ;;
*) echo "gpu-check: at most one argument (--prebuilt)" >&2; exit 2 ;;
esac

logs=${OUT:-build/gpu-check}
mkdir -p "$logs" || { echo "gpu-check: cannot create the log folder $logs" >&2; exit 2; }
logs=$(cd "$logs" && pwd)
# Programs built here link the CUDA libraries dynamically.
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
[ -d "$cuda_lib" ] && export LD_LIBRARY_PATH="$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if [ "$prebuilt" -eq 0 ]; then
	echo "== build: make -j$(nproc) CUDA_ARCH=90 all gpu-tests"
	if ! make -j"$(nproc)" CUDA_ARCH=90 all gpu-tests >"$logs/build.log" 2>&1; then
		tail -n 30 "$logs/build.log"
		echo "gpu-check: the build failed (log: $logs/build.log); on a machine without the" \
			"format libraries' headers, build elsewhere and use --prebuilt" >&2
		exit 2
	fi
fi

tests=()
for t in build/tests/gpu_*; do
	[ -f "$t" ] && [ -x "$t" ] && tests+=("$t")
done
if [ ${#tests[@]} -eq 0 ]; then
	echo "gpu-check: no GPU test binaries in build/tests/ (gpu_*): build them with" \
		"'make -j2 CUDA_ARCH=90 all gpu-tests' and carry bin/ and build/tests/" >&2
	exit 2
fi

echo "== GPU"
gpu_name=
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu \
		--format=csv,noheader || echo "gpu-check: nvidia-smi failed"
	gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
else
	echo "gpu-check: nvidia-smi not found"
fi

echo "== GPU tests: ${tests[*]}"
SPKIT_SKIP_BATS=1 SPKIT_BIN="$PWD/bin" tests/run.sh "${tests[@]}" 2>&1 | tee "$logs/gpu-tests.log"
tests_status=${PIPESTATUS[0]}
tally=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/gpu-tests.log" | tail -n 1)
copy=$(sed -n 's/^# copy bandwidth: //p' "$logs/gpu-tests.log" | tail -n 1)
[ -n "$gpu_name" ] || gpu_name=$(sed -n 's/^# device 0: \([^,]*\),.*/\1/p' "$logs/gpu-tests.log" | head -n 1)

bench_rows=()
bench_failed=0
for b in scripts/bench-*.sh; do
	[ -f "$b" ] || continue
	name=$(basename "$b" .sh)
	echo "== $name"
	SPKIT_BIN="$PWD/bin" SPKIT_BENCH_DIR="$logs" "$b" 2>&1 | tee "$logs/$name.log"
	status=${PIPESTATUS[0]}
	if [ "$status" -ne 0 ]; then
		bench_failed=$((bench_failed + 1))
		bench_rows+=("$name|FAILED (exit $status, log $logs/$name.log)")
	fi
	while IFS= read -r line; do
		bench_rows+=("$name|$line")
	done < <(sed -n 's/^SUMMARY //p' "$logs/$name.log")
	[ "$status" -eq 0 ] && ! grep -q '^SUMMARY ' "$logs/$name.log" && bench_rows+=("$name|ok")
done

ok=1
[ "$tests_status" -eq 0 ] && [ -n "$tally" ] || ok=0
[ "$bench_failed" -eq 0 ] || ok=0

echo
echo "== gpu-check summary"
row() { printf '%-16s %s\n' "$1" "$2"; }
row GPU "${gpu_name:-unknown}"
row "copy bandwidth" "${copy:-not reported}"
row "GPU tests" "${tally:-no tally (run.sh exited $tests_status)}"
[ ${#bench_rows[@]} -eq 0 ] && row benchmarks "none (no scripts/bench-*.sh)"
for r in "${bench_rows[@]+"${bench_rows[@]}"}"; do
	row "${r%%|*}" "${r#*|}"
done
row logs "$logs"
if [ "$ok" -eq 1 ]; then
	row result PASS
	exit 0
fi
row result FAIL
exit 1
