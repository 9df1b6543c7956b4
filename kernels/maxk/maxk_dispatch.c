#include "maxk/maxk_dispatch.h"

#if SPKIT_CUDA
int maxk_run_bench(const struct csr *g, const struct maxk_bench_opts *o,
		   struct maxk_bench_result *res, struct sp_err *err)
{
	return maxk_bench(g, o, res, err);
}
#else
int maxk_run_bench(const struct csr *g, const struct maxk_bench_opts *o,
		   struct maxk_bench_result *res, struct sp_err *err)
{
	return sp_fail(err, "MaxK kernel benchmark: spkit was built without CUDA");
}
#endif
