/* kernel-sample's GPU clock (lib/sample/sample_run.h): each run between
 * its own pair of CUDA events (gpu_time_after, one repetition, no L2 flush:
 * the original timed operators as a training step runs them, on inputs
 * just made), the device kept busy for 20 us ahead of the start event
 * (gpu_spin) so that the event is not recorded before the run is queued;
 * NVTX ranges; and the device's name as the original writes it
 * ("NVIDIA H100 80GB HBM3" -> "NVIDIAH10080GBHBM3").
 *
 * Why the lead: a run timed alone on an idle device also timed the host's
 * launch (the start event is recorded as soon as it is queued, the kernel
 * some microseconds later). On an H200 (2026-11-28), the fp16 layernorm at
 * b4 l2048 dim4096 sampled by 10 get_one processes: forward 43-46 us, a
 * range of 3.4-5.9% of the median, without it; 42.1-42.8 us, 1.5-1.6%,
 * with it; backward ranges 0.6-1.1%. An L2 flush ahead instead (the same
 * lead, and a cold cache) left 2.0-3.4%. */
#ifndef SPKIT_SAMPLE_GPU_CLOCK_H
#define SPKIT_SAMPLE_GPU_CLOCK_H

#include "core/err.h"
#include "sample/sample_run.h"

/* Makes `device` current; fails without CUDA or without that device. */
int sample_gpu_clock(int device, struct sample_clock *c, struct sp_err *err);

#endif
