/* kernel-sample's GPU clock (lib/sample/sample_run.h): each run between
 * its own pair of CUDA events (gpu_time_flushing, one repetition) with the
 * L2 cache flushed before it, outside the events; NVTX ranges; and the
 * device's name as the original writes it ("NVIDIA H100 80GB HBM3" ->
 * "NVIDIAH10080GBHBM3").
 *
 * Why: the fp16 layernorm forward at b4 l2048 dim4096, sampled by 10
 * get_one processes on an H200 (2026-11-28), ranged over 3.4-5.9% of its
 * median (43-46 us) where the same kernel timed in a queue of flushed runs
 * ranged over 1.5% (40.3-40.9 us) in 9 processes. A run timed alone on an
 * idle device also times the host's launch (the start event is recorded
 * as soon as it is queued; the kernel follows some microseconds later):
 * the flush queued first keeps the device busy meanwhile. And without a
 * flush a run starts with what the run before left in L2, dirty lines of
 * the previous backward's outputs among it. PyTorch's side of `calibrate`
 * (scripts/bench-sample-torch.py) flushes the same way. */
#ifndef SPKIT_SAMPLE_GPU_CLOCK_H
#define SPKIT_SAMPLE_GPU_CLOCK_H

#include "core/err.h"
#include "sample/sample_run.h"

/* Makes `device` current and allocates the flush buffer (twice the L2
 * size); fails without CUDA or without that device. */
int sample_gpu_clock(int device, struct sample_clock *c, struct sp_err *err);
/* Frees the flush buffer; a clock of sample_cpu_clock is left alone. */
void sample_gpu_clock_free(struct sample_clock *c);

#endif
