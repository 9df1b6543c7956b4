/* What `ksmm-tune tune` runs on the GPU: the runner of lib/ksmm/ksmm_tune.h
 * over the kernels of ksmm_gpu.h. For each job, seeded random weights (on
 * the CPU) and input (on the GPU); the CPU reference (ksmm_ref_factor) on a
 * sample of the batch (its first and last columns, so the edge tiles are
 * checked; ksmm_sample_download); then each
 * configuration compiled (or taken from the disk cache), run once and
 * compared (relative error max|y - ref| / max|ref| against
 * ksmm_tolerance), and timed in `rounds` rounds of gpu_time (L2 flushed,
 * events): ms the median of the rounds' medians, std their standard
 * deviation. Each configuration is one NVTX range named after it. */
#ifndef SPKIT_KSMM_TUNE_GPU_H
#define SPKIT_KSMM_TUNE_GPU_H

#include <stdint.h>

#include "ksmm/ksmm_tune.h"

/* Batch columns the reference checks at each end of the batch: 32, where
 * 128 (256 columns of up to 65,536 rows on the grid patterns) cost about
 * 0.26 s of host time a configuration on the H100 node, more than most of
 * the timings (tune of the 40 grid patterns at batch 1,024). */
#define KSMM_TUNE_SAMPLE 32

struct ksmm_tune_gpu {
	int warmup, reps, rounds; /* --ncu: 0, 1, 1 */
	uint64_t seed;
	/* private: the job begun */
	struct ksmm_tune_job job;
	int64_t nsample;
	double *ref, ref_max;
	void *y_host;
	void *d_w_abcd, *d_w, *d_x, *d_y;
};

/* ksmm_config_check as a ksmm_runnable_fn (ctx unused). */
int ksmm_runnable(void *ctx, const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		  enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n);
struct ksmm_runner ksmm_tune_gpu_runner(struct ksmm_tune_gpu *g);

#endif
