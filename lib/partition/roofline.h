/* The roofline estimate of one operator on a GPU (hardware.h) and its
 * bottleneck class.
 *
 * time = max(flops / peak, bytes / bandwidth) + launch overhead, where peak
 * is the matrix units' FLOP/s at the data type for matrix products and the
 * vector FLOP/s for everything else. An op that runs no kernel (a view, a
 * constant) takes no time and has no class ("none").
 *
 * Classes against the hardware (ROOFLINE_RIDGE): compute_bound when the op's
 * arithmetic intensity reaches the ridge point peak / bandwidth,
 * memory_bound below it, and latency_bound when the launch overhead is
 * longer than both the compute and the memory time. With the fixed
 * cut-offs of the graphs project's GraphPartitioner (ROOFLINE_FIXED; its
 * guide names intensities above 40 compute-bound and 10 to 40 balanced; its
 * partitioner's fourth class, bandwidth_bound, is at or below 1 FLOP per
 * byte, memory_bound between): compute_bound, balanced, memory_bound,
 * bandwidth_bound. */
#ifndef SPKIT_ROOFLINE_H
#define SPKIT_ROOFLINE_H

#include <stdint.h>

#include "partition/hardware.h"

enum roofline_class {
	ROOFLINE_NONE,
	ROOFLINE_COMPUTE,
	ROOFLINE_MEMORY,
	ROOFLINE_LATENCY,
	ROOFLINE_BALANCED,
	ROOFLINE_BANDWIDTH,
	ROOFLINE_NCLASSES
};
enum roofline_thresholds { ROOFLINE_RIDGE, ROOFLINE_FIXED, ROOFLINE_NTHRESHOLDS };
/* "ridge" and "fixed", indexed by the kinds, ending with NULL. */
extern const char *const roofline_thresholds_names[ROOFLINE_NTHRESHOLDS + 1];

#define ROOFLINE_FIXED_COMPUTE 40.0  /* above: compute_bound */
#define ROOFLINE_FIXED_BALANCED 10.0 /* above (to 40): balanced */
#define ROOFLINE_FIXED_MEMORY 1.0    /* above (to 10): memory_bound; at or below: bandwidth_bound */

struct roofline_op {
	int kernel;      /* runs as a kernel */
	int matrix;      /* a matrix product: runs on the matrix units */
	int64_t flops, bytes;
};

struct roofline_estimate {
	double compute_s, memory_s, time_s; /* time_s includes the launch overhead */
	double ridge;                       /* FLOP per byte where the op's roofline bends */
	enum roofline_class cls;
};

void roofline_estimate(const struct hardware_spec *hw, enum hardware_dtype dtype,
		       enum roofline_thresholds th, const struct roofline_op *op,
		       struct roofline_estimate *e);
const char *roofline_class_name(enum roofline_class c);

#endif
