/* The graph on the GPU for the backend (gnn_backend.h: graph_create,
 * graph_free) and the dense aggregation (aggregate and its backward) by
 * cuSPARSE SpMM: y = A x, and dx = A^T dy as a plain SpMM through the
 * cached transpose, deterministic and faster than cuSPARSE's transposed
 * one. The graph's arrays are kernels/maxk/'s (maxk_dev_graph_upload),
 * shared by the MaxK and the dense aggregation.
 *
 * Bytes: an SpMM reads the graph (8 an edge) and x's rows once per
 * neighbour (from L2 where they fit), and writes y (4 n h): on reddit_like
 * at h = 256, 24.3 ms on the H200, the baseline the MaxK forward is
 * measured against (bench/RESULTS.md, maxk-train, "MaxK kernels"). */
#include <stdlib.h>
#include <string.h>

#include "gnn/gnn_gpu.cuh"

extern "C" {
#include "maxk/warp4.h"
}

/* cuSPARSE SpMM for a row-major dense operand: ALG2 is the CSR algorithm
 * for row-major layouts; ALG3 is the one to measure against it. */
static const cusparseSpMMAlg_t SPMM_ALG = CUSPARSE_SPMM_CSR_ALG2;

void gnn_gpu_graph_free(struct gnn_backend *b, struct gnn_graph *g)
{
	if (!g)
		return;
	if (g->a)
		cusparseDestroySpMat(g->a);
	if (g->at)
		cusparseDestroySpMat(g->at);
	account(impl(b), g->d.bytes, 0);
	maxk_dev_graph_free(&g->d);
	free(g);
}

int gnn_gpu_graph_create(struct gnn_backend *b, const struct csr *g, enum edge_norm norm,
			 const int32_t *warp4_host, int64_t records, struct gnn_graph **out,
			 struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	*out = NULL;
	if (csr_validate(g, CSR_CHECK_BASIC, "graph_create", err))
		return -1;
	struct gnn_graph *gg = (struct gnn_graph *)calloc(1, sizeof *gg);
	float *vals = (float *)malloc((size_t)(g->nnz ? g->nnz : 1) * sizeof *vals);
	int32_t *built = NULL;
	int rc = -1;
	if (!gg || !vals) {
		sp_fail(err, "out of host memory for a graph of %lld edges", (long long)g->nnz);
		goto out;
	}
	if (g->values)
		memcpy(vals, g->values, (size_t)g->nnz * sizeof *vals);
	else
		edge_values(g, norm, vals);
	if (!warp4_host) {
		records = warp4_count(g->indptr, g->nrows, WARP4_DEFAULT_MAX_NZ);
		built = (int32_t *)malloc((size_t)(records ? records : 1) * 16);
		if (!built) {
			sp_fail(err, "out of host memory for %lld .warp4 records",
				(long long)records);
			goto out;
		}
		if (warp4_build(g->indptr, g->nrows, WARP4_DEFAULT_MAX_NZ, built, "graph", err))
			goto out;
		warp4_host = built;
	}
	if (maxk_dev_graph_upload(g, vals, warp4_host, records, &gg->d, err))
		goto out;
	account(c, gg->d.bytes, 1);
	/* cuSPARSE is not asked to multiply by a graph without edges: the
	 * aggregation is then zero (see spmm). */
	if (g->nnz > 0 &&
	    (GPU_FAILED(err, cusparseCreateConstCsr(&gg->a, g->nrows, g->ncols, g->nnz,
						    gg->d.indptr, gg->d.indices, gg->d.vals,
						    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
						    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F)) ||
	     GPU_FAILED(err, cusparseCreateConstCsr(&gg->at, g->ncols, g->nrows, g->nnz,
						    gg->d.t_indptr, gg->d.t_indices, gg->d.t_vals,
						    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
						    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F))))
		goto out;
	rc = 0;
out:
	free(vals);
	free(built);
	if (rc == 0)
		*out = gg;
	else if (gg && gg->d.indptr)
		gnn_gpu_graph_free(b, gg);
	else
		free(gg);
	return rc;
}

/* y (n x h) = a x (x: in x h), both dense row-major; a NULL means no edges. */
static int spmm(struct cuda_backend *c, cusparseConstSpMatDescr_t a, int64_t n, int64_t in,
		const float *x, int h, float *y, struct sp_err *err)
{
	cusparseConstDnMatDescr_t xd = NULL;
	cusparseDnMatDescr_t yd = NULL;
	const float one = 1.0f, zero = 0.0f;
	size_t bytes = 0;
	void *ws = NULL;
	int rc = -1;
	if (h < 1)
		return sp_fail(err, "aggregate: feature width %d, expected 1 or more", h);
	if (n == 0)
		return 0;
	if (!a) {
		GPU_CHECK(err, cudaMemsetAsync(y, 0, (size_t)n * h * sizeof(float), 0));
		return 0;
	}
	if (GPU_FAILED(err,
		       cusparseCreateConstDnMat(&xd, in, h, h, x, CUDA_R_32F, CUSPARSE_ORDER_ROW)) ||
	    GPU_FAILED(err, cusparseCreateDnMat(&yd, n, h, h, y, CUDA_R_32F, CUSPARSE_ORDER_ROW)) ||
	    GPU_FAILED(err, cusparseSpMM_bufferSize(c->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
						    CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, xd,
						    &zero, yd, CUDA_R_32F, SPMM_ALG, &bytes)))
		goto out;
	ws = gnn_gpu_scratch(c, bytes, err);
	if (!ws || GPU_FAILED(err, cusparseSpMM(c->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
						CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, xd,
						&zero, yd, CUDA_R_32F, SPMM_ALG, ws)))
		goto out;
	rc = 0;
out:
	/* Host-side descriptors: the queued SpMM no longer needs them. */
	if (xd)
		cusparseDestroyDnMat(xd);
	if (yd)
		cusparseDestroyDnMat(yd);
	return rc;
}

int gnn_gpu_aggregate(struct gnn_backend *b, const struct gnn_graph *g, const float *x, int h,
		      float *y, struct sp_err *err)
{
	return spmm(impl(b), g->a, g->d.n, g->d.ncols, x, h, y, err);
}

/* dx = A^T dy through the cached transpose: a plain (NON_TRANSPOSE) SpMM,
 * deterministic and faster than cuSPARSE's transposed one. */
int gnn_gpu_aggregate_backward(struct gnn_backend *b, const struct gnn_graph *g,
			       const float *dy, int h, float *dx, struct sp_err *err)
{
	return spmm(impl(b), g->at, g->d.ncols, g->d.n, dy, h, dx, err);
}

