/* Graphs as MaxK-GNN stores them: NAME.indptr and NAME.indices, raw
 * little-endian int32 arrays with no header (what NumPy's ndarray.tofile
 * writes and the original generate_meta.py reads with np.fromfile). The
 * graph is square: nrows = the indptr's length - 1 nodes, indices the
 * columns, no values (a pattern). The sizes come from the files' lengths,
 * so nothing is allocated beyond what the files hold; the structure is
 * checked as every loader's is (csr_validate). */
#ifndef SPKIT_CSR_RAW_H
#define SPKIT_CSR_RAW_H

#include <stdint.h>

#include "core/err.h"
#include "sparse/csr.h"

/* The suffix that names such a graph (its indices file lies beside it). */
#define CSR_RAW_SUFFIX ".indptr"

/* path ends in ".indptr"; the indices are read from the same name ending
 * in ".indices". */
int csr_raw_load(const char *path, struct csr *g, struct sp_err *err);
/* Only the row pointers (nrows + 1, malloc'd), checked; the indices file
 * is not read (maxk-genmeta needs no neighbours). */
int csr_raw_load_indptr(const char *path, int64_t **indptr, int64_t *nrows, struct sp_err *err);

#endif
