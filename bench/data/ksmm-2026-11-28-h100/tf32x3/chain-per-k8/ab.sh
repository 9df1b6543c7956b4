#!/bin/bash
# tf32 3 kernel, A (a step's products summed apart per tile_k) and B (per 8 of k, a chain of three
# mma.sync from zero), the shipped bsl points over the 51 speed patterns at 25,088, one GPU each
set -u
run() {
	CUDA_VISIBLE_DEVICES=$2 SPKIT_CACHE_DIR=/tmp/cache-$1 .xfer-g/ksmm-tune-$1 tune --patterns configs/ksmm/patterns_speed.in \
		--batch 25088 --dtype fp32 --layout bsl --space configs/ksmm/space_tf32x3.yaml --reps 6 --warmup 1 \
		-o $OUT/tune-$1.csv > $OUT/log-$1.txt 2>&1
}
run A 0 & run B 1 & wait
tail -2 $OUT/log-A.txt $OUT/log-B.txt
