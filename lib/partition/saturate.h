/* The batch at which a model stops being latency-bound on a GPU: the
 * graphs project's "batch to saturate the hardware" exercise, answered
 * with the roofline (roofline.h) instead of its rule of thumb (SMs over the
 * most ops in one stage).
 *
 * At batch B the model's roofline time is its work (each kernel's
 * max(compute, memory) time, summed) plus one launch overhead per kernel.
 * It is latency-bound while the overheads add up to more than the work;
 * the work grows with B and the overheads do not, so the smallest B where
 * the work reaches the overheads is found by doubling, then bisection,
 * each step a fresh load and analysis at that batch (--batch). */
#ifndef SPKIT_SATURATE_H
#define SPKIT_SATURATE_H

#include <stdint.h>

#include "core/err.h"
#include "partition/partition.h"

enum { SATURATE_MAX_BATCH = 1 << 20 };

/* Work and overheads of an analysed model, in seconds. */
void saturate_split(const struct partition_report *r, double *work_s, double *overhead_s);

/* The smallest batch (1..SATURATE_MAX_BATCH) at which the model in path,
 * analysed with o at that batch, is not latency-bound, into *batch; 0 when
 * it still is at SATURATE_MAX_BATCH (--input-shape fixing every input's
 * batch, say). */
int saturate_batch(const char *path, const struct partition_options *o, int64_t *batch,
		   struct sp_err *err);

#endif
