/* MaxK-GNN kernels on the GPU, as plain C, correct for every k and graph.
 * lib/maxk/maxk_ref.h is the reference and says what each computes. */
#ifndef SPKIT_MAXK_GPU_H
#define SPKIT_MAXK_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "sparse/csr.h"
#include "core/err.h"

/* Hidden widths the top-k kernel keeps in registers (32 columns a lane). */
#define MAXK_GPU_MAX_WIDTH 1024

/* A graph on the device: CSR with edge values; two lists of work items
 * (int4 {row, first edge, edges, whole}): the .warp4 records it was given
 * (MaxK-GNN's, rows cut at warp_max_nz; whole = 0) and its own, rows cut
 * at MAXK_CHUNK edges (whole = 1 when the item is its row), which the
 * kernels use (measured faster: a row in one item is stored without
 * atomics); the rows none of its own items covers whole; and its transpose
 * for the gather form of the backward and for cuSPARSE. */
struct maxk_dev_graph {
	int64_t n, nnz, records, nchunks;
	int64_t ncols; /* n, or the columns of a rectangular graph (X's rows) */
	size_t bytes; /* device memory it holds */
	int32_t *indptr, *indices; /* CSR, for cuSPARSE */
	float *vals;
	int32_t *warp4;  /* records x 4 */
	int32_t *chunks; /* nchunks x 4 */
	/* the nbare rows that no chunk covers whole: empty or cut */
	int32_t *bare_rows;
	int64_t nbare;
	int32_t *t_indptr, *t_indices;
	float *t_vals;
};

#define MAXK_CHUNK 2048

int maxk_dev_graph_upload(const struct csr *g, const float *vals, const int32_t *warp4,
			  int64_t records, struct maxk_dev_graph *d, struct sp_err *err);
void maxk_dev_graph_free(struct maxk_dev_graph *d);

/* The kept entries' column indices (CBSR's index, n x k) are 8-bit when
 * h <= 256 and 16-bit above: the bytes each takes. */
static inline int maxk_index_bytes(int h)
{
	return h <= 256 ? 1 : 2;
}

/* Top-k of each row of x (n x h, device): values n x k, index n x k of
 * maxk_index_bytes(h) each (ascending columns within a row, ties to the
 * lower column, NaN kept). */
int maxk_topk_gpu(const float *x, int64_t n, int h, int k, float *values, void *index,
		  struct sp_err *err);
/* dense (n x h) = the kept entries scattered into zeros: the dense form of
 * MaxK's output, what cuSPARSE multiplies. */
int maxk_scatter_gpu(const float *values, const void *index, int64_t n, int h, int k,
		     float *dense, struct sp_err *err);
/* out (n x k) = dense[i][index[i][t]]: the backward of MaxK itself (the
 * gradient passes only at kept positions). */
int maxk_gather_gpu(const float *dense, const void *index, int64_t n, int h, int k, float *out,
		    struct sp_err *err);
/* y (n x h) = A X, X given as values/index (n x k). */
int maxk_forward_gpu(const struct maxk_dev_graph *g, const float *values, const void *index,
		     int h, int k, float *y, struct sp_err *err);
/* dx (n x k) = the gradient of X's kept values from dy (n x h), by
 * scattering with atomics from the work items (no transpose needed). */
int maxk_backward_gpu(const struct maxk_dev_graph *g, const void *index, int h, int k,
		      const float *dy, float *dx, struct sp_err *err);

/* The same two over the .warp4 records instead of the graph's own items
 * (MaxK-GNN's work split), and the backward as a gather through the
 * cached transpose: kept so the benchmark measures the choices. */
int maxk_forward_records_gpu(const struct maxk_dev_graph *g, const float *values,
			     const void *index, int h, int k, float *y, struct sp_err *err);
int maxk_backward_records_gpu(const struct maxk_dev_graph *g, const void *index, int h, int k,
			      const float *dy, float *dx, struct sp_err *err);
int maxk_backward_gather_gpu(const struct maxk_dev_graph *g, const void *index, int h, int k,
			     const float *dy, float *dx, struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
