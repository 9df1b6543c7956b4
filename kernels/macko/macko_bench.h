/* macko-spmv bench: MACKO against cuBLAS (dense GEMV/GEMM) and cuSPARSE
 * (CSR SpMV/SpMM) on the same matrix and vectors, in one run, each result
 * checked against the double-precision CPU reference. */
#ifndef SPKIT_MACKO_BENCH_H
#define SPKIT_MACKO_BENCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/err.h"
#include "core/gpu.h"
#include "macko/macko.h"

enum macko_kernel {
	MACKO_KERNEL_MACKO = 1 << 0,
	MACKO_KERNEL_CUBLAS = 1 << 1,
	MACKO_KERNEL_CUSPARSE = 1 << 2,
};

struct macko_bench_opts {
	int nvec, warmup, reps, flush_l2;
	unsigned kernels; /* enum macko_kernel bits */
	uint64_t seed;    /* for x */
};

struct macko_bench_result {
	const char *kernel; /* "macko", "cublas", "cusparse" */
	struct gpu_timing t;
	double bytes;   /* the least each format must move */
	double gbs;     /* bytes / median time */
	double rel_err; /* ||y - ref|| / ||ref|| against the CPU reference */
};

/* Runs the chosen kernels; fills up to 3 results in the order above and
 * sets *count. */
int macko_bench(const struct macko *m, const struct macko_bench_opts *o,
		struct macko_bench_result *res, int *count, struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
