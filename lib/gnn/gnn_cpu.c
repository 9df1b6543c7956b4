/* The GNN backend table (gnn_backend.h) on the host: the reference the GPU
 * backend is tested against op by op, and the training path without a GPU.
 *
 * Numerics: every sum is taken in double (gemm inner products, aggregation,
 * column and dot reductions, LayerNorm statistics, losses) and rounded to
 * float once; element-wise ops compute in double too, which for a single
 * +, -, *, / gives the correctly rounded float.
 *
 * Threads: work is cut into fixed chunks (element ranges, row ranges, C
 * tiles) for parallel_for. A chunk's result depends only on its inputs and
 * reductions add per-chunk partial sums in chunk order, so the output is
 * bitwise the same for any thread count.
 *
 * Memory is host memory: the copies are memcpy, sync has nothing to wait
 * for. alloc and release are called from one thread (the training loop's);
 * the ops never allocate through them. */
#include "gnn/gnn_backend.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/gnn_dropout.h"
#include "core/parallel.h"

/* Element-wise chunks: large enough that a thread's start-up is noise,
 * small enough that 20,000 x 256 activations spread over many threads. */
enum { ELEMS_PER_CHUNK = 1 << 16 };

struct cpu_state {
	size_t in_use, peak; /* bytes handed out by alloc and held by graphs */
};

struct gnn_graph {
	struct csr a; /* the graph, values the edge values */
	struct csr at; /* its transpose, so the backward gathers without atomics */
	size_t bytes;
};

static struct cpu_state *state_of(struct gnn_backend *b)
{
	return b->impl;
}

static void count_bytes(struct gnn_backend *b, size_t add, size_t sub)
{
	struct cpu_state *s = state_of(b);
	s->in_use = s->in_use + add - sub;
	if (s->in_use > s->peak)
		s->peak = s->in_use;
}

static int negative_size(struct sp_err *err, const char *op, int64_t m, int64_t n)
{
	if (m >= 0 && n >= 0)
		return 0;
	return sp_fail(err, "%s: size %lld x %lld is negative", op, (long long)m, (long long)n);
}

/* parallel_for over [0, count) in pieces of `per`; fn gets its chunk number
 * (for per-chunk partial sums) and its range. */
typedef void (*range_fn)(void *ctx, int64_t chunk, int64_t lo, int64_t hi);

struct ranges {
	range_fn fn;
	void *ctx;
	int64_t count, per;
};

static void range_chunk(void *p, int64_t chunk)
{
	const struct ranges *r = p;
	int64_t lo = chunk * r->per;
	r->fn(r->ctx, chunk, lo, r->count - lo < r->per ? r->count : lo + r->per);
}

static int64_t chunk_count(int64_t count, int64_t per)
{
	return (count + per - 1) / per;
}

static void parallel_ranges(int64_t count, int64_t per, range_fn fn, void *ctx)
{
	struct ranges r = {fn, ctx, count, per};
	parallel_for(chunk_count(count, per), range_chunk, &r);
}

/* Rows a chunk takes when each row holds n elements. */
static int64_t rows_per_chunk(int64_t n)
{
	return n >= ELEMS_PER_CHUNK ? 1 : ELEMS_PER_CHUNK / (n > 0 ? n : 1);
}

/* out[j] = beta out[j] + the chunks' partial sums part[c * stride + j],
 * added in chunk order; beta = 0 ignores out's old contents. */
static void add_partials(const double *part, int64_t chunks, int64_t stride, int64_t n, float beta,
			 float *out)
{
	for (int64_t j = 0; j < n; j++) {
		double s = 0;
		for (int64_t c = 0; c < chunks; c++)
			s += part[c * stride + j];
		out[j] = (float)(beta != 0 ? (double)beta * out[j] + s : s);
	}
}

static double *partials_alloc(int64_t chunks, int64_t width, const char *op, struct sp_err *err)
{
	double *p = calloc((size_t)(chunks ? chunks : 1) * (size_t)(width ? width : 1), sizeof *p);
	if (!p)
		sp_fail(err, "%s: out of memory for %lld partial sums", op,
			(long long)(chunks * width));
	return p;
}

/* ---- memory ---- */

/* A block starts with a header holding its size, so release can count it
 * off; 64 bytes keep the caller's memory cache-line aligned. */
enum { HEADER = 64 };

static void *cpu_alloc(struct gnn_backend *b, size_t bytes, struct sp_err *err)
{
	if (bytes > SIZE_MAX / 2) {
		sp_fail(err, "alloc: %zu bytes is more than memory can hold", bytes);
		return NULL;
	}
	size_t total = HEADER + (bytes + HEADER - 1) / HEADER * HEADER;
	unsigned char *p = aligned_alloc(HEADER, total);
	if (!p) {
		sp_fail(err, "alloc: out of memory for %zu bytes", bytes);
		return NULL;
	}
	memset(p, 0, total);
	memcpy(p, &bytes, sizeof bytes);
	count_bytes(b, bytes, 0);
	return p + HEADER;
}

static void cpu_release(struct gnn_backend *b, void *p)
{
	if (!p)
		return;
	unsigned char *base = (unsigned char *)p - HEADER;
	size_t bytes;
	memcpy(&bytes, base, sizeof bytes);
	count_bytes(b, 0, bytes);
	free(base);
}

static int cpu_copy(struct gnn_backend *b, void *dst, const void *src, size_t bytes,
		    struct sp_err *err)
{
	if (bytes)
		memcpy(dst, src, bytes);
	return 0;
}

static int cpu_sync(struct gnn_backend *b, struct sp_err *err)
{
	return 0;
}

static size_t cpu_peak_memory(struct gnn_backend *b)
{
	return state_of(b)->peak;
}

/* ---- graph ---- */

static size_t csr_bytes(const struct csr *g)
{
	return (size_t)(g->nrows + 1) * sizeof *g->indptr +
	       (size_t)g->nnz * (sizeof *g->indices + sizeof *g->values);
}

static void cpu_graph_free(struct gnn_backend *b, struct gnn_graph *g)
{
	if (!g)
		return;
	count_bytes(b, 0, g->bytes);
	csr_free(&g->a);
	csr_free(&g->at);
	free(g);
}

static int cpu_graph_create(struct gnn_backend *b, const struct csr *g, enum edge_norm norm,
			    const int32_t *warp4_host, int64_t records, struct gnn_graph **out,
			    struct sp_err *err)
{
	*out = NULL;
	if (csr_validate(g, CSR_CHECK_BASIC, "graph_create", err))
		return -1;
	struct gnn_graph *gg = calloc(1, sizeof *gg);
	if (!gg)
		return sp_fail(err, "graph_create: out of memory");
	if (csr_alloc(&gg->a, g->nrows, g->ncols, g->nnz, 1, "graph_create", err)) {
		free(gg);
		return -1;
	}
	memcpy(gg->a.indptr, g->indptr, (size_t)(g->nrows + 1) * sizeof *g->indptr);
	if (g->nnz)
		memcpy(gg->a.indices, g->indices, (size_t)g->nnz * sizeof *g->indices);
	if (g->values && g->nnz)
		memcpy(gg->a.values, g->values, (size_t)g->nnz * sizeof *g->values);
	else
		edge_values(g, norm, gg->a.values);
	if (csr_transpose(&gg->a, NULL, &gg->at, err)) {
		csr_free(&gg->a);
		free(gg);
		return -1;
	}
	gg->bytes = csr_bytes(&gg->a) + csr_bytes(&gg->at);
	count_bytes(b, gg->bytes, 0);
	*out = gg;
	return 0;
}

/* ---- gemm ----
 * C is cut into MC x NC tiles, one chunk each. A tile walks k in KC steps:
 * it packs its rows of op(A) and columns of op(B) for the step into double
 * panels (MR rows, NR columns, zero-padded, so the inner kernel has no edge
 * cases) and the kernel adds MR x NR blocks of products into the tile's
 * double accumulator, which is written to C with alpha and beta at the end.
 * A kernel call reads 8 KiB of A and 16 KiB of B (L1); a tile's packed
 * blocks are 128 KiB each (L2); packing costs (1/MC + 1/NC) of the
 * multiply-adds. Each of the four ta/tb cases is only a pair of strides to
 * the packing. */
enum { GEMM_MR = 4, GEMM_NR = 8, GEMM_MC = 64, GEMM_NC = 64, GEMM_KC = 256 };

struct gemm_job {
	int64_t m, n, k;
	float alpha, beta;
	const float *A, *B;
	int64_t a_row, a_col; /* op(A)[i][p] = A[i * a_row + p * a_col] */
	int64_t b_col, b_row; /* op(B)[p][j] = B[j * b_col + p * b_row] */
	float *C;
	int64_t tiles_n;
	atomic_int failed;
};

/* Panels of width w from src: element (x, p) of the block is
 * src[x * sx + p * sp], x < count (rows past count are zero), p < kc. */
static void gemm_pack(double *dst, const float *src, int64_t sx, int64_t sp, int64_t count,
		      int64_t kc, int w)
{
	for (int64_t x0 = 0; x0 < count; x0 += w)
		for (int64_t p = 0; p < kc; p++)
			for (int t = 0; t < w; t++)
				*dst++ = x0 + t < count ? src[(x0 + t) * sx + p * sp] : 0.0;
}

/* On x86-64 the kernel is also compiled for AVX2 (4-wide registers, about
 * twice the speed of SSE2), chosen at load time. Neither version fuses
 * multiply and add (no FMA in either target, no contraction in C11 mode),
 * so both give the same bits. */
#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GEMM_KERNEL_CLONES
#endif

/* c (MR x NR, row stride ldc) += a panel (kc x MR) times b panel (kc x NR).
 * Fully unrolled, the accumulators live in registers and the compiler
 * vectorises across a row of NR. Each c element adds its products in
 * order of p, so C's sums are the plain left-to-right double sums. */
GEMM_KERNEL_CLONES static void gemm_kernel(int64_t kc, const double *a, const double *b, double *c,
					   int64_t ldc)
{
	double acc[GEMM_MR][GEMM_NR];
#pragma GCC unroll 4
	for (int r = 0; r < GEMM_MR; r++)
		memcpy(acc[r], c + r * ldc, sizeof acc[r]);
	for (int64_t p = 0; p < kc; p++, a += GEMM_MR, b += GEMM_NR)
#pragma GCC unroll 4
		for (int r = 0; r < GEMM_MR; r++)
#pragma GCC unroll 8
			for (int q = 0; q < GEMM_NR; q++)
				acc[r][q] += a[r] * b[q];
#pragma GCC unroll 4
	for (int r = 0; r < GEMM_MR; r++)
		memcpy(c + r * ldc, acc[r], sizeof acc[r]);
}

static void gemm_tile(void *ctx, int64_t chunk)
{
	struct gemm_job *j = ctx;
	int64_t i0 = chunk / j->tiles_n * GEMM_MC, j0 = chunk % j->tiles_n * GEMM_NC;
	int64_t mc = j->m - i0 < GEMM_MC ? j->m - i0 : GEMM_MC;
	int64_t nc = j->n - j0 < GEMM_NC ? j->n - j0 : GEMM_NC;
	double *acc = malloc((GEMM_MC * GEMM_NC + (GEMM_MC + GEMM_NC) * GEMM_KC) * sizeof *acc);
	if (!acc) {
		atomic_store(&j->failed, 1);
		return;
	}
	memset(acc, 0, GEMM_MC * GEMM_NC * sizeof *acc); /* the panels are written by packing */
	double *ap = acc + GEMM_MC * GEMM_NC, *bp = ap + GEMM_MC * GEMM_KC;
	for (int64_t p0 = 0; j->alpha != 0 && p0 < j->k; p0 += GEMM_KC) {
		int64_t kc = j->k - p0 < GEMM_KC ? j->k - p0 : GEMM_KC;
		gemm_pack(ap, j->A + i0 * j->a_row + p0 * j->a_col, j->a_row, j->a_col, mc, kc,
			  GEMM_MR);
		gemm_pack(bp, j->B + j0 * j->b_col + p0 * j->b_row, j->b_col, j->b_row, nc, kc,
			  GEMM_NR);
		for (int64_t r = 0; r < mc; r += GEMM_MR)
			for (int64_t c = 0; c < nc; c += GEMM_NR)
				gemm_kernel(kc, ap + r * kc, bp + c * kc, acc + r * GEMM_NC + c,
					    GEMM_NC);
	}
	for (int64_t r = 0; r < mc; r++) {
		float *cr = j->C + (i0 + r) * j->n + j0;
		for (int64_t c = 0; c < nc; c++) {
			double v = (double)j->alpha * acc[r * GEMM_NC + c];
			cr[c] = (float)(j->beta != 0 ? v + (double)j->beta * cr[c] : v);
		}
	}
	free(acc);
}

static int cpu_gemm(struct gnn_backend *b, int ta, int tb, int64_t m, int64_t n, int64_t k,
		    float alpha, const float *A, const float *B, float beta, float *C,
		    struct sp_err *err)
{
	if (m < 0 || n < 0 || k < 0)
		return sp_fail(err, "gemm: size %lld x %lld x %lld is negative", (long long)m,
			       (long long)n, (long long)k);
	if (m == 0 || n == 0)
		return 0;
	struct gemm_job j = {
		.m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C,
		.a_row = ta ? 1 : k, .a_col = ta ? m : 1,
		.b_col = tb ? k : 1, .b_row = tb ? 1 : n,
		.tiles_n = chunk_count(n, GEMM_NC),
	};
	atomic_init(&j.failed, 0);
	parallel_for(chunk_count(m, GEMM_MC) * j.tiles_n, gemm_tile, &j);
	if (atomic_load(&j.failed))
		return sp_fail(err, "gemm: out of memory for the packing buffers");
	return 0;
}

/* ---- element-wise ---- */

enum ew_op { EW_AXPBY, EW_AXPY_EPS, EW_RELU, EW_RELU_BACKWARD, EW_DROPOUT, EW_ADAM };

/* One job for every element-wise op; each uses the fields its case names. */
struct ew_job {
	enum ew_op op;
	const float *x, *y_in; /* inputs; y_in is also the output for the in-place ops */
	float *y;
	double alpha, beta;
	uint64_t seed;
	float p;
	/* Adam */
	float *m1, *m2;
	double lr, beta1, beta2, eps, wd, bc1, bc2;
};

/* v where keep, else +0, by masking v's bits: a branch on a random sign
 * or dropout mask mispredicts half the time, and made ReLU four times
 * slower than axpby. */
static inline float keep_or_zero(float v, int keep)
{
	uint32_t u;
	memcpy(&u, &v, sizeof u);
	u &= -(uint32_t)(keep != 0);
	memcpy(&v, &u, sizeof v);
	return v;
}

static void ew_range(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct ew_job *j = ctx;
	switch (j->op) {
	case EW_AXPBY: /* y = alpha x + beta y */
		for (int64_t i = lo; i < hi; i++)
			j->y[i] = (float)(j->alpha * j->x[i] +
					  (j->beta != 0 ? j->beta * j->y[i] : 0));
		break;
	case EW_AXPY_EPS: /* y += (1 + eps) x, alpha holding 1 + eps */
		for (int64_t i = lo; i < hi; i++)
			j->y[i] = (float)(j->y[i] + j->alpha * j->x[i]);
		break;
	case EW_RELU: /* x < 0 is false for NaN, which passes through */
		for (int64_t i = lo; i < hi; i++)
			j->y[i] = keep_or_zero(j->x[i], !(j->x[i] < 0));
		break;
	case EW_RELU_BACKWARD: /* x is y, y_in is dy */
		for (int64_t i = lo; i < hi; i++)
			j->y[i] = keep_or_zero(j->y_in[i], j->x[i] > 0);
		break;
	case EW_DROPOUT:
		for (int64_t i = lo; i < hi; i++)
			j->y[i] = keep_or_zero((float)(j->x[i] / (1.0 - j->p)),
					       gnn_dropout_keep(j->seed, (uint64_t)i, j->p));
		break;
	case EW_ADAM: /* y is the parameter, x the gradient */
		for (int64_t i = lo; i < hi; i++) {
			double g = j->x[i] + j->wd * j->y[i];
			double m1 = j->beta1 * j->m1[i] + (1 - j->beta1) * g;
			double m2 = j->beta2 * j->m2[i] + (1 - j->beta2) * g * g;
			j->m1[i] = (float)m1;
			j->m2[i] = (float)m2;
			j->y[i] = (float)(j->y[i] -
					  j->lr * (m1 / j->bc1) / (sqrt(m2 / j->bc2) + j->eps));
		}
		break;
	}
}

static int ew_run(struct ew_job *j, int64_t count, const char *op, struct sp_err *err)
{
	if (negative_size(err, op, count, 1))
		return -1;
	parallel_ranges(count, ELEMS_PER_CHUNK, ew_range, j);
	return 0;
}

static int cpu_axpby(struct gnn_backend *b, float alpha, const float *x, float beta, float *y,
		     int64_t count, struct sp_err *err)
{
	struct ew_job j = {.op = EW_AXPBY, .x = x, .y = y, .alpha = alpha, .beta = beta};
	return ew_run(&j, count, "axpby", err);
}

static int cpu_axpy_eps(struct gnn_backend *b, const float *eps, const float *x, float *y,
			int64_t count, struct sp_err *err)
{
	struct ew_job j = {.op = EW_AXPY_EPS, .x = x, .y = y, .alpha = 1.0 + (double)*eps};
	return ew_run(&j, count, "axpy_eps", err);
}

static int cpu_relu(struct gnn_backend *b, const float *x, float *y, int64_t count,
		    struct sp_err *err)
{
	struct ew_job j = {.op = EW_RELU, .x = x, .y = y};
	return ew_run(&j, count, "relu", err);
}

static int cpu_relu_backward(struct gnn_backend *b, const float *y, const float *dy, float *dx,
			     int64_t count, struct sp_err *err)
{
	struct ew_job j = {.op = EW_RELU_BACKWARD, .x = y, .y_in = dy, .y = dx};
	return ew_run(&j, count, "relu_backward", err);
}

static int cpu_dropout(struct gnn_backend *b, const float *x, float *y, int64_t count, float p,
		       uint64_t seed, struct sp_err *err)
{
	if (!(p >= 0 && p < 1))
		return sp_fail(err, "dropout: rate %g is outside [0, 1)", (double)p);
	struct ew_job j = {.op = EW_DROPOUT, .x = x, .y = y, .p = p, .seed = seed};
	return ew_run(&j, count, "dropout", err);
}

static int cpu_adam(struct gnn_backend *b, float *param, const float *grad, float *m1, float *m2,
		    int64_t count, float lr, float beta1, float beta2, float eps,
		    float weight_decay, int64_t t, struct sp_err *err)
{
	if (t < 1)
		return sp_fail(err, "adam: step %lld is not positive", (long long)t);
	struct ew_job j = {
		.op = EW_ADAM, .x = grad, .y = param, .m1 = m1, .m2 = m2, .lr = lr,
		.beta1 = beta1, .beta2 = beta2, .eps = eps, .wd = weight_decay,
		.bc1 = 1 - pow(beta1, (double)t), .bc2 = 1 - pow(beta2, (double)t),
	};
	return ew_run(&j, count, "adam", err);
}

/* ---- row-wise and reductions ---- */

struct rows_job {
	const float *x, *dy, *gamma, *beta, *mean_in, *rstd_in;
	float *y, *mean, *rstd, *dx;
	int64_t n;
	double *part; /* per-chunk partial sums */
};

static void bias_rows(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct rows_job *j = ctx;
	for (int64_t i = lo; i < hi; i++)
		for (int64_t c = 0; c < j->n; c++)
			j->y[i * j->n + c] = (float)((double)j->y[i * j->n + c] + j->beta[c]);
}

static int cpu_bias_add(struct gnn_backend *b, float *y, const float *bias, int64_t m, int64_t n,
			struct sp_err *err)
{
	if (negative_size(err, "bias_add", m, n))
		return -1;
	struct rows_job j = {.y = y, .beta = bias, .n = n};
	parallel_ranges(m, rows_per_chunk(n), bias_rows, &j);
	return 0;
}

static void col_sum_rows(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct rows_job *j = ctx;
	double *s = j->part + chunk * j->n;
	for (int64_t i = lo; i < hi; i++)
		for (int64_t c = 0; c < j->n; c++)
			s[c] += j->dy[i * j->n + c];
}

static int cpu_col_sum(struct gnn_backend *b, const float *dy, int64_t m, int64_t n, float beta,
		       float *db, struct sp_err *err)
{
	if (negative_size(err, "col_sum", m, n))
		return -1;
	int64_t per = rows_per_chunk(n), chunks = chunk_count(m, per);
	struct rows_job j = {.dy = dy, .n = n, .part = partials_alloc(chunks, n, "col_sum", err)};
	if (!j.part)
		return -1;
	parallel_ranges(m, per, col_sum_rows, &j);
	add_partials(j.part, chunks, n, n, beta, db);
	free(j.part);
	return 0;
}

static void dot_range(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct rows_job *j = ctx;
	double s = 0;
	for (int64_t i = lo; i < hi; i++)
		s += (double)j->x[i] * j->dy[i];
	j->part[chunk] = s;
}

static int cpu_dot(struct gnn_backend *b, const float *x, const float *y, int64_t count,
		   float beta, float *out, struct sp_err *err)
{
	if (negative_size(err, "dot", count, 1))
		return -1;
	int64_t chunks = chunk_count(count, ELEMS_PER_CHUNK);
	struct rows_job j = {.x = x, .dy = y, .part = partials_alloc(chunks, 1, "dot", err)};
	if (!j.part)
		return -1;
	parallel_ranges(count, ELEMS_PER_CHUNK, dot_range, &j);
	add_partials(j.part, chunks, 1, 1, beta, out);
	free(j.part);
	return 0;
}

#define LAYERNORM_EPS 1e-5

static void layernorm_rows(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct rows_job *j = ctx;
	int64_t n = j->n;
	for (int64_t i = lo; i < hi; i++) {
		const float *x = j->x + i * n;
		double mean = 0, var = 0;
		for (int64_t c = 0; c < n; c++)
			mean += x[c];
		mean /= (double)n;
		for (int64_t c = 0; c < n; c++)
			var += (x[c] - mean) * (x[c] - mean);
		double rstd = 1 / sqrt(var / (double)n + LAYERNORM_EPS);
		for (int64_t c = 0; c < n; c++)
			j->y[i * n + c] = (float)((x[c] - mean) * rstd * j->gamma[c] + j->beta[c]);
		j->mean[i] = (float)mean;
		j->rstd[i] = (float)rstd;
	}
}

static int cpu_layernorm(struct gnn_backend *b, const float *x, const float *gamma,
			 const float *beta, int64_t m, int64_t n, float *y, float *mean,
			 float *rstd, struct sp_err *err)
{
	if (negative_size(err, "layernorm", m, n))
		return -1;
	if (n == 0 && m > 0)
		return sp_fail(err, "layernorm: rows of width 0 have no mean");
	struct rows_job j = {.x = x, .gamma = gamma, .beta = beta, .y = y, .mean = mean,
			     .rstd = rstd, .n = n};
	parallel_ranges(m, rows_per_chunk(n), layernorm_rows, &j);
	return 0;
}

/* With xhat = (x - mean) rstd and g = dy gamma (PyTorch's formula):
 * dx = rstd (g - mean(g) - xhat mean(g xhat)); the chunk's partial dgamma
 * (sum dy xhat) and dbeta (sum dy) sit side by side in part. */
static void layernorm_backward_rows(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct rows_job *j = ctx;
	int64_t n = j->n;
	double *dgamma = j->part + chunk * 2 * n, *dbeta = dgamma + n;
	for (int64_t i = lo; i < hi; i++) {
		const float *x = j->x + i * n, *dy = j->dy + i * n;
		double mean = j->mean_in[i], rstd = j->rstd_in[i], sum_g = 0, sum_gx = 0;
		for (int64_t c = 0; c < n; c++) {
			double xhat = (x[c] - mean) * rstd, g = (double)dy[c] * j->gamma[c];
			sum_g += g;
			sum_gx += g * xhat;
			dgamma[c] += dy[c] * xhat;
			dbeta[c] += dy[c];
		}
		sum_g /= (double)n;
		sum_gx /= (double)n;
		for (int64_t c = 0; c < n; c++) {
			double xhat = (x[c] - mean) * rstd, g = (double)dy[c] * j->gamma[c];
			j->dx[i * n + c] = (float)(rstd * (g - sum_g - xhat * sum_gx));
		}
	}
}

static int cpu_layernorm_backward(struct gnn_backend *b, const float *x, const float *dy,
				  const float *gamma, const float *mean, const float *rstd,
				  int64_t m, int64_t n, float *dx, float *dgamma, float *dbeta,
				  struct sp_err *err)
{
	if (negative_size(err, "layernorm_backward", m, n))
		return -1;
	int64_t per = rows_per_chunk(n), chunks = chunk_count(m, per);
	struct rows_job j = {.x = x, .dy = dy, .gamma = gamma, .mean_in = mean, .rstd_in = rstd,
			     .dx = dx, .n = n,
			     .part = partials_alloc(chunks, 2 * n, "layernorm_backward", err)};
	if (!j.part)
		return -1;
	parallel_ranges(m, per, layernorm_backward_rows, &j);
	add_partials(j.part, chunks, 2 * n, n, 0, dgamma);
	add_partials(j.part + n, chunks, 2 * n, n, 0, dbeta);
	free(j.part);
	return 0;
}

/* ---- MaxK ---- */

/* The caller's values/index as a struct cbsr for lib/maxk/maxk_ref.c; the
 * functions given a const one only read values. */
static struct cbsr cbsr_view(int64_t m, int h, int k, const float *values, const uint16_t *index)
{
	return (struct cbsr){m, h, k, (float *)values, (uint16_t *)index};
}

static int cpu_topk(struct gnn_backend *b, const float *x, int64_t m, int h, int k, float *values,
		    uint16_t *index, struct sp_err *err)
{
	if (cbsr_check(m, h, k, err))
		return sp_err_prefix(err, "topk");
	struct cbsr c = cbsr_view(m, h, k, values, index);
	maxk_topk_fill(x, &c);
	return 0;
}

static int cpu_scatter(struct gnn_backend *b, const float *values, const uint16_t *index,
		       int64_t m, int h, int k, float *dense, struct sp_err *err)
{
	if (cbsr_check(m, h, k, err))
		return sp_err_prefix(err, "scatter");
	struct cbsr c = cbsr_view(m, h, k, values, index);
	cbsr_to_dense(&c, dense);
	return 0;
}

static int cpu_gather(struct gnn_backend *b, const float *dense, const uint16_t *index, int64_t m,
		      int h, int k, float *out, struct sp_err *err)
{
	if (cbsr_check(m, h, k, err))
		return sp_err_prefix(err, "gather");
	struct cbsr c = cbsr_view(m, h, k, NULL, index);
	maxk_backward_ref(&c, dense, out);
	return 0;
}

/* ---- aggregation ---- */

/* Columns a row's double accumulator covers at once (on the stack), and
 * the run of them one call of add_scaled takes. */
enum { SPMM_COLS = 256, SPMM_RUN = 16 };

struct spmm_job {
	const struct csr *a; /* values: the edge values */
	const float *x;
	int64_t h;
	float *y;
};

/* acc += v x over w entries. Called with w = SPMM_RUN where it can be:
 * inlined with a constant count the compiler vectorises it (at -O2 only
 * loops whose count it knows), three times the speed of the plain loop. */
static inline void add_scaled(double *acc, double v, const float *x, int64_t w)
{
	for (int64_t c = 0; c < w; c++)
		acc[c] += v * x[c];
}

/* y = A x for the rows lo..hi of A, in column blocks of SPMM_COLS. */
static void spmm_rows(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct spmm_job *j = ctx;
	double acc[SPMM_COLS];
	for (int64_t r = lo; r < hi; r++)
		for (int64_t c0 = 0; c0 < j->h; c0 += SPMM_COLS) {
			int64_t w = j->h - c0 < SPMM_COLS ? j->h - c0 : SPMM_COLS;
			memset(acc, 0, (size_t)w * sizeof *acc);
			for (int64_t e = j->a->indptr[r]; e < j->a->indptr[r + 1]; e++) {
				const float *xr = j->x + j->a->indices[e] * j->h + c0;
				double v = j->a->values[e];
				int64_t c = 0;
				for (; c + SPMM_RUN <= w; c += SPMM_RUN)
					add_scaled(acc + c, v, xr + c, SPMM_RUN);
				add_scaled(acc + c, v, xr + c, w - c);
			}
			for (int64_t c = 0; c < w; c++)
				j->y[r * j->h + c0 + c] = (float)acc[c];
		}
}

static int spmm(const struct csr *a, const float *x, int h, float *y, const char *op,
		struct sp_err *err)
{
	if (negative_size(err, op, a->nrows, h))
		return -1;
	struct spmm_job j = {a, x, h, y};
	/* a row costs about h times its degree */
	int64_t per = rows_per_chunk((int64_t)h * (1 + a->nnz / (a->nrows ? a->nrows : 1)));
	parallel_ranges(a->nrows, per, spmm_rows, &j);
	return 0;
}

static int cpu_aggregate(struct gnn_backend *b, const struct gnn_graph *g, const float *x, int h,
			 float *y, struct sp_err *err)
{
	return spmm(&g->a, x, h, y, "aggregate", err);
}

static int cpu_aggregate_backward(struct gnn_backend *b, const struct gnn_graph *g,
				  const float *dy, int h, float *dx, struct sp_err *err)
{
	return spmm(&g->at, dy, h, dx, "aggregate_backward", err);
}

static int cpu_aggregate_maxk(struct gnn_backend *b, const struct gnn_graph *g,
			      const float *values, const uint16_t *index, int h, int k, float *y,
			      struct sp_err *err)
{
	if (cbsr_check(g->a.ncols, h, k, err))
		return sp_err_prefix(err, "aggregate_maxk");
	struct cbsr c = cbsr_view(g->a.ncols, h, k, values, index);
	maxk_spgemm_float(&g->a, g->a.values, &c, y);
	return 0;
}

static int cpu_aggregate_maxk_backward(struct gnn_backend *b, const struct gnn_graph *g,
				       const uint16_t *index, int h, int k, const float *dy,
				       float *dvalues, struct sp_err *err)
{
	if (cbsr_check(g->a.ncols, h, k, err))
		return sp_err_prefix(err, "aggregate_maxk_backward");
	struct cbsr c = cbsr_view(g->a.ncols, h, k, NULL, index);
	maxk_sspmm_transposed(&g->at, &c, dy, dvalues);
	return 0;
}

/* ---- rows moved between ranks ---- */

static int cpu_gather_rows(struct gnn_backend *b, const void *src, size_t row_bytes,
			   const int32_t *rows, int64_t count, void *dst, struct sp_err *err)
{
	for (int64_t i = 0; i < count; i++)
		memcpy((char *)dst + (size_t)i * row_bytes,
		       (const char *)src + (size_t)rows[i] * row_bytes, row_bytes);
	return 0;
}

static int cpu_add_rows(struct gnn_backend *b, const float *src, const int32_t *rows,
			int64_t count, int width, float *dst, struct sp_err *err)
{
	for (int64_t i = 0; i < count; i++)
		for (int c = 0; c < width; c++)
			dst[(size_t)rows[i] * width + c] += src[(size_t)i * width + c];
	return 0;
}

static int cpu_index_bytes(int h)
{
	return sizeof(uint16_t);
}

/* ---- losses ---- */

struct loss_job {
	int softmax; /* else binary cross-entropy */
	const float *logits, *targets;
	const int32_t *labels;
	const uint8_t *mask;
	int which, c;
	double scale; /* 1 / the number of terms the mean is over */
	float *dlogits;
	double *part;
};

/* The stable forms: log-sum-exp around the row's maximum; for BCE
 * max(x, 0) - x t + log1p(exp(-|x|)) and a sigmoid that never overflows. */
static void loss_rows(void *ctx, int64_t chunk, int64_t lo, int64_t hi)
{
	const struct loss_job *j = ctx;
	double sum = 0;
	for (int64_t i = lo; i < hi; i++) {
		const float *x = j->logits + i * j->c;
		float *d = j->dlogits + i * j->c;
		if (j->mask[i] != j->which) {
			memset(d, 0, (size_t)j->c * sizeof *d);
			continue;
		}
		if (j->softmax) {
			double max = x[0], se = 0;
			for (int c = 1; c < j->c; c++)
				max = x[c] > max ? x[c] : max;
			for (int c = 0; c < j->c; c++)
				se += exp(x[c] - max);
			double lse = max + log(se);
			sum += lse - x[j->labels[i]];
			for (int c = 0; c < j->c; c++)
				d[c] = (float)((exp(x[c] - lse) - (c == j->labels[i])) * j->scale);
			continue;
		}
		for (int c = 0; c < j->c; c++) {
			double v = x[c], t = j->targets[i * j->c + c], e = exp(-fabs(v));
			sum += (v > 0 ? v : 0) - v * t + log1p(e);
			double sig = v >= 0 ? 1 / (1 + e) : e / (1 + e);
			d[c] = (float)((sig - t) * j->scale);
		}
	}
	j->part[chunk] = sum;
}

static int loss_run(struct loss_job *j, int64_t m, float *loss, const char *op, struct sp_err *err)
{
	if (negative_size(err, op, m, j->c))
		return -1;
	if (j->c < 1 && m > 0)
		return sp_fail(err, "%s: no classes", op);
	int64_t count = 0;
	for (int64_t i = 0; i < m; i++) {
		if (j->mask[i] != j->which)
			continue;
		count++;
		if (j->softmax && (j->labels[i] < 0 || j->labels[i] >= j->c))
			return sp_fail(err, "%s: row %lld: label %d is outside 0..%d", op,
				       (long long)i, j->labels[i], j->c - 1);
	}
	j->scale = count ? 1.0 / ((double)count * (j->softmax ? 1 : j->c)) : 0;
	int64_t per = rows_per_chunk(j->c), chunks = chunk_count(m, per);
	if (!(j->part = partials_alloc(chunks, 1, op, err)))
		return -1;
	parallel_ranges(m, per, loss_rows, j);
	double sum = 0;
	for (int64_t c = 0; c < chunks; c++)
		sum += j->part[c];
	*loss = (float)(sum * j->scale);
	free(j->part);
	return 0;
}

static int cpu_softmax_xent(struct gnn_backend *b, const float *logits, const int32_t *labels,
			    const uint8_t *mask, int which, int64_t m, int c, float *dlogits,
			    float *loss, struct sp_err *err)
{
	struct loss_job j = {.softmax = 1, .logits = logits, .labels = labels, .mask = mask,
			     .which = which, .c = c, .dlogits = dlogits};
	return loss_run(&j, m, loss, "softmax_xent", err);
}

static int cpu_bce(struct gnn_backend *b, const float *logits, const float *targets,
		   const uint8_t *mask, int which, int64_t m, int c, float *dlogits, float *loss,
		   struct sp_err *err)
{
	struct loss_job j = {.logits = logits, .targets = targets, .mask = mask, .which = which,
			     .c = c, .dlogits = dlogits};
	return loss_run(&j, m, loss, "bce", err);
}

/* ---- the table ---- */

static void cpu_destroy(struct gnn_backend *b)
{
	if (!b)
		return;
	free(b->impl);
	free(b);
}

int gnn_cpu_backend(struct gnn_backend **out, struct sp_err *err)
{
	*out = NULL;
	struct gnn_backend *b = calloc(1, sizeof *b);
	struct cpu_state *s = calloc(1, sizeof *s);
	if (!b || !s) {
		free(b);
		free(s);
		return sp_fail(err, "cpu backend: out of memory");
	}
	*b = (struct gnn_backend){
		.name = "cpu",
		.impl = s,
		.destroy = cpu_destroy,
		.alloc = cpu_alloc,
		.release = cpu_release,
		.to_device = cpu_copy,
		.to_host = cpu_copy,
		.copy = cpu_copy,
		.sync = cpu_sync,
		.peak_memory = cpu_peak_memory,
		.graph_create = cpu_graph_create,
		.graph_free = cpu_graph_free,
		.gemm = cpu_gemm,
		.bias_add = cpu_bias_add,
		.col_sum = cpu_col_sum,
		.axpby = cpu_axpby,
		.axpy_eps = cpu_axpy_eps,
		.dot = cpu_dot,
		.relu = cpu_relu,
		.relu_backward = cpu_relu_backward,
		.dropout = cpu_dropout,
		.layernorm = cpu_layernorm,
		.layernorm_backward = cpu_layernorm_backward,
		.topk = cpu_topk,
		.scatter = cpu_scatter,
		.gather = cpu_gather,
		.aggregate = cpu_aggregate,
		.aggregate_backward = cpu_aggregate_backward,
		.aggregate_maxk = cpu_aggregate_maxk,
		.aggregate_maxk_backward = cpu_aggregate_maxk_backward,
		.gather_rows = cpu_gather_rows,
		.add_rows = cpu_add_rows,
		.index_bytes = cpu_index_bytes,
		.softmax_xent = cpu_softmax_xent,
		.bce = cpu_bce,
		.adam = cpu_adam,
	};
	*out = b;
	return 0;
}
