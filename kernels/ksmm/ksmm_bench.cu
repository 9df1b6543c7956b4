/* ksmm-tune bench for one pattern: the tuned kernel and the baselines on
 * the same inputs, in one run, each checked against the CPU reference.
 *
 *   dense       the factor as a dense (a*b*d) x (a*c*d) matrix, one cuBLAS
 *               GEMM (fp32 without TF32; fp16/bf16 in their type, fp32
 *               accumulation)
 *   dense_tf32  the same GEMM on TF32 tensor cores (fp32 only)
 *   bmm         the algorithm of Monarch and of PascalCarrivain/ksmm's bmm
 *               baseline: X permuted to (a*d, B, c), one strided-batched
 *               GEMM against W as (a*d, b, c), the result permuted back; the
 *               two permutations are part of the time
 *   bsr         cuSPARSE SpMM with the factor in BSR: square dense blocks of
 *               gcd(b, c) when d = 1; when d > 1 no block of the support is
 *               dense (rows of a block meet their columns on a diagonal), so
 *               blocks of 1 (CSR by another name)
 * and the memory floor: the bytes every method must move at least (x, y and
 * the weights once) over the device-to-device copy bandwidth.
 *
 * The reference (ksmm_ref_factor, double) runs on a sample of the batch (64
 * columns spread over it): the CPU cannot redo a 25,088-column product for
 * every pattern, and an indexing error shows in any column. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_check.cuh"

extern "C" {
#include "core/rng.h"
#include "ksmm/ksmm_impl.h"
#include "ksmm/ksmm_value.h"
}

#define SAMPLE_HALF 32 /* batch entries checked at each end */
/* Dense baselines past this many bytes of matrix are skipped, not run. */
#define DENSE_MAX_BYTES ((size_t)8 << 30)

struct bench {
	struct ksmm_pattern p;
	int64_t batch, rows, cols, nw;
	enum ksmm_dtype t;
	enum ksmm_layout l;
	size_t es, x_bytes, y_bytes, w_bytes;
	void *host_w, *host_y; /* host_y: the sample of y */
	void *d_w_abcd, *d_w, *d_x, *d_y;
	int64_t ns;
	double *ref, ref_max;
	const struct ksmm_bench_opts *opts;
	struct ksmm_bench_result *out;
	double slow_ms; /* a dense run slower than this is timed once (0: none) */
};

static cudaDataType data_type(enum ksmm_dtype t)
{
	return t == KSMM_F32 ? CUDA_R_32F : t == KSMM_F16 ? CUDA_R_16F : CUDA_R_16BF;
}

static void fill_random(enum ksmm_dtype t, void *v, int64_t n, struct rng *r)
{
	for (int64_t i = 0; i < n; i++)
		ksmm_value_store(t, v, i, (float)(2 * rng_uniform(r) - 1));
}

/* The reference on the sample (ksmm_sample_download: the batch's two
 * ends) of x, on the GPU already. */
static int reference_make(struct bench *b, struct sp_err *err)
{
	b->ns = ksmm_sample_size(b->batch, SAMPLE_HALF);
	unsigned char *xs = (unsigned char *)malloc((size_t)(b->cols * b->ns) * b->es);
	b->ref = (double *)malloc((size_t)(b->rows * b->ns) * sizeof *b->ref);
	if (!xs || !b->ref) {
		free(xs);
		return sp_fail(err, "ksmm bench: out of host memory for the reference");
	}
	if (ksmm_sample_download(xs, b->d_x, b->cols, b->batch, b->l, b->es, SAMPLE_HALF, err)) {
		free(xs);
		return -1;
	}
	ksmm_ref_factor(&b->p, b->l, b->t, b->ns, b->host_w, xs, b->ref);
	free(xs);
	b->ref_max = 0;
	for (int64_t i = 0; i < b->rows * b->ns; i++)
		b->ref_max = fmax(b->ref_max, fabs(b->ref[i]));
	return 0;
}

/* max |y - ref| / max |ref| over the sample, INFINITY when an output is
 * not finite (the NaN poison survived). */
static int result_check(struct bench *b, double *rel, struct sp_err *err)
{
	if (ksmm_sample_download(b->host_y, b->d_y, b->rows, b->batch, b->l, b->es, SAMPLE_HALF,
				 err))
		return -1;
	double e = 0;
	for (int64_t i = 0; i < b->rows * b->ns; i++) { /* same compact layout as ref */
		const double v = ksmm_value(b->t, b->host_y, i);
		if (!isfinite(v)) {
			*rel = INFINITY;
			return 0;
		}
		e = fmax(e, fabs(v - b->ref[i]));
	}
	*rel = b->ref_max > 0 ? e / b->ref_max : e;
	return 0;
}

/* Poison y, run once, check, then time: the common path of every method.
 * With slow_ms > 0 one timed run comes first, and a method slower than
 * that stops there with status "slow" and the one run's ms: twice the bmm
 * baseline's median, which a dense GEMM of a large a*d cannot be the best
 * against (1,512,512,64 at batch 25,088 is 54 TFLOP, a second a run in fp32:
 * 13 of them per pattern were most of a grid's bench). A failure goes into
 * the method's status, never out of the bench. */
static void method_measure(struct bench *b, enum ksmm_method m, gpu_enqueue_fn enqueue, void *job,
			   double tolerance, double slow_ms)
{
	struct sp_err e = {{0}};
	struct gpu_timing t;
	double rel;
	struct ksmm_bench_result *o = b->out;
	if (GPU_FAILED(&e, cudaMemset(b->d_y, 0xff, b->y_bytes)) || enqueue(job, &e) ||
	    gpu_sync(&e) || result_check(b, &rel, &e) ||
	    (slow_ms > 0 && gpu_time(enqueue, job, 0, 1, 1, &t, &e))) {
		snprintf(o->status[m], sizeof o->status[m], "error: %.140s", e.msg);
		return;
	}
	o->rel_err[m] = rel;
	const int slow = slow_ms > 0 && t.median_ms > slow_ms;
	if (!slow && gpu_time(enqueue, job, b->opts->warmup, b->opts->reps, 1, &t, &e)) {
		snprintf(o->status[m], sizeof o->status[m], "error: %.140s", e.msg);
		return;
	}
	o->ms[m] = t.median_ms;
	snprintf(o->status[m], sizeof o->status[m], "%s",
		 rel >= tolerance ? "wrong" : slow ? "slow" : "ok");
}

static void method_skip(struct bench *b, enum ksmm_method m, const char *why)
{
	snprintf(b->out->status[m], sizeof b->out->status[m], "%.150s", why);
}

/* --- the tuned kernel --- */

struct kernel_job {
	const struct ksmm_kernel *k;
	const struct bench *b;
};

static int kernel_enqueue(void *ctx, struct sp_err *err)
{
	const struct kernel_job *j = (const struct kernel_job *)ctx;
	return ksmm_kernel_run(j->k, j->b->d_w, j->b->d_x, j->b->d_y, j->b->batch, err);
}

static void kernel_measure(struct bench *b, const struct ksmm_config *cfg)
{
	struct sp_err e = {{0}};
	struct ksmm_kernel *k;
	char why[SP_ERR_MAX];
	if (ksmm_config_check(&b->p, b->batch, b->t, b->l, cfg, why, sizeof why)) {
		snprintf(b->out->status[KSMM_M_KERNEL], sizeof b->out->status[0], "unrunnable: %.140s",
			 why);
		return;
	}
	const int rc = ksmm_kernel_get(cfg, &b->p, b->t, b->l, &k, &e);
	if (rc) {
		snprintf(b->out->status[KSMM_M_KERNEL], sizeof b->out->status[0], "%s: %.140s",
			 rc == KSMM_UNRUNNABLE ? "unrunnable" : "error", e.msg);
		return;
	}
	b->out->registers = ksmm_kernel_registers(k);
	struct kernel_job job = {k, b};
	method_measure(b, KSMM_M_KERNEL, kernel_enqueue, &job, ksmm_tolerance(b->t, cfg->tf32), 0);
	ksmm_kernel_free(k);
}

/* --- dense --- */

/* K[al*b*d + be*d + de, al*c*d + ga*d + de] = W[al,be,ga,de], into a zeroed
 * rows x cols matrix, one thread a weight. */
template <typename T>
__global__ void dense_scatter(const T *__restrict__ w, T *__restrict__ k, int a, int b, int c,
			      int d)
{
	const int64_t total = (int64_t)a * b * c * d, cols = (int64_t)a * c * d;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int de = (int)(i % d);
		const int ga = (int)(i / d % c);
		const int be = (int)(i / ((int64_t)c * d) % b);
		const int al = (int)(i / ((int64_t)b * c * d));
		k[(((int64_t)al * b + be) * d + de) * cols + ((int64_t)al * c + ga) * d + de] = w[i];
	}
}

struct dense_job {
	cublasHandle_t h;
	const struct bench *b;
	const void *k;
	cublasComputeType_t compute;
};

static int dense_enqueue(void *ctx, struct sp_err *err)
{
	const struct dense_job *j = (const struct dense_job *)ctx;
	const struct bench *b = j->b;
	const float one = 1, zero = 0;
	const cudaDataType dt = data_type(b->t);
	const int R = (int)b->rows, C = (int)b->cols, B = (int)b->batch;
	/* Row-major matrices read by column-major cuBLAS as their transposes. */
	if (b->l == KSMM_BS_LAST) /* Y^T (B x R) = X^T (B x C) K^T (C x R) */
		GPU_CHECK(err, cublasGemmEx(j->h, CUBLAS_OP_N, CUBLAS_OP_N, B, R, C, &one, b->d_x, dt,
					    B, j->k, dt, C, &zero, b->d_y, dt, B, j->compute,
					    CUBLAS_GEMM_DEFAULT));
	else /* Y^T (R x B) = K (R x C) X^T (C x B) */
		GPU_CHECK(err, cublasGemmEx(j->h, CUBLAS_OP_T, CUBLAS_OP_N, R, B, C, &one, j->k, dt,
					    C, b->d_x, dt, C, &zero, b->d_y, dt, R, j->compute,
					    CUBLAS_GEMM_DEFAULT));
	return 0;
}

/* Both dense methods failed before either ran: the reason in their rows. */
static void dense_fail(struct bench *b, void *k, const struct sp_err *e)
{
	char why[SP_ERR_MAX + 8];
	snprintf(why, sizeof why, "error: %.140s", e->msg);
	method_skip(b, KSMM_M_DENSE, why);
	method_skip(b, KSMM_M_DENSE_TF32, why);
	gpu_free(k);
}

/* skip: the bench's bits; a method left out is marked by the caller. */
static void dense_measure(struct bench *b, cublasHandle_t h, unsigned skip)
{
	const size_t bytes = (size_t)(b->rows * b->cols) * b->es;
	if (bytes > DENSE_MAX_BYTES) {
		char why[100];
		snprintf(why, sizeof why, "skipped: dense matrix of %zu bytes", bytes);
		method_skip(b, KSMM_M_DENSE, why);
		method_skip(b, KSMM_M_DENSE_TF32, why);
		return;
	}
	struct sp_err e = {{0}};
	void *k = NULL;
	if (gpu_malloc(&k, bytes, "dense factor", &e) ||
	    GPU_FAILED(&e, cudaMemset(k, 0, bytes))) {
		dense_fail(b, k, &e);
		return;
	}
	if (b->t == KSMM_F32)
		dense_scatter<float><<<1024, 256>>>((const float *)b->d_w_abcd, (float *)k,
						    (int)b->p.a, (int)b->p.b, (int)b->p.c,
						    (int)b->p.d);
	else
		dense_scatter<uint16_t><<<1024, 256>>>((const uint16_t *)b->d_w_abcd, (uint16_t *)k,
						       (int)b->p.a, (int)b->p.b, (int)b->p.c,
						       (int)b->p.d);
	if (GPU_FAILED(&e, cudaGetLastError())) {
		dense_fail(b, k, &e);
		return;
	}
	struct dense_job job = {h, b, k, CUBLAS_COMPUTE_32F};
	if (!(skip & 1u << KSMM_M_DENSE))
		method_measure(b, KSMM_M_DENSE, dense_enqueue, &job, ksmm_tolerance(b->t, 0),
			       b->slow_ms);
	if (b->t != KSMM_F32) {
		method_skip(b, KSMM_M_DENSE_TF32, "n/a");
	} else if (!(skip & 1u << KSMM_M_DENSE_TF32)) {
		job.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
		method_measure(b, KSMM_M_DENSE_TF32, dense_enqueue, &job, ksmm_tolerance(b->t, 1),
			       b->slow_ms);
	}
	gpu_free(k);
}

/* --- bmm --- */

/* Between the layout's x or y and the group-major (a*d, B, k) buffer that
 * the batched GEMM reads: element (g = al*d + de, n, k) of the buffer is
 * element al*s_al + de*s_de + n*s_n + k*s_k of the layout. One thread a
 * buffer element, the buffer side contiguous. */
struct permute_strides {
	int64_t a, d, batch, k;
	int64_t s_al, s_de, s_n, s_k;
};

template <typename T>
__global__ void group_permute(const T *__restrict__ in, T *__restrict__ out,
			      struct permute_strides s, int to_groups)
{
	const int64_t total = s.a * s.d * s.batch * s.k;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t k = i % s.k, n = i / s.k % s.batch, g = i / (s.k * s.batch);
		const int64_t o = g / s.d * s.s_al + g % s.d * s.s_de + n * s.s_n + k * s.s_k;
		if (to_groups)
			out[i] = in[o];
		else
			out[o] = in[i];
	}
}

/* Strides of x (width c, to_y 0) or y (width b, to_y 1) in the layout. */
static struct permute_strides strides_of(const struct bench *b, int64_t width)
{
	const int64_t a = b->p.a, d = b->p.d, B = b->batch;
	struct permute_strides s = {a, d, B, width, 0, 0, 0, 0};
	if (b->l == KSMM_BS_LAST) {
		s.s_al = width * d * B;
		s.s_de = B;
		s.s_n = 1;
		s.s_k = d * B;
	} else {
		s.s_al = width * d;
		s.s_de = 1;
		s.s_n = a * width * d;
		s.s_k = d;
	}
	return s;
}

struct bmm_job {
	cublasHandle_t h;
	const struct bench *b;
	void *xp, *yp;
};

static int permute_enqueue(const struct bench *b, const void *in, void *out,
			   struct permute_strides s, int to_groups, struct sp_err *err)
{
	if (b->t == KSMM_F32)
		group_permute<float><<<4096, 256>>>((const float *)in, (float *)out, s, to_groups);
	else
		group_permute<uint16_t><<<4096, 256>>>((const uint16_t *)in, (uint16_t *)out, s,
						       to_groups);
	GPU_CHECK_LAUNCH(err, "group_permute");
	return 0;
}

static int bmm_enqueue(void *ctx, struct sp_err *err)
{
	const struct bmm_job *j = (const struct bmm_job *)ctx;
	const struct bench *b = j->b;
	const int64_t B = b->batch, bb = b->p.b, c = b->p.c;
	const float one = 1, zero = 0;
	const cudaDataType dt = data_type(b->t);
	if (permute_enqueue(b, b->d_x, j->xp, strides_of(b, c), 1, err))
		return -1;
	/* Per group: Yp (B x b, row-major) = Xp (B x c) W_g^T; column-major,
	 * Yp^T (b x B) = W_g (b x c, read as its transpose) Xp^T (c x B). */
	GPU_CHECK(err, cublasGemmStridedBatchedEx(
			       j->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)bb, (int)B, (int)c, &one, b->d_w,
			       dt, (int)c, bb * c, j->xp, dt, (int)c, B * c, &zero, j->yp, dt,
			       (int)bb, B * bb, (int)(b->p.a * b->p.d), CUBLAS_COMPUTE_32F,
			       CUBLAS_GEMM_DEFAULT));
	return permute_enqueue(b, j->yp, b->d_y, strides_of(b, bb), 0, err);
}

static void bmm_measure(struct bench *b, cublasHandle_t h)
{
	struct sp_err e = {{0}};
	struct bmm_job job = {h, b, NULL, NULL};
	if (gpu_malloc(&job.xp, b->x_bytes, "bmm's permuted x", &e) ||
	    gpu_malloc(&job.yp, b->y_bytes, "bmm's permuted y", &e)) {
		char why[SP_ERR_MAX + 8];
		snprintf(why, sizeof why, "error: %.140s", e.msg);
		method_skip(b, KSMM_M_BMM, why);
	} else {
		method_measure(b, KSMM_M_BMM, bmm_enqueue, &job, ksmm_tolerance(b->t, 0), 0);
	}
	gpu_free(job.xp);
	gpu_free(job.yp);
}

/* --- cuSPARSE BSR --- */

static int64_t gcd64(int64_t x, int64_t y)
{
	while (y) {
		const int64_t t = x % y;
		x = y;
		y = t;
	}
	return x;
}

struct bsr {
	cusparseHandle_t h;
	cusparseSpMatDescr_t a;
	cusparseDnMatDescr_t x, y;
	void *rowptr, *colind, *values, *buffer;
	int64_t bs;
};

static int bsr_enqueue(void *ctx, struct sp_err *err)
{
	const struct bsr *s = (const struct bsr *)ctx;
	const float one = 1, zero = 0;
	GPU_CHECK(err, cusparseSpMM(s->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
				    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->a, s->x, &zero, s->y,
				    CUDA_R_32F, CUSPARSE_SPMM_BSR_ALG1, s->buffer));
	return 0;
}

/* The factor's blocks of bs x bs on the host: block row (al, be/bs) holds
 * block columns (al, ga/bs) for every ga when d = 1; with bs = 1 the same
 * walk gives every (al, be, de) row its c entries. Row-major blocks. */
static int bsr_build(struct bench *b, struct bsr *s, struct sp_err *err)
{
	const int64_t pb = b->p.b, c = b->p.c, d = b->p.d, bs = s->bs;
	const int64_t brows = b->rows / bs, nnzb = b->nw / (bs * bs);
	const int64_t per_row = c / bs; /* blocks a block row */
	int32_t *rowptr = (int32_t *)malloc((size_t)(brows + 1) * 4);
	int32_t *colind = (int32_t *)malloc((size_t)nnzb * 4);
	unsigned char *val = (unsigned char *)malloc((size_t)b->nw * b->es);
	int rc = -1;
	if (!rowptr || !colind || !val) {
		sp_fail(err, "bsr: out of host memory");
		goto done;
	}
	for (int64_t br = 0; br < brows; br++) {
		/* block row br covers rows br*bs ..; row r = (al*b + be)*d + de */
		const int64_t r0 = br * bs, al = r0 / (pb * d), de = r0 % d;
		rowptr[br] = (int32_t)(br * per_row);
		for (int64_t j = 0; j < per_row; j++) {
			const int64_t col0 = (al * c + j * bs) * d + de; /* first column */
			colind[br * per_row + j] = (int32_t)(col0 / bs);
			for (int64_t u = 0; u < bs; u++)
				for (int64_t v = 0; v < bs; v++) {
					const int64_t be = (r0 + u) / d % pb, ga = j * bs + v;
					const int64_t src = ((al * pb + be) * c + ga) * d + de;
					memcpy(val + ((br * per_row + j) * bs * bs + u * bs + v) * b->es,
					       (const unsigned char *)b->host_w + src * b->es, b->es);
				}
		}
	}
	rowptr[brows] = (int32_t)(brows * per_row);
	if (gpu_malloc(&s->rowptr, (size_t)(brows + 1) * 4, "bsr row offsets", err) ||
	    gpu_malloc(&s->colind, (size_t)nnzb * 4, "bsr column indices", err) ||
	    gpu_malloc(&s->values, (size_t)b->nw * b->es, "bsr values", err) ||
	    gpu_upload(s->rowptr, rowptr, (size_t)(brows + 1) * 4, err) ||
	    gpu_upload(s->colind, colind, (size_t)nnzb * 4, err) ||
	    gpu_upload(s->values, val, (size_t)b->nw * b->es, err))
		goto done;
	rc = 0;
done:
	free(rowptr);
	free(colind);
	free(val);
	return rc;
}

static int bsr_setup(struct bench *b, struct bsr *s, struct sp_err *err)
{
	if (bsr_build(b, s, err))
		return -1;
	const cudaDataType dt = data_type(b->t);
	const int64_t R = b->rows, C = b->cols, B = b->batch;
	GPU_CHECK(err, cusparseCreate(&s->h));
	GPU_CHECK(err, cusparseCreateBsr(&s->a, R / s->bs, C / s->bs, b->nw / (s->bs * s->bs), s->bs,
					 s->bs, s->rowptr, s->colind, s->values, CUSPARSE_INDEX_32I,
					 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt,
					 CUSPARSE_ORDER_ROW));
	/* bsl: X (C x B) and Y (R x B) row-major; bsf: X (B x C) row-major is
	 * X^T column-major, and Y^T = K X^T likewise. */
	if (b->l == KSMM_BS_LAST) {
		GPU_CHECK(err, cusparseCreateDnMat(&s->x, C, B, B, b->d_x, dt, CUSPARSE_ORDER_ROW));
		GPU_CHECK(err, cusparseCreateDnMat(&s->y, R, B, B, b->d_y, dt, CUSPARSE_ORDER_ROW));
	} else {
		GPU_CHECK(err, cusparseCreateDnMat(&s->x, C, B, C, b->d_x, dt, CUSPARSE_ORDER_COL));
		GPU_CHECK(err, cusparseCreateDnMat(&s->y, R, B, R, b->d_y, dt, CUSPARSE_ORDER_COL));
	}
	const float one = 1, zero = 0;
	size_t bytes = 0;
	GPU_CHECK(err, cusparseSpMM_bufferSize(s->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					       CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->a, s->x,
					       &zero, s->y, CUDA_R_32F, CUSPARSE_SPMM_BSR_ALG1,
					       &bytes));
	return gpu_malloc(&s->buffer, bytes ? bytes : 16, "cusparseSpMM buffer", err);
}

static void bsr_measure(struct bench *b)
{
	struct sp_err e = {{0}};
	struct bsr s = {};
	s.bs = b->p.d == 1 ? gcd64(b->p.b, b->p.c) : 1;
	if (bsr_setup(b, &s, &e)) {
		char why[SP_ERR_MAX + 8];
		snprintf(why, sizeof why, "error: %.140s", e.msg);
		method_skip(b, KSMM_M_BSR, why);
	} else {
		method_measure(b, KSMM_M_BSR, bsr_enqueue, &s, ksmm_tolerance(b->t, 0), b->slow_ms);
	}
	/* a teardown that fails (a broken context) makes the method's status
	 * an error too, whatever it measured */
	struct sp_err de = {{0}};
	int broken = 0;
	if (s.x && GPU_FAILED(&de, cusparseDestroyDnMat(s.x)))
		broken = 1;
	if (s.y && GPU_FAILED(&de, cusparseDestroyDnMat(s.y)))
		broken = 1;
	if (s.a && GPU_FAILED(&de, cusparseDestroySpMat(s.a)))
		broken = 1;
	if (s.h && GPU_FAILED(&de, cusparseDestroy(s.h)))
		broken = 1;
	if (broken)
		snprintf(b->out->status[KSMM_M_BSR], sizeof b->out->status[KSMM_M_BSR],
			 "error: %.140s", de.msg);
	gpu_free(s.rowptr);
	gpu_free(s.colind);
	gpu_free(s.values);
	gpu_free(s.buffer);
}

/* --- the whole bench --- */

static int inputs_make(struct bench *b, struct sp_err *err)
{
	struct rng r;
	rng_init(&r, b->opts->seed, 0);
	/* w on the CPU (the reference reads all of it), x on the GPU */
	b->host_w = malloc(b->w_bytes);
	b->host_y = malloc((size_t)(b->rows * ksmm_sample_size(b->batch, SAMPLE_HALF)) * b->es);
	if (!b->host_w || !b->host_y)
		return sp_fail(err, "ksmm bench: out of host memory for %zu bytes of weights",
			       b->w_bytes);
	fill_random(b->t, b->host_w, b->nw, &r);
	if (gpu_malloc(&b->d_w_abcd, b->w_bytes, "weights", err) ||
	    gpu_malloc(&b->d_w, b->w_bytes, "weights, kernels' layout", err) ||
	    gpu_malloc(&b->d_x, b->x_bytes, "x", err) || gpu_malloc(&b->d_y, b->y_bytes, "y", err) ||
	    gpu_upload(b->d_w_abcd, b->host_w, b->w_bytes, err) ||
	    ksmm_fill_uniform(b->d_x, b->cols * b->batch, b->t, b->opts->seed, err) ||
	    gpu_sync(err) || reference_make(b, err))
		return -1;
	return ksmm_weights_prepare(&b->p, b->t, b->d_w_abcd, b->d_w, err) || gpu_sync(err) ? -1 : 0;
}

static void bench_free(struct bench *b)
{
	free(b->host_w);
	free(b->host_y);
	free(b->ref);
	gpu_free(b->d_w_abcd);
	gpu_free(b->d_w);
	gpu_free(b->d_x);
	gpu_free(b->d_y);
}

extern "C" int ksmm_bench_pattern(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
				  enum ksmm_layout l, const struct ksmm_config *cfg,
				  const struct ksmm_bench_opts *opts, struct ksmm_bench_result *out,
				  struct sp_err *err)
{
	memset(out, 0, sizeof *out);
	for (int m = 0; m < KSMM_M_COUNT; m++) {
		out->ms[m] = NAN;
		out->rel_err[m] = NAN;
		snprintf(out->status[m], sizeof out->status[m], "not run");
	}
	if (ksmm_pattern_check(p, batch, "ksmm bench", err))
		return -1;
	struct bench b = {};
	b.p = *p;
	b.batch = batch;
	b.t = t;
	b.l = l;
	b.rows = ksmm_rows(p);
	b.cols = ksmm_cols(p);
	b.nw = p->a * p->b * p->c * p->d;
	b.es = ksmm_dtype_size(t);
	b.x_bytes = (size_t)(b.cols * batch) * b.es;
	b.y_bytes = (size_t)(b.rows * batch) * b.es;
	b.w_bytes = (size_t)b.nw * b.es;
	b.opts = opts;
	b.out = out;

	out->copy_gbs = opts->copy_gbs;
	if (out->copy_gbs <= 0 && gpu_copy_bandwidth(0, opts->reps, &out->copy_gbs, err))
		return -1;
	out->floor_ms = (double)(b.x_bytes + b.y_bytes + b.w_bytes) / (out->copy_gbs * 1e9) * 1e3;

	cublasHandle_t h = NULL;
	int rc = -1;
	if (inputs_make(&b, err) || GPU_FAILED(err, cublasCreate(&h)))
		goto done;
	gpu_range_push("ksmm kernel");
	if (!(opts->skip & 1u << KSMM_M_KERNEL))
		kernel_measure(&b, cfg);
	gpu_range_pop();
	/* bmm before the slower baselines: twice its time bounds their timing */
	gpu_range_push("ksmm bmm");
	if (!(opts->skip & 1u << KSMM_M_BMM))
		bmm_measure(&b, h);
	gpu_range_pop();
	if (!strcmp(out->status[KSMM_M_BMM], "ok"))
		b.slow_ms = 2 * out->ms[KSMM_M_BMM];
	gpu_range_push("ksmm dense");
	if ((opts->skip & (1u << KSMM_M_DENSE | 1u << KSMM_M_DENSE_TF32)) !=
	    (1u << KSMM_M_DENSE | 1u << KSMM_M_DENSE_TF32))
		dense_measure(&b, h, opts->skip);
	gpu_range_pop();
	gpu_range_push("ksmm bsr");
	if (!(opts->skip & 1u << KSMM_M_BSR))
		bsr_measure(&b);
	gpu_range_pop();
	for (int m = 0; m < KSMM_M_COUNT; m++)
		if (opts->skip & 1u << m)
			method_skip(&b, (enum ksmm_method)m, "skipped");
	rc = 0;
done:
	if (h) {
		struct sp_err de;
		if (GPU_FAILED(&de, cublasDestroy(h)) && rc == 0) {
			*err = de; /* the first failure is the one reported */
			rc = -1;
		}
	}
	bench_free(&b);
	return rc;
}
