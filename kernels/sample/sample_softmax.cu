/* Row-wise softmax operators on the GPU, fp32 inside:
 *   softmax over the last dimension of (b, h/mp, l, l), forward and backward;
 *   Megatron-LM's scaled upper-triangular masked softmax (row i of each l x l
 *   matrix keeps columns 0..i, scale 1), forward and backward;
 *   Megatron-LM's vocab-parallel cross-entropy on partition 0 of the
 *   vocabulary, (b, l, vocab/mp) logits.
 *
 * Softmax: a block a row; each thread loads its 16-byte vectors once into
 * shared memory (read back only by itself), the block reduces the maximum
 * and the sum of exponentials, and each thread writes its outputs. The
 * causal rows load only their kept prefix and write zeros after it. Bytes:
 * forward reads x (the kept part) and writes y; backward reads y and dy (kept
 * part) and writes dx: dx = scale y (dy - sum(dy y)).
 *
 * A forward row of at most 32 x 8 vectors (l <= 2048 at fp16/bf16, 1024 at
 * fp32) is a warp's instead: its vectors stay in the lanes' registers and
 * the reductions are shuffles, with no shared memory and no barrier, four
 * rows a block; rows of up to twice that are a pair of warps', whose
 * partial maxima and sums meet in shared memory (one barrier each). The
 * block a row spent its time in two block reductions (four barriers) for
 * 4 KB of a row at l = 2048.
 *
 * Cross-entropy: a block a row. Forward keeps a running maximum and sum of
 * exponentials per thread (one read of the logits, no copy), merges them
 * over the block, and writes the loss and the row's logsumexp (8 bytes a
 * row); backward reads the logits again and writes
 * dlogits = (exp(x - lse) - onehot(target)) dloss. */
#include "sample/sample_gpu.cuh"

#define CAUSAL_SCALE 1.0f

template <typename T, int V, bool CAUSAL>
static __global__ void softmax_forward(const T *__restrict__ x, T *__restrict__ y, int64_t cols,
				       int64_t seq)
{
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ float red[32];
	T *cache = (T *)smem;
	const float scale = CAUSAL ? CAUSAL_SCALE : 1.0f;
	const int64_t row = blockIdx.x, nvec = cols / V;
	const int64_t keep = CAUSAL ? row % seq + 1 : cols, kvec = (keep + V - 1) / V;
	const T *xr = x + row * cols;
	float m = -INFINITY;
	for (int64_t v = threadIdx.x; v < kvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(xr + v * V);
		vstore<T, V>(cache + v * V, a);
#pragma unroll
		for (int e = 0; e < V; e++)
			if (!CAUSAL || v * V + e < keep)
				m = fmaxf(m, to_f(a.v[e]) * scale);
	}
	m = block_max(m, red);
	float s = 0;
	for (int64_t v = threadIdx.x; v < kvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(cache + v * V);
#pragma unroll
		for (int e = 0; e < V; e++)
			if (!CAUSAL || v * V + e < keep)
				s += expf(to_f(a.v[e]) * scale - m);
	}
	const float inv = 1.0f / block_sum(s, red);
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		vec<T, V> o;
		if (v < kvec) {
			vec<T, V> a = vload<T, V>(cache + v * V);
#pragma unroll
			for (int e = 0; e < V; e++)
				o.v[e] = from_f<T>(!CAUSAL || v * V + e < keep
							   ? expf(to_f(a.v[e]) * scale - m) * inv
							   : 0.0f);
		} else {
#pragma unroll
			for (int e = 0; e < V; e++)
				o.v[e] = from_f<T>(0.0f);
		}
		vstore<T, V>(y + row * cols + v * V, o);
	}
}

/* The warps-a-row forward (file comment): W warps (1 or 2) of a block of
 * four take a row; its thread i holds vectors i, i + 32 W, ..., R of them
 * at most. */
template <typename T, int V, int R, int W, bool CAUSAL>
static __global__ void __launch_bounds__(128)
	softmax_forward_warps(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols,
			      int64_t seq)
{
	__shared__ float red_max[4], red_sum[4];
	const int warp = threadIdx.x / 32, t = threadIdx.x % (32 * W);
	const int64_t row = (int64_t)blockIdx.x * (4 / W) + warp / W;
	/* Whole rows a block: a pair's barrier is the block's, so every warp
	 * of a block goes through it, past the last row too. */
	const bool live = row < rows;
	const float scale = CAUSAL ? CAUSAL_SCALE : 1.0f;
	const int64_t nvec = cols / V;
	const int64_t keep = CAUSAL ? row % seq + 1 : cols, kvec = live ? (keep + V - 1) / V : 0;
	const T *xr = x + row * cols;
	vec<T, V> a[R];
	float m = -INFINITY;
#pragma unroll
	for (int k = 0; k < R; k++) {
		const int64_t v = t + 32 * W * k;
		if (v < kvec) {
			a[k] = vload<T, V>(xr + v * V);
#pragma unroll
			for (int e = 0; e < V; e++)
				if (!CAUSAL || v * V + e < keep)
					m = fmaxf(m, to_f(a[k].v[e]) * scale);
		}
	}
	m = warp_max(m);
	if (W > 1) {
		if (threadIdx.x % 32 == 0)
			red_max[warp] = m;
		__syncthreads();
		m = fmaxf(red_max[warp & ~1], red_max[warp | 1]);
	}
	float s = 0;
#pragma unroll
	for (int k = 0; k < R; k++) {
		const int64_t v = t + 32 * W * k;
		if (v < kvec)
#pragma unroll
			for (int e = 0; e < V; e++)
				if (!CAUSAL || v * V + e < keep)
					s += expf(to_f(a[k].v[e]) * scale - m);
	}
	s = warp_sum(s);
	if (W > 1) {
		if (threadIdx.x % 32 == 0)
			red_sum[warp] = s;
		__syncthreads();
		s = red_sum[warp & ~1] + red_sum[warp | 1];
	}
	if (!live)
		return;
	const float inv = 1.0f / s;
#pragma unroll
	for (int k = 0; k < R; k++) {
		const int64_t v = t + 32 * W * k;
		if (v >= nvec)
			break;
		vec<T, V> o;
#pragma unroll
		for (int e = 0; e < V; e++)
			o.v[e] = from_f<T>(v < kvec && (!CAUSAL || v * V + e < keep)
						   ? expf(to_f(a[k].v[e]) * scale - m) * inv
						   : 0.0f);
		vstore<T, V>(y + row * cols + v * V, o);
	}
}

/* Rows of up to 32 W R vectors run softmax_forward_warps: one warp a row
 * with the smallest R of 1, 2, 4, 8 that holds it, else two warps of 8;
 * -1 for longer rows. Two warps of 8 vectors at l = 4096 (fp16) rather than
 * one of 16 (110 registers: 16 warps an SM): on an H200 (2026-11-28) the
 * one-warp form moved 62% of the copy bandwidth at b8 h64 l4096. */
template <typename T, int V, bool CAUSAL, int R>
static int softmax_forward_warps_launch(const struct sample_dims *d, const T *x, T *y)
{
	const int64_t nvec = d->cols / V;
	if (nvec > 32 * R)
		return R >= 8 ? -1
			      : softmax_forward_warps_launch<T, V, CAUSAL, (R >= 8 ? 8 : 2 * R)>(d, x, y);
	const unsigned blocks = (unsigned)((d->rows + 3) / 4);
	softmax_forward_warps<T, V, R, 1, CAUSAL><<<blocks, 128>>>(x, y, d->rows, d->cols, d->seq);
	return 0;
}

template <typename T, int V, bool CAUSAL>
static int softmax_forward_rows_launch(const struct sample_dims *d, const T *x, T *y)
{
	const int64_t nvec = d->cols / V;
	if (nvec <= 32 * 8)
		return softmax_forward_warps_launch<T, V, CAUSAL, 1>(d, x, y);
	if (nvec > 2 * 32 * 8)
		return -1;
	const unsigned blocks = (unsigned)((d->rows + 1) / 2);
	softmax_forward_warps<T, V, 8, 2, CAUSAL><<<blocks, 128>>>(x, y, d->rows, d->cols, d->seq);
	return 0;
}

template <typename T, int V, bool CAUSAL>
static __global__ void softmax_backward(const T *__restrict__ y, const T *__restrict__ dy,
					T *__restrict__ dx, int64_t cols, int64_t seq)
{
	extern __shared__ __align__(16) unsigned char smem[];
	__shared__ float red[32];
	T *yc = (T *)smem, *gc = yc + cols;
	const float scale = CAUSAL ? CAUSAL_SCALE : 1.0f;
	const int64_t row = blockIdx.x, nvec = cols / V;
	const int64_t keep = CAUSAL ? row % seq + 1 : cols, kvec = (keep + V - 1) / V;
	float dot = 0;
	for (int64_t v = threadIdx.x; v < kvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(y + row * cols + v * V), g = vload<T, V>(dy + row * cols + v * V);
		vstore<T, V>(yc + v * V, a);
		vstore<T, V>(gc + v * V, g);
#pragma unroll
		for (int e = 0; e < V; e++)
			if (!CAUSAL || v * V + e < keep)
				dot += to_f(a.v[e]) * to_f(g.v[e]);
	}
	dot = block_sum(dot, red);
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		vec<T, V> o;
		if (v < kvec) {
			vec<T, V> a = vload<T, V>(yc + v * V), g = vload<T, V>(gc + v * V);
#pragma unroll
			for (int e = 0; e < V; e++)
				o.v[e] = from_f<T>(!CAUSAL || v * V + e < keep
							   ? scale * to_f(a.v[e]) * (to_f(g.v[e]) - dot)
							   : 0.0f);
		} else {
#pragma unroll
			for (int e = 0; e < V; e++)
				o.v[e] = from_f<T>(0.0f);
		}
		vstore<T, V>(dx + row * cols + v * V, o);
	}
}

template <typename T, int V>
static __global__ void xent_forward(const T *logits, const int32_t *target, float *loss,
				    float *lse_out, int64_t cols)
{
	__shared__ float red[32];
	const int64_t row = blockIdx.x, nvec = cols / V;
	const T *xr = logits + row * cols;
	float m = -INFINITY, s = 0;
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(xr + v * V);
#pragma unroll
		for (int e = 0; e < V; e++) {
			float f = to_f(a.v[e]);
			if (f > m) {
				s = s * expf(m - f) + 1.0f;
				m = f;
			} else {
				s += expf(f - m);
			}
		}
	}
	const float bm = block_max(m, red);
	s = block_sum(m == -INFINITY ? 0.0f : s * expf(m - bm), red);
	if (threadIdx.x == 0) {
		const float lse = bm + logf(s);
		const int32_t t = target[row];
		loss[row] = lse - (t < cols ? to_f(xr[t]) : 0.0f);
		lse_out[row] = lse;
	}
}

template <typename T, int V>
static __global__ void xent_backward(const T *logits, const int32_t *target, const float *lse,
				     const float *dloss, T *dlogits, int64_t cols)
{
	const int64_t row = blockIdx.x, nvec = cols / V;
	const float l = lse[row], g = dloss[row];
	const int64_t t = target[row];
	for (int64_t v = threadIdx.x; v < nvec; v += blockDim.x) {
		vec<T, V> a = vload<T, V>(logits + row * cols + v * V), o;
#pragma unroll
		for (int e = 0; e < V; e++)
			o.v[e] = from_f<T>((expf(to_f(a.v[e]) - l) - (v * V + e == t ? 1.0f : 0.0f)) * g);
		vstore<T, V>(dlogits + row * cols + v * V, o);
	}
}

enum row_op { SOFTMAX, CAUSAL, XENT };

template <typename T, int V, bool C>
static int softmax_launch(struct sample_gpu_state *st, bool backward, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	const int threads = sample_row_threads(d->cols / V);
	const size_t smem = (size_t)d->cols * sizeof(T) * (backward ? 2 : 1);
	/* Rows past 48 KiB of shared memory need the opt-in (up to 227 KiB on Hopper). */
	const bool big = smem > 48 * 1024;
	if (backward) {
		if (big)
			GPU_CHECK(err, cudaFuncSetAttribute(softmax_backward<T, V, C>,
							    cudaFuncAttributeMaxDynamicSharedMemorySize,
							    (int)smem));
		softmax_backward<T, V, C><<<(unsigned)d->rows, threads, smem>>>(
			sample_dev<T>(st, SM_Y), sample_dev<T>(st, SM_DY), sample_dev<T>(st, SM_DX),
			d->cols, d->seq);
	} else if (softmax_forward_rows_launch<T, V, C>(d, sample_dev<T>(st, SM_X),
							  sample_dev<T>(st, SM_Y))) {
		if (big)
			GPU_CHECK(err, cudaFuncSetAttribute(softmax_forward<T, V, C>,
							    cudaFuncAttributeMaxDynamicSharedMemorySize,
							    (int)smem));
		softmax_forward<T, V, C><<<(unsigned)d->rows, threads, smem>>>(
			sample_dev<T>(st, SM_X), sample_dev<T>(st, SM_Y), d->cols, d->seq);
	}
	GPU_CHECK_LAUNCH(err, "softmax");
	return 0;
}

template <typename T, int V>
static int row_launch(struct sample_gpu_state *st, enum row_op op, bool backward,
		      struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	if (op == SOFTMAX)
		return softmax_launch<T, V, false>(st, backward, err);
	if (op == CAUSAL)
		return softmax_launch<T, V, true>(st, backward, err);
	const int threads = sample_row_threads(d->cols / V);
	if (backward)
		xent_backward<T, V><<<(unsigned)d->rows, threads>>>(
			sample_dev<T>(st, XENT_LOGITS), sample_dev<int32_t>(st, XENT_TARGET),
			sample_dev<float>(st, XENT_LSE), sample_dev<float>(st, XENT_DLOSS),
			sample_dev<T>(st, XENT_DLOGITS), d->cols);
	else
		xent_forward<T, V><<<(unsigned)d->rows, threads>>>(
			sample_dev<T>(st, XENT_LOGITS), sample_dev<int32_t>(st, XENT_TARGET),
			sample_dev<float>(st, XENT_LOSS), sample_dev<float>(st, XENT_LSE), d->cols);
	GPU_CHECK_LAUNCH(err, "cross-entropy");
	return 0;
}

static int row_run(void *state, enum row_op op, bool backward, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	int rc = -1;
	SAMPLE_DISPATCH(st->s.p, T,
			rc = st->s.d.cols % vec16<T>() == 0
				     ? row_launch<T, vec16<T>()>(st, op, backward, err)
				     : row_launch<T, 1>(st, op, backward, err));
	return rc;
}

/* Both softmaxes cache a row (backward: y and dy) in shared memory. */
int sample_gpu_softmax_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	const size_t elem = st->s.p == SAMPLE_FP32 ? 4 : 2;
	return sample_gpu_smem_fits((size_t)st->s.d.cols * elem * 2, "softmax's backward at this l",
				    err);
}

int sample_gpu_softmax_forward(void *state, struct sp_err *err)
{
	return row_run(state, SOFTMAX, false, err);
}

int sample_gpu_softmax_backward(void *state, struct sp_err *err)
{
	return row_run(state, SOFTMAX, true, err);
}

int sample_gpu_causal_softmax_forward(void *state, struct sp_err *err)
{
	return row_run(state, CAUSAL, false, err);
}

int sample_gpu_causal_softmax_backward(void *state, struct sp_err *err)
{
	return row_run(state, CAUSAL, true, err);
}

int sample_gpu_xent_forward(void *state, struct sp_err *err)
{
	return row_run(state, XENT, false, err);
}

int sample_gpu_xent_backward(void *state, struct sp_err *err)
{
	return row_run(state, XENT, true, err);
}
