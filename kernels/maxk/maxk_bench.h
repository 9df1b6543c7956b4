/* maxk-train bench: cuSPARSE SpMM on the dense MaxK features
 * against the MaxK forward, MaxK backward and top-k, on one graph, side by
 * side, each checked against cuSPARSE on the same data (top-k against the
 * CPU's top-k). */
#ifndef SPKIT_MAXK_BENCH_H
#define SPKIT_MAXK_BENCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "sparse/csr.h"
#include "core/err.h"
#include "core/gpu.h"

struct maxk_bench_opts {
	int h, k, warmup, reps, flush_l2;
	uint64_t seed;
};

struct maxk_bench_result {
	/* cusparse_spmm, maxk_forward, maxk_forward_records, maxk_backward,
	 * maxk_backward_records, maxk_backward_gather, maxk_topk */
	const char *kernel;
	struct gpu_timing t;
	double bytes;   /* the least the kernel must move */
	double gbs;
	double max_err; /* max |ours - reference| / max |reference| (0 for cuSPARSE itself) */
};

#define MAXK_BENCH_KERNELS 7

/* MAXK_BENCH_KERNELS results, in the order above. */
int maxk_bench(const struct csr *g, const struct maxk_bench_opts *o, struct maxk_bench_result *res,
	       struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
