/* The CPU reference for MACKO SpMV, the yardstick of the GPU kernel:
 * y[v] = alpha * A x[v] + beta * y_in[v], accumulated in double (the product
 * of an fp16 value and a float is exact in double, so only the sums round).
 * Each element is decoded once and applied to all the vectors (up to 16 at a
 * time), like the kernel's few-vector path; rows in parallel blocks. Every
 * stored element is multiplied, explicit zeros included, as the kernel does,
 * so an inf or NaN in x shows up in the rows that store its column. */
#include "macko/macko.h"

#include "core/half.h"
#include "macko/macko_blocks.h"

#define SPMV_MAX_VECTORS 16

struct spmv_job {
	const struct macko *m;
	const float *x;
	int nvec;
	double alpha, beta;
	const float *y_in;
	double *y;
};

static void spmv_row(void *ctx, int64_t r)
{
	const struct spmv_job *j = ctx;
	const struct macko *m = j->m;
	double acc[SPMV_MAX_VECTORS] = {0};
	int64_t col = -1;
	for (int64_t k = m->row_indices[r]; k < m->row_indices[r + 1]; k++) {
		col += 1 + macko_delta(m->deltas, k);
		double a = half_to_float(m->values[k]);
		for (int v = 0; v < j->nvec; v++)
			acc[v] += a * j->x[v * m->cols + col];
	}
	for (int v = 0; v < j->nvec; v++) {
		/* beta == 0 leaves y_in unread, as in BLAS: a NaN there does not leak */
		double prior = j->beta != 0 ? j->beta * j->y_in[v * m->rows + r] : 0;
		j->y[v * m->rows + r] = j->alpha * acc[v] + prior;
	}
}

void macko_spmv_ref(const struct macko *m, const float *x, int nvec, double alpha, double beta,
		    const float *y_in, double *y)
{
	/* More than 16 vectors: one pass per group of 16. */
	for (int v = 0; v < nvec; v += SPMV_MAX_VECTORS) {
		struct spmv_job j = {m,
				     x + v * m->cols,
				     nvec - v < SPMV_MAX_VECTORS ? nvec - v : SPMV_MAX_VECTORS,
				     alpha,
				     beta,
				     y_in ? y_in + v * m->rows : NULL,
				     y + v * m->rows};
		macko_for_rows(m->rows, m->cols, spmv_row, &j);
	}
}
