/* The MaxK kernel benchmark. Edge values are GraphSAGE's mean (1/deg);
 * features are random (seeded), so the kept entries are a realistic mix.
 * cuSPARSE multiplies the dense form of the MaxK output (CSR SpMM, row-major
 * operands, CUSPARSE_SPMM_CSR_ALG2), which is what a framework without the
 * MaxK kernels does, and its result checks our products; the CPU's top-k
 * checks ours. */
#include <cusparse.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_check.cuh"
#include "maxk/maxk_bench.h"
#include "maxk/maxk_gpu.h"

extern "C" {
#include "maxk/maxk_ref.h"
#include "core/rng.h"
#include "maxk/warp4.h"
}

struct bench {
	struct maxk_dev_graph g;
	int64_t n;
	int h, k;
	float *x, *dy, *vals, *dense, *y, *y_ref, *dx, *tmp, *dx_ref;
	void *idx; /* maxk_index_bytes(h) each */
	cusparseHandle_t sp;
	cusparseSpMatDescr_t a;
	cusparseDnMatDescr_t b, c;
	void *buf;
};

static int run_cusparse(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	const float one = 1.0f, zero = 0.0f;
	GPU_CHECK(err, cusparseSpMM(b->sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
				    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b->a, b->b, &zero, b->c,
				    CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2, b->buf));
	return 0;
}

static int run_forward(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	return maxk_forward_gpu(&b->g, b->vals, b->idx, b->h, b->k, b->y, err);
}

static int run_forward_records(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	return maxk_forward_records_gpu(&b->g, b->vals, b->idx, b->h, b->k, b->y, err);
}

static int run_backward(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	return maxk_backward_gpu(&b->g, b->idx, b->h, b->k, b->dy, b->dx, err);
}

static int run_backward_records(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	return maxk_backward_records_gpu(&b->g, b->idx, b->h, b->k, b->dy, b->dx, err);
}

static int run_backward_gather(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	return maxk_backward_gather_gpu(&b->g, b->idx, b->h, b->k, b->dy, b->dx, err);
}

static int run_topk(void *ctx, struct sp_err *err)
{
	struct bench *b = (struct bench *)ctx;
	return maxk_topk_gpu(b->x, b->n, b->h, b->k, b->vals, b->idx, err);
}

/* max |a - ref| / max |ref| over n device floats. */
static int max_err(const float *a_dev, const float *ref_dev, size_t n, double *out,
		   struct sp_err *err)
{
	float *a = (float *)malloc(n * 4), *r = (float *)malloc(n * 4);
	int rc = -1;
	if (!a || !r) {
		sp_fail(err, "out of memory for the check");
		goto done;
	}
	if (gpu_download(a, a_dev, n * 4, err) || gpu_download(r, ref_dev, n * 4, err))
		goto done;
	{
		double num = 0, den = 0;
		for (size_t i = 0; i < n; i++) {
			double d = fabs((double)a[i] - r[i]);
			num = d > num || d != d ? d : num;
			den = fabs(r[i]) > den ? fabs(r[i]) : den;
		}
		*out = den > 0 ? num / den : num;
	}
	rc = 0;
done:
	free(a);
	free(r);
	return rc;
}

/* Top-k's error against the CPU reference (maxk_topk_ref on the same
 * features), as the dense forms' max |difference| over max |reference|:
 * each row's two lists of kept columns (ascending) are merged, and a column
 * only one of them keeps counts its value in full. 0 when the kernel keeps
 * what the reference keeps, as make test-gpu wants. */
static int topk_err(const struct bench *b, double *out, struct sp_err *err)
{
	const size_t nh = (size_t)b->n * b->h, nk = (size_t)b->n * b->k;
	const int ib = maxk_index_bytes(b->h);
	float *x = (float *)malloc(nh * 4), *vals = (float *)malloc(nk * 4);
	unsigned char *idx = (unsigned char *)malloc(nk * ib);
	struct cbsr ref = {0};
	int rc = -1;
	if (!x || !vals || !idx) {
		sp_fail(err, "out of memory for the top-k check");
		goto done;
	}
	if (gpu_download(x, b->x, nh * 4, err) || gpu_download(vals, b->vals, nk * 4, err) ||
	    gpu_download(idx, b->idx, nk * ib, err) ||
	    maxk_topk_ref(x, b->n, b->h, b->k, &ref, err))
		goto done;
	{
		double num = 0, den = 0;
		for (size_t row = 0; row < nk; row += b->k) {
			size_t i = row, j = row;
			const size_t end = row + b->k;
			while (i < end || j < end) {
				const unsigned ci = i < end ? (ib == 1 ? idx[i] : ((const uint16_t *)idx)[i])
							    : UINT32_MAX;
				const unsigned cj = j < end ? ref.index[j] : UINT32_MAX;
				const double v = ci <= cj ? vals[i] : 0, r = cj <= ci ? ref.values[j] : 0;
				i += ci <= cj;
				j += cj <= ci;
				const double d = fabs(v - r);
				num = d > num || d != d ? d : num;
				den = fabs(r) > den ? fabs(r) : den;
			}
		}
		*out = den > 0 ? num / den : num;
	}
	rc = 0;
done:
	cbsr_free(&ref);
	free(x);
	free(vals);
	free(idx);
	return rc;
}

static int upload_random(float **dev, size_t n, uint64_t seed, const char *what, struct sp_err *err)
{
	float *h = (float *)malloc(n * 4);
	if (!h)
		return sp_fail(err, "out of memory for %s", what);
	struct rng r;
	rng_init(&r, seed, 0);
	for (size_t i = 0; i < n; i++)
		h[i] = (float)(2 * rng_uniform(&r) - 1);
	int rc = gpu_malloc((void **)dev, n * 4, what, err) || gpu_upload(*dev, h, n * 4, err) ? -1 : 0;
	free(h);
	return rc;
}

static void teardown(struct bench *b)
{
	if (b->a)
		cusparseDestroySpMat(b->a);
	if (b->b)
		cusparseDestroyDnMat(b->b);
	if (b->c)
		cusparseDestroyDnMat(b->c);
	if (b->sp)
		cusparseDestroy(b->sp);
	float *bufs[] = {b->x, b->dy, b->vals, b->dense, b->y, b->y_ref, b->dx, b->tmp, b->dx_ref};
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		gpu_free(bufs[i]);
	gpu_free(b->idx);
	gpu_free(b->buf);
	maxk_dev_graph_free(&b->g);
}

extern "C" int maxk_bench(const struct csr *g, const struct maxk_bench_opts *o,
			  struct maxk_bench_result *res, struct sp_err *err)
{
	struct bench b;
	memset(&b, 0, sizeof b);
	b.n = g->nrows;
	b.h = o->h;
	b.k = o->k;
	const size_t nh = (size_t)b.n * b.h, nk = (size_t)b.n * b.k;
	int64_t records = warp4_count(g->indptr, g->nrows, 64);
	float *av = (float *)malloc((size_t)(g->nnz ? g->nnz : 1) * 4);
	int32_t *w4 = (int32_t *)malloc((size_t)(records ? records : 1) * 16);
	int rc = -1;
	const float one = 1.0f, zero = 0.0f;
	size_t bytes = 0, tbytes = 0;
	if (!av || !w4) {
		sp_fail(err, "out of memory for the graph");
		goto out;
	}
	edge_values(g, EDGE_MEAN, av);
	if (warp4_build(g->indptr, g->nrows, 64, w4, "graph", err) ||
	    maxk_dev_graph_upload(g, av, w4, records, &b.g, err) ||
	    upload_random(&b.x, nh, o->seed, "features", err) ||
	    upload_random(&b.dy, nh, o->seed + 1, "gradient", err) ||
	    gpu_malloc((void **)&b.vals, nk * 4, "kept values", err) ||
	    gpu_malloc(&b.idx, nk * maxk_index_bytes(b.h), "kept indices", err) ||
	    gpu_malloc((void **)&b.dense, nh * 4, "dense features", err) ||
	    gpu_malloc((void **)&b.y, nh * 4, "y", err) || gpu_malloc((void **)&b.y_ref, nh * 4, "y", err) ||
	    gpu_malloc((void **)&b.dx, nk * 4, "dx", err) ||
	    gpu_malloc((void **)&b.tmp, nh * 4, "A^T dY", err) ||
	    gpu_malloc((void **)&b.dx_ref, nk * 4, "dx", err))
		goto out;
	if (maxk_topk_gpu(b.x, b.n, b.h, b.k, b.vals, b.idx, err) ||
	    maxk_scatter_gpu(b.vals, b.idx, b.n, b.h, b.k, b.dense, err))
		goto out;
	if (GPU_FAILED(err, cusparseCreate(&b.sp)) ||
	    GPU_FAILED(err, cusparseCreateCsr(&b.a, b.n, b.n, g->nnz, b.g.indptr, b.g.indices, b.g.vals,
					      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
					      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F)) ||
	    GPU_FAILED(err, cusparseCreateDnMat(&b.b, b.n, b.h, b.h, b.dense, CUDA_R_32F,
						CUSPARSE_ORDER_ROW)) ||
	    GPU_FAILED(err, cusparseCreateDnMat(&b.c, b.n, b.h, b.h, b.y_ref, CUDA_R_32F,
						CUSPARSE_ORDER_ROW)) ||
	    GPU_FAILED(err, cusparseSpMM_bufferSize(b.sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
						    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b.a, b.b,
						    &zero, b.c, CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2,
						    &bytes)) ||
	    GPU_FAILED(err, cusparseSpMM_bufferSize(b.sp, CUSPARSE_OPERATION_TRANSPOSE,
						    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b.a, b.b,
						    &zero, b.c, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
						    &tbytes)) ||
	    gpu_malloc(&b.buf, (bytes > tbytes ? bytes : tbytes) + 1, "cuSPARSE buffer", err))
		goto out;
	/* The references: y = A X_dense, and dX = (A^T dY) at the kept positions. */
	{
		cusparseDnMatDescr_t dy_m, tmp_m;
		if (run_cusparse(&b, err) ||
		    GPU_FAILED(err, cusparseCreateDnMat(&dy_m, b.n, b.h, b.h, b.dy, CUDA_R_32F,
							CUSPARSE_ORDER_ROW)) ||
		    GPU_FAILED(err, cusparseCreateDnMat(&tmp_m, b.n, b.h, b.h, b.tmp, CUDA_R_32F,
							CUSPARSE_ORDER_ROW)))
			goto out;
		int bad = GPU_FAILED(err, cusparseSpMM(b.sp, CUSPARSE_OPERATION_TRANSPOSE,
						       CUSPARSE_OPERATION_NON_TRANSPOSE, &one, b.a, dy_m,
						       &zero, tmp_m, CUDA_R_32F,
						       CUSPARSE_SPMM_ALG_DEFAULT, b.buf));
		cusparseDestroyDnMat(dy_m);
		cusparseDestroyDnMat(tmp_m);
		if (bad || maxk_gather_gpu(b.tmp, b.idx, b.n, b.h, b.k, b.dx_ref, err))
			goto out;
	}
	{
		const double n = (double)b.n, nnz = (double)g->nnz, h = b.h, k = b.k;
		/* The least each must move: the graph once, its inputs and output once. */
		const double ib = maxk_index_bytes(b.h), idx = ib * n * k;
		const double csr = 4 * (n + 1) + 8 * nnz, cbsr = 4 * n * k + idx, dense = 4 * n * h;
		const double fwd = 8 * nnz + cbsr + dense, bwd = 8 * nnz + idx + dense + 4 * n * k;
		const struct {
			const char *name;
			gpu_enqueue_fn run;
			double bytes;
			const float *out, *ref; /* checked after the timed runs */
			size_t count;
			/* or checked this way, where cuSPARSE has no counterpart */
			int (*check)(const struct bench *b, double *max_err, struct sp_err *err);
		} kernels[MAXK_BENCH_KERNELS] = {
			{"cusparse_spmm", run_cusparse, csr + 2 * dense, NULL, NULL, 0},
			{"maxk_forward", run_forward, 16.0 * b.g.nchunks + fwd, b.y, b.y_ref, nh},
			{"maxk_forward_records", run_forward_records, 16.0 * records + fwd, b.y, b.y_ref, nh},
			{"maxk_backward", run_backward, 16.0 * b.g.nchunks + bwd, b.dx, b.dx_ref, nk},
			{"maxk_backward_records", run_backward_records, 16.0 * records + bwd, b.dx,
			 b.dx_ref, nk},
			{"maxk_backward_gather", run_backward_gather, csr + idx + dense + 4 * n * k,
			 b.dx, b.dx_ref, nk},
			{"maxk_topk", run_topk, dense + cbsr, NULL, NULL, 0, topk_err},
		};
		for (int i = 0; i < MAXK_BENCH_KERNELS; i++) {
			res[i].kernel = kernels[i].name;
			res[i].max_err = 0; /* cuSPARSE is its own reference */
			gpu_range_push(kernels[i].name);
			int failed = gpu_time(kernels[i].run, &b, o->warmup, o->reps, o->flush_l2,
					      &res[i].t, err);
			gpu_range_pop();
			if (failed || (kernels[i].out && max_err(kernels[i].out, kernels[i].ref,
								 kernels[i].count, &res[i].max_err, err)) ||
			    (kernels[i].check && kernels[i].check(&b, &res[i].max_err, err)))
				goto out;
			res[i].bytes = kernels[i].bytes;
			res[i].gbs = kernels[i].bytes / (res[i].t.median_ms * 1e6);
		}
	}
	rc = 0;
out:
	teardown(&b);
	free(av);
	free(w4);
	return rc;
}
