/* The GEMM operators on the GPU through cuBLASLt, as PyTorch reaches them:
 * the five linears (nn.Linear on (l, b, k): Y = X W^T, linear1 with its bias
 * added in the GEMM's epilogue, as PyTorch's addmm does through cuBLASLt;
 * backward dX = dY W and dW = dY^T X, plus linear1's dbias as column sums of
 * dY), and bmm / baddbmm (beta 0) as strided batched products (backward
 * dA = dC B^T, dB = A^T dC). fp16 and bf16 accumulate in fp32; fp32 is
 * plain fp32 (CUBLAS_COMPUTE_32F, no TF32: PyTorch's default for matmul).
 * Each product's algorithm is cuBLASLt's heuristic first choice with a
 * 32 MiB workspace, as PyTorch takes it on Hopper, fixed at setup so that
 * the timed calls are the matmuls alone. Picking among the first 8
 * candidates by timing them lost to it: a large 16-bit GEMM runs at the
 * card's power limit, where a short timing judges a candidate at a clock
 * it does not keep (H200, 2026-11-28, three runs each: linear1's forward at
 * b4 l2048 dim4096 1115-1181 us picked, 1084-1085 first choice, PyTorch
 * 1128-1170; linear3 1575-1682 against 1475-1477).
 *
 * Row-major products map to cuBLASLt's column-major ones by swapping the
 * operands: C = A B row-major is C^T = B^T A^T column-major.
 *
 * dbias: blocks of 256 threads each own 256 16-byte column vectors and a
 * slice of the rows (gridDim.y slices, sized to fill the device), writing
 * fp32 partial sums that colsum_finish adds up. Bytes: dY read once. */
#include <cublasLt.h>

#include "sample/sample_gpu.cuh"

#define GEMM_WORKSPACE ((size_t)32 << 20)

/* One product, row-major: C[m][n] (batch of them) = op(A) op(B), where A is
 * stored m x k (k x m when ta) and B k x n (n x k when tb); strides between
 * the batch's matrices in elements. */
struct gemm_desc {
	int ta, tb;
	int64_t m, n, k, batch;
	const void *a, *b, *bias;
	void *c;
	int64_t sa, sb, sc;
};

struct gemm_plan {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	const void *a, *b;
	void *c;
};

struct gemm_extra {
	cublasLtHandle_t lt;
	void *workspace;
	struct gemm_plan plan[3]; /* forward, then backward's two products */
	int nplans;
	float *bias_partial;
	int bias_parts;
};

static void plan_destroy(struct gemm_plan *p)
{
	if (p->la)
		cublasLtMatrixLayoutDestroy(p->la);
	if (p->lb)
		cublasLtMatrixLayoutDestroy(p->lb);
	if (p->lc)
		cublasLtMatrixLayoutDestroy(p->lc);
	if (p->desc)
		cublasLtMatmulDescDestroy(p->desc);
}

static void gemm_release(void *extra)
{
	struct gemm_extra *e = (struct gemm_extra *)extra;
	if (!e)
		return;
	for (int i = 0; i < 3; i++)
		plan_destroy(&e->plan[i]);
	if (e->lt)
		cublasLtDestroy(e->lt);
	gpu_free(e->workspace);
	gpu_free(e->bias_partial);
	free(e);
}

/* The largest power of two up to 256 dividing every byte offset a matrix's
 * rows and batch members start at (the base pointers are 256-aligned). */
static uint32_t alignment(int64_t ld, int64_t stride, int64_t batch, size_t elem)
{
	uint32_t a = 256;
	while ((ld * (int64_t)elem) % a || (batch > 1 && (stride * (int64_t)elem) % a))
		a /= 2;
	return a;
}

static int layout(cublasLtMatrixLayout_t *l, cudaDataType_t type, int64_t rows, int64_t cols,
		  int64_t ld, int64_t batch, int64_t stride, struct sp_err *err)
{
	GPU_CHECK(err, cublasLtMatrixLayoutCreate(l, type, (uint64_t)rows, (uint64_t)cols, ld));
	if (batch > 1) {
		int32_t count = (int32_t)batch;
		GPU_CHECK(err, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
								&count, sizeof count));
		GPU_CHECK(err, cublasLtMatrixLayoutSetAttribute(
				       *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
				       sizeof stride));
	}
	return 0;
}

static int plan_run(struct gemm_extra *e, const struct gemm_plan *p, struct sp_err *err)
{
	const float one = 1.0f, zero = 0.0f;
	GPU_CHECK(err, cublasLtMatmul(e->lt, p->desc, &one, p->a, p->la, p->b, p->lb, &zero, p->c,
				      p->lc, p->c, p->lc, &p->algo, e->workspace, GEMM_WORKSPACE, 0));
	return 0;
}

static int plan_make(struct gemm_extra *e, struct gemm_plan *p, const struct gemm_desc *g,
		     enum sample_precision prec, struct sp_err *err)
{
	const cudaDataType_t type = prec == SAMPLE_FP16   ? CUDA_R_16F
				    : prec == SAMPLE_BF16 ? CUDA_R_16BF
							  : CUDA_R_32F;
	const size_t elem = prec == SAMPLE_FP32 ? 4 : 2;
	/* Column-major: D (n x m) = opA(B) (n x k) opB(A) (k x m). */
	const cublasOperation_t opa = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	const cublasOperation_t opb = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	const int64_t lda = g->tb ? g->k : g->n, ldb = g->ta ? g->m : g->k;
	p->a = g->b;
	p->b = g->a;
	p->c = g->c;
	GPU_CHECK(err, cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	GPU_CHECK(err, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa,
						      sizeof opa));
	GPU_CHECK(err, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb,
						      sizeof opb));
	if (g->bias) {
		cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
		GPU_CHECK(err, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
							      &epi, sizeof epi));
		GPU_CHECK(err, cublasLtMatmulDescSetAttribute(
				       p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias,
				       sizeof g->bias));
	}
	if (layout(&p->la, type, g->tb ? g->k : g->n, g->tb ? g->n : g->k, lda, g->batch, g->sb,
		   err) ||
	    layout(&p->lb, type, g->ta ? g->m : g->k, g->ta ? g->k : g->m, ldb, g->batch, g->sa,
		   err) ||
	    layout(&p->lc, type, g->n, g->m, g->n, g->batch, g->sc, err))
		return -1;

	cublasLtMatmulPreference_t pref;
	GPU_CHECK(err, cublasLtMatmulPreferenceCreate(&pref));
	uint64_t ws = GEMM_WORKSPACE;
	uint32_t align[3] = {alignment(lda, g->sb, g->batch, elem),
			     alignment(ldb, g->sa, g->batch, elem),
			     alignment(g->n, g->sc, g->batch, elem)};
	cublasLtMatmulHeuristicResult_t result;
	int found = 0;
	int failed =
		GPU_FAILED(err, cublasLtMatmulPreferenceSetAttribute(
					pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
		GPU_FAILED(err, cublasLtMatmulPreferenceSetAttribute(
					pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align[0], 4)) ||
		GPU_FAILED(err, cublasLtMatmulPreferenceSetAttribute(
					pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align[1], 4)) ||
		GPU_FAILED(err, cublasLtMatmulPreferenceSetAttribute(
					pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align[2], 4)) ||
		GPU_FAILED(err, cublasLtMatmulPreferenceSetAttribute(
					pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align[2], 4)) ||
		GPU_FAILED(err, cublasLtMatmulAlgoGetHeuristic(e->lt, p->desc, p->la, p->lb, p->lc,
							       p->lc, pref, 1, &result, &found));
	cublasLtMatmulPreferenceDestroy(pref);
	if (failed)
		return -1;
	if (found < 1)
		return sp_fail(err, "cuBLASLt has no algorithm for a %lld x %lld x %lld product "
				    "(batch %lld) at %s",
			       (long long)g->m, (long long)g->n, (long long)g->k,
			       (long long)g->batch, sample_precision_name(prec));
	p->algo = result.algo;
	return 0;
}

static int gemm_prepare(struct sample_gpu_state *st, const struct gemm_desc *g, int n,
			struct sp_err *err)
{
	struct gemm_extra *e = (struct gemm_extra *)calloc(1, sizeof *e);
	if (!e)
		return sp_fail(err, "out of memory for the GEMM's state");
	st->extra = e;
	st->release = gemm_release;
	GPU_CHECK(err, cublasLtCreate(&e->lt));
	if (gpu_malloc(&e->workspace, GEMM_WORKSPACE, "cuBLASLt workspace", err))
		return -1;
	for (e->nplans = 0; e->nplans < n; e->nplans++)
		if (plan_make(e, &e->plan[e->nplans], &g[e->nplans], st->s.p, err))
			return -1;
	return 0;
}

/* Rows a dbias slice sums: enough slices to give every SM about four blocks. */
static int bias_parts(int64_t rows, int64_t col_blocks, int sms)
{
	int64_t parts = (4 * (int64_t)sms + col_blocks - 1) / col_blocks;
	return (int)(parts < 1 ? 1 : parts > rows ? rows : parts > 1024 ? 1024 : parts);
}

int sample_gpu_linear_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	const int bias = st->s.t[LIN_B].count > 0;
	const struct gemm_desc g[3] = {
		{0, 1, d->m, d->n, d->k, 1, st->s.t[LIN_X].data, st->s.t[LIN_W].data,
		 bias ? st->s.t[LIN_B].data : NULL, st->s.t[LIN_Y].data, 0, 0, 0},
		{0, 0, d->m, d->k, d->n, 1, st->s.t[LIN_DY].data, st->s.t[LIN_W].data, NULL,
		 st->s.t[LIN_DX].data, 0, 0, 0},
		{1, 0, d->n, d->k, d->m, 1, st->s.t[LIN_DY].data, st->s.t[LIN_X].data, NULL,
		 st->s.t[LIN_DW].data, 0, 0, 0},
	};
	if (gemm_prepare(st, g, 3, err))
		return -1;
	if (!bias)
		return 0;
	struct gemm_extra *e = (struct gemm_extra *)st->extra;
	const int64_t per_vec = st->s.p == SAMPLE_FP32 ? 4 : 8;
	const int64_t vec = d->n % per_vec == 0 ? per_vec : 1;
	int sms;
	if (sample_gpu_sms(err, &sms))
		return -1;
	e->bias_parts = bias_parts(d->m, (d->n / vec + 255) / 256, sms);
	return gpu_malloc((void **)&e->bias_partial, (size_t)e->bias_parts * d->n * sizeof(float),
			  "dbias partial sums", err);
}

int sample_gpu_batched_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	const int64_t m = d->m, n = d->n, k = d->k, b = d->batch;
	const struct gemm_desc g[3] = {
		{0, 0, m, n, k, b, st->s.t[MM_A].data, st->s.t[MM_B].data, NULL,
		 st->s.t[MM_C].data, m * k, k * n, m * n},
		{0, 1, m, k, n, b, st->s.t[MM_DC].data, st->s.t[MM_B].data, NULL,
		 st->s.t[MM_DA].data, m * n, k * n, m * k},
		{1, 0, k, n, m, b, st->s.t[MM_A].data, st->s.t[MM_DC].data, NULL,
		 st->s.t[MM_DB].data, m * k, m * n, k * n},
	};
	return gemm_prepare(st, g, 3, err);
}

template <typename T, int V>
static __global__ void colsum_partial(const T *y, int64_t rows, int64_t cols, float *partial)
{
	const int64_t c0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V;
	const int64_t per = (rows + gridDim.y - 1) / gridDim.y, r0 = blockIdx.y * per;
	const int64_t r1 = r0 + per < rows ? r0 + per : rows;
	if (c0 >= cols)
		return;
	float acc[V] = {};
	for (int64_t r = r0; r < r1; r++) {
		vec<T, V> g = vload<T, V>(y + r * cols + c0);
#pragma unroll
		for (int e = 0; e < V; e++)
			acc[e] += to_f(g.v[e]);
	}
#pragma unroll
	for (int e = 0; e < V; e++)
		partial[blockIdx.y * cols + c0 + e] = acc[e];
}

template <typename T, int V>
static int bias_grad(const struct sample_gpu_state *st, struct sp_err *err)
{
	const struct gemm_extra *e = (const struct gemm_extra *)st->extra;
	const struct sample_dims *d = &st->s.d;
	const dim3 grid((unsigned)((d->n / V + 255) / 256), (unsigned)e->bias_parts);
	colsum_partial<T, V><<<grid, 256>>>(sample_dev<T>(st, LIN_DY), d->m, d->n, e->bias_partial);
	colsum_finish_launch<T>(e->bias_partial, e->bias_parts, d->n, sample_dev<T>(st, LIN_DB),
				(T *)NULL);
	GPU_CHECK_LAUNCH(err, "dbias");
	return 0;
}

static int gemm_forward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	struct gemm_extra *e = (struct gemm_extra *)st->extra;
	return plan_run(e, &e->plan[0], err);
}

static int gemm_backward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	struct gemm_extra *e = (struct gemm_extra *)st->extra;
	if (plan_run(e, &e->plan[1], err) || plan_run(e, &e->plan[2], err))
		return -1;
	if (!e->bias_partial)
		return 0;
	int rc = -1;
	SAMPLE_DISPATCH(st->s.p, T,
			rc = st->s.d.n % vec16<T>() == 0 ? bias_grad<T, vec16<T>()>(st, err)
							 : bias_grad<T, 1>(st, err));
	return rc;
}

int sample_gpu_linear_forward(void *state, struct sp_err *err)
{
	return gemm_forward(state, err);
}

int sample_gpu_linear_backward(void *state, struct sp_err *err)
{
	return gemm_backward(state, err);
}

int sample_gpu_batched_forward(void *state, struct sp_err *err)
{
	return gemm_forward(state, err);
}

int sample_gpu_batched_backward(void *state, struct sp_err *err)
{
	return gemm_backward(state, err);
}
