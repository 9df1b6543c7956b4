#!/usr/bin/env bash
# One dtype and layout of ksmm-tune's speed table (bench/RESULTS.md), on the
# GPU of CUDA_VISIBLE_DEVICES: tune configs/ksmm/patterns_speed.in (51
# patterns) at batches 25,088 and 1,024, make the best table, then per batch
# `ksmm-tune bench` with it and scripts/bench-ksmm-torch.py right after, on
# the same card. Resumable: the tune resumes its CSV and a finished bench or
# PyTorch file is not redone, so a killed run is started again as it was.
#   scripts/ksmm-speed.sh DTYPE LAYOUT [OUT]       (OUT default build/ksmm-speed)
# Six of these, one a GPU, make the whole table; then
#   scripts/ksmm-summary.py OUT/bench-*.csv $(printf -- '--torch %s ' OUT/torch-*.csv)
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
	f=$out/bench-$d-$l-$b.csv
	[ -e "$f" ] || { "$bin/ksmm-tune" bench -q --patterns $p --batch $b --dtype "$d" --layout "$l" \
		--reps 10 --warmup 2 --table "$out/table-$d-$l.csv" --skip bsr -o "$f.part" && mv "$f.part" "$f"; }
	f=$out/torch-$d-$l-$b.csv
	[ -e "$f" ] || { python3 scripts/bench-ksmm-torch.py --patterns $p --batch $b --dtypes "$d" \
		--layouts "$l" --reps 10 --warmup 2 -o "$f.part" && mv "$f.part" "$f"; }
done
