/* Where MaxK work runs; the one place that knows whether this build has
 * CUDA (the .cu files of kernels/maxk/ exist only then). */
#ifndef SPKIT_MAXK_DISPATCH_H
#define SPKIT_MAXK_DISPATCH_H

#include "sparse/csr.h"
#include "core/err.h"
#include "maxk/maxk_bench.h"

/* maxk_bench, or an error in a build without CUDA. */
int maxk_run_bench(const struct csr *g, const struct maxk_bench_opts *o,
		   struct maxk_bench_result *res, struct sp_err *err);

#endif
