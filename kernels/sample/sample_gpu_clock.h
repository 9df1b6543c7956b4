/* kernel-sample's GPU clock (lib/sample/sample_run.h): each run between
 * its own pair of CUDA events (gpu_time, one repetition, no L2 flush: the
 * original timed operators as a training step runs them, on inputs just
 * made), NVTX ranges, and the device's name as the original writes it
 * ("NVIDIA H100 80GB HBM3" -> "NVIDIAH10080GBHBM3"). */
#ifndef SPKIT_SAMPLE_GPU_CLOCK_H
#define SPKIT_SAMPLE_GPU_CLOCK_H

#include "core/err.h"
#include "sample/sample_run.h"

/* Makes `device` current; fails without CUDA or without that device. */
int sample_gpu_clock(int device, struct sample_clock *c, struct sp_err *err);

#endif
