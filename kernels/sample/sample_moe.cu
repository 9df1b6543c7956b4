/* The mixture-of-experts layer on the GPU (the computation of
 * lib/sample/sample_ref_moe.c, dropless top-k routing as MegaBlocks and
 * GPT-NeoX run it):
 *   forward:  router GEMM (x Wr^T, fp32 logits straight into `probs`), a warp
 *             a token for softmax and top-k, the permutation of the pairs to
 *             expert-major rows (a counting sort: per-chunk histograms, one
 *             scan, a stable placement), the gather of x's rows, per expert
 *             H = Xp W1_e^T, gelu, Y = gelu(H) W2_e, and the gate-weighted
 *             combine;
 *   backward: a warp a token for dgate, dlogits and dY = gate dout, per
 *             expert dW2 = gelu(H)^T dY, dA = dY W2^T, dH = dA gelu'(H) (in
 *             place), dW1 = dH^T Xp, dXp = dH W1, then the router's dx (fp32)
 *             and dWr GEMMs and the sum of dx over a token's pairs.
 * The experts' GEMMs are cuBLAS GEMMs, one per expert with rows, sized by the
 * expert counts read back to the host once a forward (E + 1 integers; the
 * original's grouped GEMM reads them back too: tokens_per_expert.cpu()).
 * fp16/bf16 accumulate in fp32; fp32 is plain fp32 (no TF32).
 * Bytes beyond the GEMMs: x gathered into Xp once (P x dim), Y read once by
 * the combine, dout read twice (dgate and dY), dXp read once by the final
 * sum; the router's T x E floats a few times. */
#include <cublas_v2.h>

#include "sample/sample_gpu.cuh"

#define MOE_CHUNK 256 /* pairs a block of the permutation takes */
#define MOE_WARPS 8   /* warps a block of the per-token kernels */

struct moe_extra {
	cublasHandle_t blas;
	int32_t *pos;     /* pos[pair]: the pair's row */
	int32_t *token;   /* token[row] */
	int32_t *counts;  /* counts[chunk][e], then each chunk's first row for e */
	int32_t *start;   /* start[e], start[E] = pairs: device */
	int32_t *hstart;  /* the same, read back each forward */
	void *xp, *a, *dy; /* P x dim gathered x; P x F gelu(H), then dA, dH; P x dim dY, then dXp */
	void *dlogits;    /* T x E at the run's precision */
	float *dx32;      /* T x dim: the router's share of dx */
	int64_t chunks;
};

static void moe_release(void *extra)
{
	struct moe_extra *e = (struct moe_extra *)extra;
	if (!e)
		return;
	if (e->blas)
		cublasDestroy(e->blas);
	gpu_free(e->pos);
	gpu_free(e->token);
	gpu_free(e->counts);
	gpu_free(e->start);
	gpu_free(e->xp);
	gpu_free(e->a);
	gpu_free(e->dy);
	gpu_free(e->dlogits);
	gpu_free(e->dx32);
	free(e->hstart);
	free(e);
}

int sample_gpu_moe_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	const size_t elem = st->s.p == SAMPLE_FP32 ? 4 : 2;
	struct moe_extra *e = (struct moe_extra *)calloc(1, sizeof *e);
	if (!e)
		return sp_fail(err, "out of memory for the MoE's state");
	st->extra = e;
	st->release = moe_release;
	/* A lane keeps the experts it has taken in 64 bits (E <= 2048); the
	 * backward keeps a token's dgate in 32 floats (top_k <= 32). */
	if (d->experts > 64 * 32 || d->topk > 32)
		return sp_fail(err, "moe_num_experts %lld, top_k %lld: the GPU's router takes at "
				    "most 2048 experts and top_k 32",
			       (long long)d->experts, (long long)d->topk);
	e->chunks = (d->m + MOE_CHUNK - 1) / MOE_CHUNK;
	e->hstart = (int32_t *)malloc((size_t)(d->experts + 1) * sizeof(int32_t));
	if (!e->hstart)
		return sp_fail(err, "out of memory for the expert counts");
	GPU_CHECK(err, cublasCreate(&e->blas));
	if (gpu_malloc((void **)&e->pos, (size_t)d->m * 4, "MoE pair rows", err) ||
	    gpu_malloc((void **)&e->token, (size_t)d->m * 4, "MoE row tokens", err) ||
	    gpu_malloc((void **)&e->counts, (size_t)(e->chunks * d->experts) * 4, "MoE counts",
		       err) ||
	    gpu_malloc((void **)&e->start, (size_t)(d->experts + 1) * 4, "MoE starts", err) ||
	    gpu_malloc(&e->xp, (size_t)(d->m * d->k) * elem, "MoE gathered x", err) ||
	    gpu_malloc(&e->a, (size_t)(d->m * d->n) * elem, "MoE gelu(H)", err) ||
	    gpu_malloc(&e->dy, (size_t)(d->m * d->k) * elem, "MoE dY", err) ||
	    gpu_malloc(&e->dlogits, (size_t)(d->rows * d->experts) * elem, "MoE dlogits", err) ||
	    gpu_malloc((void **)&e->dx32, (size_t)(d->rows * d->k) * 4, "MoE router dx", err))
		return -1;
	return 0;
}

/* C (m x n, row-major) = op(A) op(B), A stored m x k (k x m when ta), B
 * k x n (n x k when tb), through cublasGemmEx on the swapped column-major
 * product C^T = op(B)^T op(A)^T; C fp32 when c32, else the run's type. */
struct moe_gemm {
	int ta, tb;
	int64_t m, n, k;
	const void *a, *b;
	void *c;
	int c32;
	float beta;
};

static int moe_gemm_run(cublasHandle_t h, enum sample_precision p, const struct moe_gemm *g,
			struct sp_err *err)
{
	const cudaDataType_t type = p == SAMPLE_FP16   ? CUDA_R_16F
				    : p == SAMPLE_BF16 ? CUDA_R_16BF
						       : CUDA_R_32F;
	const float one = 1.0f;
	GPU_CHECK(err, cublasGemmEx(h, g->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
				    g->ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)g->n, (int)g->m,
				    (int)g->k, &one, g->b, type, (int)(g->tb ? g->k : g->n), g->a,
				    type, (int)(g->ta ? g->m : g->k), &g->beta, g->c,
				    g->c32 ? CUDA_R_32F : type, (int)g->n, CUBLAS_COMPUTE_32F,
				    CUBLAS_GEMM_DEFAULT));
	return 0;
}

/* Softmax of each token's logits in place, then its top_k (ties to the lower
 * index): a warp a token, lane l owning experts l, l + 32, ... */
static __global__ void moe_route(float *__restrict__ probs, int64_t tokens, int experts,
				 int topk, float *__restrict__ gate, int32_t *__restrict__ expert)
{
	const int lane = threadIdx.x & 31;
	const int64_t t = (int64_t)blockIdx.x * MOE_WARPS + (threadIdx.x >> 5);
	if (t >= tokens)
		return;
	float *p = probs + t * experts;
	float top = -INFINITY, sum = 0;
	for (int e = lane; e < experts; e += 32)
		top = fmaxf(top, p[e]);
	top = warp_max(top);
	for (int e = lane; e < experts; e += 32)
		sum += expf(p[e] - top);
	sum = warp_sum(sum);
	for (int e = lane; e < experts; e += 32)
		p[e] = expf(p[e] - top) / sum;
	uint64_t taken = 0;
	for (int j = 0; j < topk; j++) {
		float bv = -1.0f;
		int be = experts;
		for (int i = 0, e = lane; e < experts; i++, e += 32)
			if (!((taken >> i) & 1) && p[e] > bv) {
				bv = p[e];
				be = e;
			}
		for (int o = 16; o; o >>= 1) {
			const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
			const int oe = __shfl_xor_sync(0xffffffffu, be, o);
			if (ov > bv || (ov == bv && oe < be)) {
				bv = ov;
				be = oe;
			}
		}
		if (lane == be % 32)
			taken |= (uint64_t)1 << (be / 32);
		if (lane == 0) {
			gate[t * topk + j] = bv;
			expert[t * topk + j] = be;
		}
	}
}

/* counts[chunk][e]: the pairs of each chunk that go to expert e. */
static __global__ void moe_count(const int32_t *__restrict__ expert, int64_t pairs, int experts,
				 int32_t *__restrict__ counts)
{
	extern __shared__ int32_t hist[];
	for (int e = threadIdx.x; e < experts; e += blockDim.x)
		hist[e] = 0;
	__syncthreads();
	const int64_t p = (int64_t)blockIdx.x * MOE_CHUNK + threadIdx.x;
	if (p < pairs)
		atomicAdd(&hist[expert[p]], 1);
	__syncthreads();
	for (int e = threadIdx.x; e < experts; e += blockDim.x)
		counts[(int64_t)blockIdx.x * experts + e] = hist[e];
}

/* One block: each chunk's count turned into its first row for that expert
 * (expert-major, chunks in order), and start[e]. */
static __global__ void moe_scan(int32_t *__restrict__ counts, int64_t chunks, int experts,
				int32_t *__restrict__ start)
{
	extern __shared__ int32_t total[];
	for (int e = threadIdx.x; e < experts; e += blockDim.x) {
		int32_t run = 0;
		for (int64_t c = 0; c < chunks; c++) {
			const int32_t n = counts[c * experts + e];
			counts[c * experts + e] = run;
			run += n;
		}
		total[e] = run;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		int32_t run = 0;
		for (int e = 0; e < experts; e++) {
			const int32_t n = total[e];
			total[e] = run;
			start[e] = run;
			run += n;
		}
		start[experts] = run;
	}
	__syncthreads();
	for (int e = threadIdx.x; e < experts; e += blockDim.x)
		for (int64_t c = 0; c < chunks; c++)
			counts[c * experts + e] += total[e];
}

/* Each pair's row: its chunk's first row for its expert plus the pairs of
 * the same expert before it in the chunk. */
static __global__ void moe_place(const int32_t *__restrict__ expert, int64_t pairs, int experts,
				 int topk, const int32_t *__restrict__ counts,
				 int32_t *__restrict__ pos, int32_t *__restrict__ token)
{
	__shared__ int32_t ex[MOE_CHUNK];
	const int64_t p = (int64_t)blockIdx.x * MOE_CHUNK + threadIdx.x;
	ex[threadIdx.x] = p < pairs ? expert[p] : -1;
	__syncthreads();
	if (p >= pairs)
		return;
	const int32_t e = ex[threadIdx.x];
	int32_t rank = 0;
	for (int i = 0; i < (int)threadIdx.x; i++)
		rank += ex[i] == e;
	const int32_t row = counts[(int64_t)blockIdx.x * experts + e] + rank;
	pos[p] = row;
	token[row] = (int32_t)(p / topk);
}

/* xp[row] = x[token[row]], V elements a thread. */
template <typename T, int V>
static __global__ void moe_gather(const T *__restrict__ x, const int32_t *__restrict__ token,
				  int64_t rows, int64_t dim, T *__restrict__ xp)
{
	const int64_t per = dim / V;
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * per;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t r = i / per, c = (i % per) * V;
		vstore<T, V>(xp + r * dim + c, vload<T, V>(x + (int64_t)token[r] * dim + c));
	}
}

/* a = gelu(h) (forward) or a = a gelu'(h) (backward, dA to dH in place). */
template <typename T, bool GRAD>
static __global__ void moe_gelu(const T *__restrict__ h, T *__restrict__ a, int64_t n)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const float hv = to_f(h[i]);
		a[i] = from_f<T>(GRAD ? to_f(a[i]) * gelu_grad_f(hv) : gelu_f(hv));
	}
}

/* out[t] = sum_j gate[t][j] rows[pos[t][j]] (+ add[t], fp32, when given):
 * the forward's combine (rows Y) and backward's dx (rows dXp, add the
 * router's dx). V elements a thread. */
template <typename T, int V>
static __global__ void moe_combine(const T *__restrict__ rows, const int32_t *__restrict__ pos,
				   const float *__restrict__ gate, const float *__restrict__ add,
				   int64_t tokens, int64_t dim, int topk, T *__restrict__ out)
{
	const int64_t per = dim / V;
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < tokens * per;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t t = i / per, c = (i % per) * V;
		float acc[V];
#pragma unroll
		for (int v = 0; v < V; v++)
			acc[v] = add ? add[t * dim + c + v] : 0.0f;
		for (int j = 0; j < topk; j++) {
			const float g = gate ? gate[t * topk + j] : 1.0f;
			const vec<T, V> y = vload<T, V>(rows + (int64_t)pos[t * topk + j] * dim + c);
#pragma unroll
			for (int v = 0; v < V; v++)
				acc[v] += g * to_f(y.v[v]);
		}
		vec<T, V> o;
#pragma unroll
		for (int v = 0; v < V; v++)
			o.v[v] = from_f<T>(acc[v]);
		vstore<T, V>(out + t * dim + c, o);
	}
}

/* A warp a token: dgate_j = dout[t] . Y[pos], dY[pos] = gate_j dout[t],
 * then dlogits = probs (dprobs - sum_j gate_j dgate_j), dprobs being dgate_j
 * at the chosen experts and 0 elsewhere. top_k <= 32: the dgate of a token
 * sit in its warp's slot of shared memory. */
template <typename T>
static __global__ void moe_route_back(const T *__restrict__ dout, const T *__restrict__ y,
				      const int32_t *__restrict__ pos,
				      const float *__restrict__ gate,
				      const int32_t *__restrict__ expert,
				      const float *__restrict__ probs, int64_t tokens, int64_t dim,
				      int experts, int topk, T *__restrict__ dy,
				      T *__restrict__ dlogits)
{
	__shared__ float dgate[MOE_WARPS][32];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int64_t t = (int64_t)blockIdx.x * MOE_WARPS + warp;
	if (t >= tokens)
		return;
	const T *g = dout + t * dim;
	float s = 0;
	for (int j = 0; j < topk; j++) {
		const int64_t row = pos[t * topk + j];
		const float w = gate[t * topk + j];
		float dot = 0;
		for (int64_t d = lane; d < dim; d += 32) {
			const float gv = to_f(g[d]);
			dot += gv * to_f(y[row * dim + d]);
			dy[row * dim + d] = from_f<T>(w * gv);
		}
		dot = warp_sum(dot);
		s += w * dot;
		if (lane == 0)
			dgate[warp][j] = dot;
	}
	__syncwarp();
	for (int e = lane; e < experts; e += 32) {
		float dp = 0;
		for (int j = 0; j < topk; j++)
			if (expert[t * topk + j] == e)
				dp = dgate[warp][j];
		dlogits[t * experts + e] = from_f<T>(probs[t * experts + e] * (dp - s));
	}
}

/* Blocks of 256 for a grid-stride kernel over n items. */
static inline unsigned moe_blocks(int64_t n)
{
	const int64_t b = (n + 255) / 256;
	return (unsigned)(b < 65536 ? b : 65536);
}

/* The gather of x's rows at 16-byte vectors when dim allows, else scalars. */
template <typename T>
static void moe_gather_launch(const T *x, const int32_t *token, int64_t rows, int64_t dim, T *xp)
{
	constexpr int V = vec16<T>();
	if (dim % V == 0)
		moe_gather<T, V><<<moe_blocks(rows * dim / V), 256>>>(x, token, rows, dim, xp);
	else
		moe_gather<T, 1><<<moe_blocks(rows * dim), 256>>>(x, token, rows, dim, xp);
}

/* moe_combine, likewise. */
template <typename T>
static void moe_combine_launch(const T *rows, const int32_t *pos, const float *gate,
			       const float *add, int64_t tokens, int64_t dim, int topk, T *out)
{
	constexpr int V = vec16<T>();
	if (dim % V == 0)
		moe_combine<T, V><<<moe_blocks(tokens * dim / V), 256>>>(rows, pos, gate, add, tokens,
									   dim, topk, out);
	else
		moe_combine<T, 1><<<moe_blocks(tokens * dim), 256>>>(rows, pos, gate, add, tokens, dim,
								       topk, out);
}

template <typename T> static int moe_forward_t(struct sample_gpu_state *st, struct sp_err *err)
{
	struct moe_extra *x = (struct moe_extra *)st->extra;
	const struct sample_dims *d = &st->s.d;
	const enum sample_precision p = st->s.p;
	const int64_t tokens = d->rows, dim = d->k, ffn = d->n, pairs = d->m;
	const int experts = (int)d->experts, topk = (int)d->topk;
	float *probs = sample_dev<float>(st, MOE_PROBS);
	const struct moe_gemm router = {0, 1, tokens, experts, dim, st->s.t[MOE_X].data,
					st->s.t[MOE_WR].data, probs, 1, 0.0f};
	if (moe_gemm_run(x->blas, p, &router, err))
		return -1;
	const unsigned warps = (unsigned)((tokens + MOE_WARPS - 1) / MOE_WARPS);
	moe_route<<<warps, 32 * MOE_WARPS>>>(probs, tokens, experts, topk,
					     sample_dev<float>(st, MOE_GATE),
					     sample_dev<int32_t>(st, MOE_EXPERT));
	const int32_t *expert = sample_dev<int32_t>(st, MOE_EXPERT);
	moe_count<<<(unsigned)x->chunks, MOE_CHUNK, experts * 4>>>(expert, pairs, experts,
								  x->counts);
	moe_scan<<<1, 256, experts * 4>>>(x->counts, x->chunks, experts, x->start);
	moe_place<<<(unsigned)x->chunks, MOE_CHUNK>>>(expert, pairs, experts, topk, x->counts,
						      x->pos, x->token);
	GPU_CHECK_LAUNCH(err, "MoE routing");
	if (gpu_download(x->hstart, x->start, (size_t)(experts + 1) * 4, err))
		return -1;
	T *xp = (T *)x->xp, *a = (T *)x->a, *h = sample_dev<T>(st, MOE_H);
	T *y = sample_dev<T>(st, MOE_Y);
	const T *w1 = sample_dev<T>(st, MOE_W1), *w2 = sample_dev<T>(st, MOE_W2);
	moe_gather_launch<T>(sample_dev<T>(st, MOE_X), x->token, pairs, dim, xp);
	GPU_CHECK_LAUNCH(err, "MoE gather");
	for (int e = 0; e < experts; e++) {
		const int64_t r0 = x->hstart[e], n = x->hstart[e + 1] - r0;
		const struct moe_gemm up = {0, 1, n, ffn, dim, xp + r0 * dim, w1 + e * ffn * dim,
					    h + r0 * ffn, 0, 0.0f};
		if (n && moe_gemm_run(x->blas, p, &up, err))
			return -1;
	}
	moe_gelu<T, false><<<moe_blocks(pairs * ffn), 256>>>(h, a, pairs * ffn);
	GPU_CHECK_LAUNCH(err, "MoE gelu");
	for (int e = 0; e < experts; e++) {
		const int64_t r0 = x->hstart[e], n = x->hstart[e + 1] - r0;
		const struct moe_gemm down = {0, 0, n, dim, ffn, a + r0 * ffn, w2 + e * ffn * dim,
					      y + r0 * dim, 0, 0.0f};
		if (n && moe_gemm_run(x->blas, p, &down, err))
			return -1;
	}
	moe_combine_launch<T>(y, x->pos, sample_dev<float>(st, MOE_GATE), NULL, tokens, dim, topk,
			      sample_dev<T>(st, MOE_OUT));
	GPU_CHECK_LAUNCH(err, "MoE combine");
	return 0;
}

template <typename T> static int moe_backward_t(struct sample_gpu_state *st, struct sp_err *err)
{
	struct moe_extra *x = (struct moe_extra *)st->extra;
	const struct sample_dims *d = &st->s.d;
	const enum sample_precision p = st->s.p;
	const int64_t tokens = d->rows, dim = d->k, ffn = d->n, pairs = d->m;
	const int experts = (int)d->experts, topk = (int)d->topk;
	T *xp = (T *)x->xp, *a = (T *)x->a, *dy = (T *)x->dy, *dl = (T *)x->dlogits;
	const T *h = sample_dev<T>(st, MOE_H), *w1 = sample_dev<T>(st, MOE_W1);
	const T *w2 = sample_dev<T>(st, MOE_W2);
	T *dw1 = sample_dev<T>(st, MOE_DW1), *dw2 = sample_dev<T>(st, MOE_DW2);
	const unsigned warps = (unsigned)((tokens + MOE_WARPS - 1) / MOE_WARPS);
	moe_route_back<T><<<warps, 32 * MOE_WARPS>>>(
		sample_dev<T>(st, MOE_DOUT), sample_dev<T>(st, MOE_Y), x->pos,
		sample_dev<float>(st, MOE_GATE), sample_dev<int32_t>(st, MOE_EXPERT),
		sample_dev<float>(st, MOE_PROBS), tokens, dim, experts, topk, dy, dl);
	GPU_CHECK_LAUNCH(err, "MoE route backward");
	/* `a` holds the forward's gelu(H) until the loop below turns it to dA. */
	const size_t wbytes = (size_t)(ffn * dim) * sizeof(T);
	for (int e = 0; e < experts; e++) {
		const int64_t r0 = x->hstart[e], n = x->hstart[e + 1] - r0;
		const struct moe_gemm g2 = {1, 0, ffn, dim, n, a + r0 * ffn, dy + r0 * dim,
					    dw2 + e * ffn * dim, 0, 0.0f};
		const struct moe_gemm ga = {0, 1, n, ffn, dim, dy + r0 * dim, w2 + e * ffn * dim,
					    a + r0 * ffn, 0, 0.0f};
		if (!n)
			GPU_CHECK(err, cudaMemsetAsync(dw2 + e * ffn * dim, 0, wbytes, 0));
		else if (moe_gemm_run(x->blas, p, &g2, err) || moe_gemm_run(x->blas, p, &ga, err))
			return -1;
	}
	moe_gelu<T, true><<<moe_blocks(pairs * ffn), 256>>>(h, a, pairs * ffn);
	GPU_CHECK_LAUNCH(err, "MoE gelu backward");
	for (int e = 0; e < experts; e++) {
		const int64_t r0 = x->hstart[e], n = x->hstart[e + 1] - r0;
		const struct moe_gemm g1 = {1, 0, ffn, dim, n, a + r0 * ffn, xp + r0 * dim,
					    dw1 + e * ffn * dim, 0, 0.0f};
		const struct moe_gemm gx = {0, 0, n, dim, ffn, a + r0 * ffn, w1 + e * ffn * dim,
					    dy + r0 * dim, 0, 0.0f};
		if (!n)
			GPU_CHECK(err, cudaMemsetAsync(dw1 + e * ffn * dim, 0, wbytes, 0));
		else if (moe_gemm_run(x->blas, p, &g1, err) || moe_gemm_run(x->blas, p, &gx, err))
			return -1;
	}
	const struct moe_gemm rx = {0, 0, tokens, dim, experts, dl, st->s.t[MOE_WR].data,
				    x->dx32, 1, 0.0f};
	const struct moe_gemm rw = {1, 0, experts, dim, tokens, dl, st->s.t[MOE_X].data,
				    st->s.t[MOE_DWR].data, 0, 0.0f};
	if (moe_gemm_run(x->blas, p, &rx, err) || moe_gemm_run(x->blas, p, &rw, err))
		return -1;
	moe_combine_launch<T>(dy, x->pos, NULL, x->dx32, tokens, dim, topk,
			      sample_dev<T>(st, MOE_DX));
	GPU_CHECK_LAUNCH(err, "MoE dx");
	return 0;
}

int sample_gpu_moe_forward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	int rc = -1;
	SAMPLE_DISPATCH(st->s.p, T, rc = moe_forward_t<T>(st, err));
	return rc;
}

int sample_gpu_moe_backward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	int rc = -1;
	SAMPLE_DISPATCH(st->s.p, T, rc = moe_backward_t<T>(st, err));
	return rc;
}
