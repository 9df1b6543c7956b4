#!/usr/bin/env bash
# The MaxK kernel benchmark of H200.md: reddit_like, products_like and
# flickr_like, H = 256, k = 16, 32, 64, cuSPARSE side by side. Appends to
# $SPKIT_BENCH_DIR/maxk.csv (delete it to start over); SUMMARY lines last.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
mkdir -p "$dir"
csv=$dir/maxk.csv
for g in flickr_like products_like reddit_like; do
	"$bin/maxk-train" bench --synthetic "$g" --hidden 256 --maxk 16,32,64 \
		--reps "${MAXK_REPS:-20}" --append -o "$csv"
done
awk -F, 'NR > 1 { t[$1, $5, $6] = $7; e[$1, $5, $6] = $13; if (!(($1, $5) in seen)) { seen[$1, $5] = 1; order[++n] = $1 SUBSEP $5 } }
END {
	for (i = 1; i <= n; i++) {
		split(order[i], p, SUBSEP); g = p[1]; k = p[2]
		printf "SUMMARY %-14s k=%-3s cusparse %7.3f ms  forward %7.3f ms (%5.2fx, err %.1e; records %7.3f)  backward %7.3f ms (err %.1e; records %7.3f, gather %7.3f)  topk %6.3f ms\n",
			g, k, t[g, k, "cusparse_spmm"], t[g, k, "maxk_forward"], t[g, k, "cusparse_spmm"] / t[g, k, "maxk_forward"], e[g, k, "maxk_forward"], t[g, k, "maxk_forward_records"],
			t[g, k, "maxk_backward"], e[g, k, "maxk_backward"], t[g, k, "maxk_backward_records"], t[g, k, "maxk_backward_gather"], t[g, k, "maxk_topk"]
	}
}' "$csv"
