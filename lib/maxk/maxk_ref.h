/* MaxK-GNN on the CPU: the reference the GPU kernels are tested against
 * (the MaxK-GNN paper and its integration guide, "MaxK SpGEMM Integration
 * with GNN Training").
 *
 * - MaxK nonlinearity: of each row of an n x h matrix keep the k largest
 *   entries (values may be negative; ties go to the lower column), zero the
 *   rest. The kept entries in CBSR form: values n x k and column index n x k,
 *   each row's entries in ascending column order.
 * - Forward SpGEMM: Y = A X with A a CSR graph (edge values from
 *   edge_values) and X in CBSR form; Y dense n x h.
 * - Backward SSpMM: the gradient of the kept values,
 *   dX[j][t] = sum_r A[r][j] dY[r][index[j][t]], an n x k result.
 * - Backward of MaxK itself: the gradient passes only at kept positions.
 * Sums are in double precision. */
#ifndef SPKIT_MAXK_REF_H
#define SPKIT_MAXK_REF_H

#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

/* The kept entries of an n x h matrix, k a row. Column indices are 16-bit
 * here; the GPU form packs them in 8 bits when h <= 256. Hidden widths are
 * at most MAXK_MAX_WIDTH. */
struct cbsr {
	int64_t n;
	int h, k;
	float *values;    /* n x k */
	uint16_t *index;  /* n x k, ascending within a row */
};

#define MAXK_MAX_WIDTH 4096

/* Fails unless h is in 1..MAXK_MAX_WIDTH, k in 1..h and n a valid row count. */
int cbsr_check(int64_t n, int h, int k, struct sp_err *err);
int cbsr_alloc(struct cbsr *c, int64_t n, int h, int k, struct sp_err *err);
void cbsr_free(struct cbsr *c);

/* Top-k of each row of x (n x h). k in 1..h. */
int maxk_topk_ref(const float *x, int64_t n, int h, int k, struct cbsr *out, struct sp_err *err);
/* The same into out's own arrays (shape set and checked by the caller). */
void maxk_topk_fill(const float *x, struct cbsr *out);
/* The kept entries scattered back into a dense n x h matrix of zeros. */
void cbsr_to_dense(const struct cbsr *c, float *dense);
/* Backward of MaxK: grad_kept[i][t] = grad[i][index[i][t]] (n x k). */
void maxk_backward_ref(const struct cbsr *c, const float *grad, float *grad_kept);

enum edge_norm {
	EDGE_ONES, /* A[r][j] = 1 */
	EDGE_MEAN, /* 1 / deg(r): GraphSAGE's mean aggregation */
	EDGE_GCN,  /* 1 / sqrt(deg(r) deg(j)): GCN's symmetric normalisation */
};
/* Edge values of g (nnz), from the row degrees; degrees of zero give no
 * edges, so no division by zero. For EDGE_GCN the graph should be
 * symmetric (deg(j) is taken as row j's degree). */
void edge_values(const struct csr *g, enum edge_norm norm, float *vals);
/* The same for rows lo..hi-1 only: vals[e - indptr[lo]] for their edges e. */
void edge_values_rows(const struct csr *g, enum edge_norm norm, int64_t lo, int64_t hi,
		      float *vals);

/* Y = A X: y is n x h. a_vals holds A's nnz edge values. */
void maxk_spgemm_ref(const struct csr *a, const float *a_vals, const struct cbsr *x, double *y);
/* The same rounded to float (sums still in double). */
void maxk_spgemm_float(const struct csr *a, const float *a_vals, const struct cbsr *x, float *y);
/* dX[j][t] = sum over rows r with an edge (r, j) of A[r][j] dY[r][index[j][t]]:
 * dy is n x h, dx is n x k. Works through A's transpose (built here). */
int maxk_sspmm_ref(const struct csr *a, const float *a_vals, const struct cbsr *x, const float *dy,
		   double *dx, struct sp_err *err);
/* The same from A's transpose at (its values the edge values, as
 * csr_transpose carries them), built once by the caller; rounded to float. */
void maxk_sspmm_transposed(const struct csr *at, const struct cbsr *x, const float *dy, float *dx);

#endif
