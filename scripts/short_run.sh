#!/usr/bin/env bash
# PascalCarrivain/ksmm's short_run.sh: the four kernels of long_run.sh on GPU
# 0 in sanity-check mode, 10 repetitions each.
set -euo pipefail
here=$(dirname "$0")
for kernel in kernel_bs_first_float4 kernel_bs_last_float4 kernel_bs_first_half2 \
	kernel_bs_last_half2; do
	"$here/long_run.sh" "$kernel" 0 sanity_check 10
done
