#!/usr/bin/env bash
# One dtype and layout of ksmm-tune's speed table (bench/RESULTS.md), on the
# GPU of CUDA_VISIBLE_DEVICES: tune configs/ksmm/patterns_speed.in (51
# patterns) at batches 25,088 and 1,024, make the best table, then per batch
# scripts/bench-ksmm.sh with it (ksmm-tune bench, then PyTorch's baselines
# right after on the same card; median of 10 after 2 warm-ups) into
# OUT/DTYPE-LAYOUT-BATCH/. Resumable: the tune resumes its CSV and a batch
# whose PyTorch file exists is not redone, so a killed run is started again
# as it was.
#   scripts/ksmm-speed.sh DTYPE LAYOUT [OUT]       (OUT default build/ksmm-speed)
# Six of these, one a GPU, make the whole table; then
#   scripts/ksmm-summary.py OUT/*/ksmm-bench.csv $(printf -- '--torch %s ' OUT/*/ksmm-torch.csv)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/ksmm-speed.sh DTYPE LAYOUT [OUT]" >&2; exit 2; }
bin=${SPKIT_BIN:-bin}
d=$1 l=$2 out=${3:-build/ksmm-speed}
p=configs/ksmm/patterns_speed.in
mkdir -p "$out"
"$bin/ksmm-tune" tune --patterns $p --batch 25088,1024 --dtype "$d" --layout "$l" --reps 6 \
	--warmup 1 -o "$out/tune-$d-$l.csv"
"$bin/ksmm-tune" best "$out/tune-$d-$l.csv" -o "$out/table-$d-$l.csv"
for b in 25088 1024; do
	dir=$out/$d-$l-$b
	[ -e "$dir/ksmm-torch.csv" ] ||
		SPKIT_BENCH_DIR=$dir KSMM_PATTERNS=$p KSMM_BATCHES=$b KSMM_DTYPES=$d KSMM_LAYOUTS=$l \
			KSMM_TABLE=$out/table-$d-$l.csv KSMM_REPS=10 KSMM_WARMUP=2 scripts/bench-ksmm.sh
done
