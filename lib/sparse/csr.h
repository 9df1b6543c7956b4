/* The CSR graph/matrix type every loader produces and every kernel reads.
 * indptr is 64-bit (edge counts pass 2^31 on large graphs); column indices
 * are 32-bit (node counts do not). values is NULL for a pattern graph. */
#ifndef SPKIT_CSR_H
#define SPKIT_CSR_H

#include <stdint.h>

#include "core/err.h"

struct csr {
	int64_t nrows, ncols, nnz;
	int64_t *indptr;  /* nrows + 1 */
	int32_t *indices; /* nnz */
	float *values;    /* nnz, or NULL for a pattern */
};

/* Largest sizes any loader accepts, so absurd headers fail cleanly
 * instead of asking malloc for petabytes. */
#define CSR_MAX_DIM ((int64_t)INT32_MAX)
#define CSR_MAX_NNZ ((int64_t)1 << 40)

enum csr_check {
	CSR_CHECK_BASIC = 0,       /* indptr[0]=0, monotone, indptr[n]=nnz, indices in range */
	CSR_CHECK_SORTED = 1 << 0, /* column indices ascending within each row */
	CSR_CHECK_UNIQUE = 1 << 1, /* no repeated column within a row (implies sorted) */
	CSR_CHECK_NONEMPTY = 1 << 2, /* at least one row */
	CSR_CHECK_FINITE = 1 << 3, /* values, if any, are finite */
};

/* Checks the structure; `name` (the file) starts the message. */
int csr_validate(const struct csr *g, unsigned checks, const char *name, struct sp_err *err);

/* Only indptr: monotone from 0 to nnz. Used by readers that load indptr alone. */
int csr_validate_indptr(const int64_t *indptr, int64_t nrows, int64_t nnz, const char *name,
			struct sp_err *err);

/* Builds CSR from coordinate triplets (rows/cols 0-based; vals may be NULL).
 * Entries keep their input order within a row (stable counting sort);
 * duplicates are kept. Indices are checked against the shape. */
int csr_from_coo(struct csr *g, int64_t nrows, int64_t ncols, int64_t nnz, const int64_t *rows,
		 const int64_t *cols, const float *vals, const char *name, struct sp_err *err);

/* Sort each row's columns ascending (values follow). Stable: repeated
 * columns keep their order. Fails only for want of memory. */
int csr_sort_rows(struct csr *g, const char *name, struct sp_err *err);

/* Keep one entry of each repeated column within a row (the first, with its
 * value), in place; rows must be sorted (csr_sort_rows). nnz and indptr
 * shrink to what is left; the arrays keep their size. */
void csr_drop_duplicates(struct csr *g);

/* at = g's transpose (ncols x nrows), values carried along when g has them
 * (or taken from vals when given, for edge values kept beside a pattern
 * graph). Stable: each row of at lists its columns in ascending order. */
int csr_transpose(const struct csr *g, const float *vals, struct csr *at, struct sp_err *err);

/* Allocate arrays for the given sizes (values only if with_values);
 * indptr is zeroed. */
int csr_alloc(struct csr *g, int64_t nrows, int64_t ncols, int64_t nnz, int with_values,
	      const char *name, struct sp_err *err);
void csr_free(struct csr *g);

#endif
