#!/usr/bin/env bash
# Times maxk-genmeta on the reddit_like graph (232,965 rows, 114,618,749
# edges), from a .npz file and from --synthetic, on this machine's CPU.
# Usage: scripts/measure-genmeta.sh [SCRATCH_DIR]   (needs ~1 GB there)
set -euo pipefail
bin=${SPKIT_BIN:-bin}
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
graph=$dir/reddit_like.npz

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
time_runs() { # seconds of 5 runs of a command, median
	for _ in 1 2 3 4 5; do
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >/dev/null
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc -l
	done | median
}

if [ ! -f "$graph" ]; then
	t0=$(date +%s.%N)
	"$bin/maxk-genmeta" -q --synthetic reddit_like --graph-out "$graph"
	echo "generated $graph in $(echo "$(date +%s.%N) - $t0" | bc -l | xargs printf '%.2f') s ($(du -h "$graph" | cut -f1))"
fi
"$bin/maxk-genmeta" "$graph" -o "$dir/reddit_like.warp4"
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf 'npz -> warp4 (median of 5):        %.3f s\n' "$(time_runs "$bin/maxk-genmeta" "$graph" -o "$dir/reddit_like.warp4")"
printf 'synthetic degrees -> warp4 (median of 5): %.3f s\n' "$(time_runs "$bin/maxk-genmeta" --synthetic reddit_like -o "$dir/s.warp4")"
cmp "$dir/reddit_like.warp4" "$dir/s.warp4" && echo "both give the same records"
