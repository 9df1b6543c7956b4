/* The backend's MaxK operations (gnn_backend.h: topk, scatter, gather,
 * aggregate_maxk and its backward): calls into kernels/maxk/ (maxk_gpu.h),
 * whose files say what each kernel computes and moves. */
#include "gnn/gnn_gpu.cuh"

int gnn_gpu_topk(struct gnn_backend *b, const float *x, int64_t m, int h, int k, float *values,
		 uint16_t *index, struct sp_err *err)
{
	if (m > INT32_MAX)
		return sp_fail(err, "top-k: %lld rows is too many", (long long)m);
	return maxk_topk_gpu(x, m, h, k, values, index, err);
}

int gnn_gpu_scatter(struct gnn_backend *b, const float *values, const uint16_t *index,
		    int64_t m, int h, int k, float *dense, struct sp_err *err)
{
	return maxk_scatter_gpu(values, index, m, h, k, dense, err);
}

int gnn_gpu_gather(struct gnn_backend *b, const float *dense, const uint16_t *index, int64_t m,
		   int h, int k, float *out, struct sp_err *err)
{
	return maxk_gather_gpu(dense, index, m, h, k, out, err);
}

int gnn_gpu_aggregate_maxk(struct gnn_backend *b, const struct gnn_graph *g,
			   const float *values, const uint16_t *index, int h, int k, float *y,
			   struct sp_err *err)
{
	return maxk_forward_gpu(&g->d, values, index, h, k, y, err);
}

int gnn_gpu_aggregate_maxk_backward(struct gnn_backend *b, const struct gnn_graph *g,
				    const uint16_t *index, int h, int k, const float *dy,
				    float *dvalues, struct sp_err *err)
{
	return maxk_backward_gpu(&g->d, index, h, k, dy, dvalues, err);
}

