#!/usr/bin/env bash
# PascalCarrivain/ksmm's long_run.sh interface, on ksmm-tune:
#
#   scripts/long_run.sh [KERNEL [GPU [sanity_check [NREPEATS]]]]
#
# KERNEL picks the dtype and layout as the original's kernel names did:
#   kernel_bs_first_float4  fp32, batch-size-first (the default)
#   kernel_bs_last_float4   fp32, batch-size-last
#   kernel_bs_first_half2   fp16, batch-size-first
#   kernel_bs_last_half2    fp16, batch-size-last
# GPU is the device to run on (default 0). With sanity_check the sweep is the
# short pattern list over a small space (configs/ksmm/patterns_short.in,
# configs/ksmm/space_sanity.yaml); otherwise the paper's grid
# (configs/ksmm/patterns.in) over the default space, batch 25088. NREPEATS
# is the timed repetitions per configuration (default 100).
#
# Writes KERNEL.csv (every configuration; a rerun resumes it) and
# KERNEL.best.csv (the best configuration per pattern), in the current
# folder. SLURM array jobs: see scripts/slurm/ksmm-tune-array.sbatch.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${SPKIT_BIN:-$here/bin}
kernel=${1:-kernel_bs_first_float4}
gpu=${2:-0}
mode=${3:-}
reps=${4:-100}

case $kernel in
kernel_bs_first_float4) dtype=fp32 layout=bsf ;;
kernel_bs_last_float4) dtype=fp32 layout=bsl ;;
kernel_bs_first_half2) dtype=fp16 layout=bsf ;;
kernel_bs_last_half2) dtype=fp16 layout=bsl ;;
*)
	echo "long_run.sh: error: unknown kernel '$kernel' (kernel_bs_first_float4," \
		"kernel_bs_last_float4, kernel_bs_first_half2, kernel_bs_last_half2)" >&2
	exit 2
	;;
esac
case $mode in
sanity_check) patterns=$here/configs/ksmm/patterns_short.in space=$here/configs/ksmm/space_sanity.yaml ;;
"") patterns=$here/configs/ksmm/patterns.in space=$here/configs/ksmm/space.yaml ;;
*)
	echo "long_run.sh: error: third argument '$mode': only sanity_check is known" >&2
	exit 2
	;;
esac

CUDA_VISIBLE_DEVICES=$gpu "$bin/ksmm-tune" tune --patterns "$patterns" --space "$space" \
	--batch 25088 --dtype "$dtype" --layout "$layout" --reps "$reps" -o "$kernel.csv"
"$bin/ksmm-tune" best "$kernel.csv" -o "$kernel.best.csv"
