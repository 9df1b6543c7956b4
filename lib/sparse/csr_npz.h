/* Sparse matrices and graphs in SciPy's .npz layout (scipy.sparse.save_npz):
 * members `format` (b'csr' or b'coo' as a 0-d |S3 array), `shape` (two
 * integers), and for csr `indptr`, `indices`, `data`; for coo `row`, `col`,
 * `data`. Index arrays may be any integer dtype, data any numeric dtype;
 * they are converted (with range checks) to struct csr's int64 indptr,
 * int32 indices and float values. */
#ifndef SPKIT_CSR_NPZ_H
#define SPKIT_CSR_NPZ_H

#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"
#include "formats/npz.h"

/* The whole matrix, checked with CSR_CHECK_BASIC | CSR_CHECK_FINITE. COO
 * input is converted to CSR, entries keeping their order within a row. */
int csr_npz_load(const char *path, struct csr *g, struct sp_err *err);
/* The same from an open archive (fuzzing); messages name z's path. */
int csr_npz_read(struct npz *z, struct csr *g, struct sp_err *err);

/* Only the row structure: reads `format`, `shape` and `indptr` (for coo,
 * `row`, counting entries per row), checks that indptr runs from 0 up to
 * nnz and that the other members' headers agree, and never reads
 * `indices` or `data`. *indptr is malloc'd, nrows + 1 entries. */
int csr_npz_load_indptr(const char *path, int64_t **indptr, int64_t *nrows, int64_t *ncols,
			int64_t *nnz, struct sp_err *err);

/* What scipy.sparse.save_npz writes for a csr_matrix, member for member:
 * indices (int32), indptr (int32 when nnz fits, else int64), format
 * (b'csr'), shape (int64), data (float32; ones when g->values is NULL).
 * Deflated when compress is set. Atomic. */
int csr_npz_save(const char *path, const struct csr *g, int compress, struct sp_err *err);

#endif
