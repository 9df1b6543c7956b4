#!/usr/bin/env bash
# The MACKO benchmark of H200.md: the four matrix shapes at densities 0.9 to
# 0.05, fp16, L2 flushed, MACKO against cuBLAS and cuSPARSE side by side,
# plus 8 and 16 vectors on 28672x8192. Appends to $SPKIT_BENCH_DIR/macko.csv
# (resumable: delete it to start over) and prints SUMMARY lines.
#   scripts/bench-macko.sh [--quick]     --quick: 28672x8192 at 0.5 and 0.1 only
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
mkdir -p "$dir"
csv=$dir/macko.csv
reps=${MACKO_REPS:-200}

shapes="8192x8192 4096x14336 14336x4096 28672x8192"
densities="0.9 0.7 0.5 0.3 0.2 0.1 0.05"
if [ "${1:-}" = --quick ]; then
	shapes=28672x8192
	densities="0.5 0.1"
fi

run() { # rows cols density vectors
	"$bin/macko-spmv" bench --rows "$1" --cols "$2" --density "$3" --vectors "$4" \
		--reps "$reps" --warmup 20 --append -o "$csv"
}

for shape in $shapes; do
	for d in $densities; do
		run "${shape%x*}" "${shape#*x}" "$d" 1
	done
done
for v in 8 16; do
	for d in 0.5 0.1; do
		run 28672 8192 "$d" "$v"
	done
done

# One line per (shape, density, vectors): MACKO's time, its speed-up over
# cuBLAS and cuSPARSE, and its bandwidth as a share of the copy bandwidth.
awk -F, 'NR > 1 {
	key = $2 "x" $3 " d=" $4 " n=" $5
	t[key, $6] = $7; pct[key, $6] = $15; err[key, $6] = $17
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
}
END {
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "SUMMARY %-24s macko %7.1f us  vs cublas %5.2fx  vs cusparse %5.2fx  %5.1f%% of copy  err %.1e\n",
			k, t[k, "macko"], t[k, "cublas"] / t[k, "macko"], t[k, "cusparse"] / t[k, "macko"],
			pct[k, "macko"], err[k, "macko"]
	}
}' "$csv"
