/* The losses on the GPU (gnn_backend.h: softmax_xent, bce): the mean loss
 * over the rows of one split and the logits' gradient, as lib/gnn/
 * gnn_cpu.c computes them.
 *
 * Work: a warp a row; first the count of the split's rows (a reduction),
 * then the rows' losses and gradients, the losses summed as partials in
 * the scratch buffer and added in a fixed order (gnn_gpu_reduce.cuh).
 * Bytes: the mask twice, the logits once (softmax reads a row three times,
 * from L1), the gradient written once. */
#include <math.h>

#include "gnn/gnn_gpu_reduce.cuh"

struct in_split {
	const uint8_t *mask;
	int which;
	__device__ double operator()(int64_t i) const { return mask[i] == which ? 1.0 : 0.0; }
};

struct store_count {
	double *count;
	__device__ void operator()(double s) const { *count = s; }
};

/* Softmax cross-entropy of row i against its class id: returns the lane's
 * share of the row's loss and writes the row's gradient times scale. */
struct softmax_xent_row {
	const float *logits;
	const int32_t *labels;
	__device__ double operator()(int64_t i, int c, int lane, float scale, float *g) const
	{
		const float *z = logits + i * c;
		float mx = -INFINITY;
		for (int j = lane; j < c; j += 32)
			mx = fmaxf(mx, z[j]);
		mx = warp_max(mx);
		float se = 0.0f;
		for (int j = lane; j < c; j += 32)
			se += expf(z[j] - mx);
		se = warp_sum(se);
		/* Labels are checked when the data is loaded (the CPU backend checks
		 * again); one out of range here reads nothing and makes the loss NaN. */
		const int y = labels[i];
		const float zy = y >= 0 && y < c ? z[y] : NAN;
		for (int j = lane; j < c; j += 32)
			g[j] = (expf(z[j] - mx) / se - (j == y ? 1.0f : 0.0f)) * scale;
		return lane == 0 ? (double)(mx + logf(se) - zy) : 0.0;
	}
};

/* Binary cross-entropy with logits, the stable form
 * max(z, 0) - z t + log(1 + exp(-|z|)), gradient sigmoid(z) - t. */
struct bce_row {
	const float *logits, *targets;
	__device__ double operator()(int64_t i, int c, int lane, float scale, float *g) const
	{
		double s = 0.0;
		for (int j = lane; j < c; j += 32) {
			const float z = logits[i * c + j], t = targets[i * c + j];
			const float e = expf(-fabsf(z));
			s += fmaxf(z, 0.0f) - z * t + log1pf(e);
			const float sig = z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
			g[j] = (sig - t) * scale;
		}
		return s;
	}
};

/* Rows in the split get their loss and gradient (scaled by 1 / (count
 * per_row)); the others a zero gradient. partials[block] = the block's
 * loss sum. */
template <class Row>
__global__ void __launch_bounds__(THREADS)
	loss_rows_kernel(int64_t m, int c, const uint8_t *__restrict__ mask, int which, Row row,
			 double per_row, const double *count, float *dlogits, double *partials)
{
	const int lane = threadIdx.x & 31;
	const double denom = *count * per_row;
	const float scale = denom > 0 ? (float)(1.0 / denom) : 0.0f;
	double s = 0.0;
	for (int64_t i = (blockIdx.x * (int64_t)THREADS + threadIdx.x) >> 5; i < m;
	     i += (int64_t)gridDim.x * WARPS) {
		float *g = dlogits + i * c;
		if (mask[i] == which) {
			s += row(i, c, lane, scale, g);
		} else {
			for (int j = lane; j < c; j += 32)
				g[j] = 0.0f;
		}
	}
	s = block_sum(s);
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s;
}

/* The mean: no rows in the split gives 0, not 0 / 0. */
struct store_loss {
	float *loss;
	const double *count;
	double per_row;
	__device__ void operator()(double s) const
	{
		*loss = *count > 0 ? (float)(s / (*count * per_row)) : 0.0f;
	}
};

/* Scratch: the count of rows in the split, then the partial sums. */
template <class Row>
static int loss(struct cuda_backend *cb, const char *op, Row row, const uint8_t *mask, int which,
		int64_t m, int c, double per_row, float *dlogits, float *loss_out,
		struct sp_err *err)
{
	if (m < 0 || c < 1)
		return sp_fail(err, "%s: %lld rows of %d classes is not a valid shape", op,
			       (long long)m, c);
	const unsigned rows_parts = blocks_for(cb, m, WARPS, 4), count_parts = reduce_parts(cb, m);
	const unsigned parts = rows_parts > count_parts ? rows_parts : count_parts;
	double *scratch = (double *)gnn_gpu_scratch(cb, (1 + (size_t)parts) * sizeof(double), err);
	if (!scratch)
		return -1;
	double *count = scratch, *partials = scratch + 1;
	if (reduce_sum(cb, m, in_split{mask, which}, store_count{count}, partials, err))
		return -1;
	loss_rows_kernel<<<rows_parts, THREADS>>>(m, c, mask, which, row, per_row, count, dlogits,
						  partials);
	GPU_CHECK_LAUNCH(err, "loss_rows_kernel");
	sum_finish_kernel<<<1, THREADS>>>(partials, (int)rows_parts,
					  store_loss{loss_out, count, per_row});
	GPU_CHECK_LAUNCH(err, "sum_finish_kernel");
	return 0;
}

int gnn_gpu_softmax_xent(struct gnn_backend *b, const float *logits, const int32_t *labels,
			 const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
			 float *loss_out, struct sp_err *err)
{
	return loss(impl(b), "softmax_xent", softmax_xent_row{logits, labels}, mask, which, m, c,
		    1.0, dlogits, loss_out, err);
}

int gnn_gpu_bce(struct gnn_backend *b, const float *logits, const float *targets,
		const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
		float *loss_out, struct sp_err *err)
{
	return loss(impl(b), "bce", bce_row{logits, targets}, mask, which, m, c, (double)c, dlogits,
		    loss_out, err);
}

