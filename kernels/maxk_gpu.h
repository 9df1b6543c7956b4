/* MaxK-GNN kernels on the GPU, as plain C (first version: correct for every
 * k and graph; speed work is issue 4's). lib/maxk_ref.h is the reference
 * and says what each computes. */
#ifndef SPKIT_MAXK_GPU_H
#define SPKIT_MAXK_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "csr.h"
#include "err.h"

/* Hidden widths the top-k kernel keeps in registers (32 columns a lane). */
#define MAXK_GPU_MAX_WIDTH 1024

/* A graph on the device: CSR with edge values, its .warp4 records (the
 * forward pass's work items) and its transpose (the backward pass gathers
 * through it instead of scattering with atomics). */
struct maxk_dev_graph {
	int64_t n, nnz, records;
	int32_t *indptr, *indices; /* CSR, for cuSPARSE */
	float *vals;
	int32_t *warp4; /* records x 4 */
	int32_t *t_indptr, *t_indices;
	float *t_vals;
};

int maxk_dev_graph_upload(const struct csr *g, const float *vals, const int32_t *warp4,
			  int64_t records, struct maxk_dev_graph *d, struct sp_err *err);
void maxk_dev_graph_free(struct maxk_dev_graph *d);

/* Top-k of each row of x (n x h, device): values n x k, index n x k
 * (ascending columns within a row, ties to the lower column, NaN kept). */
int maxk_topk_gpu(const float *x, int64_t n, int h, int k, float *values, uint16_t *index,
		  struct sp_err *err);
/* dense (n x h) = the kept entries scattered into zeros: the dense form of
 * MaxK's output, what cuSPARSE multiplies. */
int maxk_scatter_gpu(const float *values, const uint16_t *index, int64_t n, int h, int k,
		     float *dense, struct sp_err *err);
/* out (n x k) = dense[i][index[i][t]]: the backward of MaxK itself (the
 * gradient passes only at kept positions). */
int maxk_gather_gpu(const float *dense, const uint16_t *index, int64_t n, int h, int k, float *out,
		    struct sp_err *err);
/* y (n x h) = A X, X given as values/index (n x k). */
int maxk_forward_gpu(const struct maxk_dev_graph *g, const float *values, const uint16_t *index,
		     int h, int k, float *y, struct sp_err *err);
/* dx (n x k) = the gradient of X's kept values from dy (n x h). */
int maxk_backward_gpu(const struct maxk_dev_graph *g, const uint16_t *index, int h, int k,
		      const float *dy, float *dx, struct sp_err *err);

/* The same gradient by scattering with atomics from the .warp4 records
 * (MaxK-GNN's published design); kept beside the gather form so the
 * benchmark measures both. */
int maxk_backward_scatter_gpu(const struct maxk_dev_graph *g, const uint16_t *index, int h, int k,
			      const float *dy, float *dx, struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
