#!/usr/bin/env bash
# One dtype and layout of ksmm-tune's speed table (bench/RESULTS.md), on the
# GPU of CUDA_VISIBLE_DEVICES: tune configs/ksmm/patterns_speed.in (51
# patterns) at batches 25,088 and 1,024, make the best table, then per batch
# scripts/bench-ksmm.sh with it (ksmm-tune bench, then PyTorch's baselines
# right after on the same card; median of 10 after 2 warm-ups) into
# OUT/DTYPE-LAYOUT-BATCH/. Resumable: the tune resumes its CSV and a batch
# whose PyTorch file exists is not redone, so a killed run is started again
# as it was. KSMM_SPACE=FILE tunes that space too, after the default one and
# into the same CSV (e.g. configs/ksmm/space_tf32x3.yaml: best then keeps the
# faster per pattern); KSMM_SPEED_BATCHES="B..." other batches.
#   scripts/ksmm-speed.sh DTYPE LAYOUT [OUT]       (OUT default build/ksmm-speed)
# Six of these, one a GPU, make the whole table; then
#   scripts/ksmm-summary.py OUT/*/ksmm-bench.csv $(printf -- '--torch %s ' OUT/*/ksmm-torch.csv)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/ksmm-speed.sh DTYPE LAYOUT [OUT]" >&2; exit 2; }
bin=${SPKIT_BIN:-bin}
d=$1 l=$2 out=${3:-build/ksmm-speed}
p=configs/ksmm/patterns_speed.in
batches=${KSMM_SPEED_BATCHES:-25088 1024}
mkdir -p "$out"
for space in "" ${KSMM_SPACE:-}; do
	"$bin/ksmm-tune" tune --patterns $p --batch "${batches// /,}" --dtype "$d" --layout "$l" \
		${space:+--space "$space"} --reps 6 --warmup 1 -o "$out/tune-$d-$l.csv"
done
"$bin/ksmm-tune" best "$out/tune-$d-$l.csv" -o "$out/table-$d-$l.csv"
for b in $batches; do
	dir=$out/$d-$l-$b
	[ -e "$dir/ksmm-torch.csv" ] ||
		SPKIT_BENCH_DIR=$dir KSMM_PATTERNS=$p KSMM_BATCHES=$b KSMM_DTYPES=$d KSMM_LAYOUTS=$l \
			KSMM_TABLE=$out/table-$d-$l.csv KSMM_REPS=10 KSMM_WARMUP=2 scripts/bench-ksmm.sh
done
