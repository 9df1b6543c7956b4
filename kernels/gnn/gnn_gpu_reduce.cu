/* The backend's sums on the GPU (gnn_backend.h: col_sum, the bias
 * gradient; dot), through the deterministic reductions of gnn_gpu_reduce.cuh.
 *
 * Work and bytes: col_sum reads the m x n matrix once, in tiles of 32
 * columns by chunks of rows, and writes the chunks' partial sums (8 n a
 * chunk) to the scratch buffer; dot reads both vectors once. */
#include "gnn/gnn_gpu_reduce.cuh"

int gnn_gpu_col_sum(struct gnn_backend *b, const float *dy, int64_t m, int64_t n, float beta,
		    float *db, struct sp_err *err)
{
	return column_sum(impl(b), m, n, matrix_entry{dy, n}, beta, db, err);
}

struct product_op {
	const float *x, *y;
	__device__ double operator()(int64_t i) const { return (double)x[i] * (double)y[i]; }
};

struct store_dot {
	float *out;
	float beta;
	__device__ void operator()(double s) const
	{
		*out = (float)(beta == 0.0f ? s : (double)beta * *out + s);
	}
};

int gnn_gpu_dot(struct gnn_backend *b, const float *x, const float *y, int64_t count,
		float beta, float *out, struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	double *partials =
		(double *)gnn_gpu_scratch(c, reduce_parts(c, count) * sizeof(double), err);
	if (!partials)
		return -1;
	return reduce_sum(c, count, product_op{x, y}, store_dot{out, beta}, partials, err);
}

