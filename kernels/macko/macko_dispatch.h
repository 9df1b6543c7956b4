/* Where a MACKO product runs: the CPU reference (double accumulation) or
 * the GPU kernel. The one place that knows whether this build has CUDA. */
#ifndef SPKIT_MACKO_EXEC_H
#define SPKIT_MACKO_EXEC_H

#include <stdint.h>

#include "core/err.h"
#include "macko/macko.h"
#include "macko/macko_bench.h"
#include "macko/macko_gpu.h"

/* y = alpha A x + beta y_in. x: fp16 bits, nvec x cols. y_in: nvec x rows
 * floats, or NULL when beta is 0. y: nvec x rows of `out` (fp16 bits or
 * float). */
int macko_multiply(const struct macko *m, const uint16_t *x, int nvec, double alpha, double beta,
		   const float *y_in, void *y, enum macko_out out, int use_gpu, struct sp_err *err);

/* macko_bench, or an error in a build without CUDA. */
int macko_run_bench(const struct macko *m, const struct macko_bench_opts *o,
		    struct macko_bench_result *res, int *count, struct sp_err *err);

#endif
