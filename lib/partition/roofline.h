/* The roofline estimate of one operator on a GPU (hardware.h) and its
 * bottleneck class.
 *
 * time = max(flops / peak, bytes / bandwidth) + launch overhead, where peak
 * is the matrix units' FLOP/s at the data type for matrix products and the
 * vector FLOP/s for everything else. An op that runs no kernel (a view, a
 * constant) takes no time and has no class ("none").
 *
 * Classes against the hardware (RL_RIDGE): compute_bound when the op's
 * arithmetic intensity reaches the ridge point peak / bandwidth,
 * memory_bound below it, and latency_bound when the launch overhead is
 * longer than both the compute and the memory time. With the seed's fixed
 * cut-offs (RL_SEED; seed 003 names intensities above 40 compute-bound and
 * 10 to 40 balanced; its partitioner's fourth class, bandwidth_bound, is
 * at or below 1 FLOP per byte, memory_bound between): compute_bound,
 * balanced, memory_bound, bandwidth_bound. */
#ifndef SPKIT_ROOFLINE_H
#define SPKIT_ROOFLINE_H

#include <stdint.h>

#include "partition/hardware.h"

enum rl_class { RL_NONE, RL_COMPUTE, RL_MEMORY, RL_LATENCY, RL_BALANCED, RL_BANDWIDTH,
		RL_NCLASSES };
enum rl_thresholds { RL_RIDGE, RL_SEED };

#define RL_SEED_COMPUTE 40.0  /* above: compute_bound */
#define RL_SEED_BALANCED 10.0 /* above (to 40): balanced */
#define RL_SEED_MEMORY 1.0    /* above (to 10): memory_bound; at or below: bandwidth_bound */

struct rl_op {
	int kernel;      /* runs as a kernel */
	int matrix;      /* a matrix product: runs on the matrix units */
	int64_t flops, bytes;
};

struct rl_estimate {
	double compute_s, memory_s, time_s; /* time_s includes the launch overhead */
	double ridge;                       /* FLOP per byte where the op's roofline bends */
	enum rl_class cls;
};

void rl_estimate(const struct hw_spec *hw, enum hw_dtype dtype, enum rl_thresholds th,
		 const struct rl_op *op, struct rl_estimate *e);
const char *rl_class_name(enum rl_class c);

#endif
