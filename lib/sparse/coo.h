/* Coordinate entries as the text readers collect them, and their conversion
 * to CSR with every row sorted by column.
 *
 * Ids are 32-bit (every CSR column index is), so a 100M-entry file costs
 * 12 bytes an entry here rather than the 20 of csr_from_coo's int64 input.
 * coo_to_csr places entries by row with stable counting sorts that keep
 * their cursors in cache (entries are first spread into blocks of a few
 * thousand rows when there are many), then sorts each row with a stable
 * sort that is linear on the short and already-sorted rows most files
 * have; csr_from_coo + csr_sort_rows would qsort every row and lose the
 * input order of duplicates. */
#ifndef SPKIT_COO_H
#define SPKIT_COO_H

#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

struct coo {
	int64_t n, cap;
	int32_t *rows, *cols;
	float *vals; /* NULL for a pattern */
};

/* Room for cap entries to start with; values only if with_values. */
int coo_init(struct coo *c, int64_t cap, int with_values, const char *name, struct sp_err *err);
/* Grow the arrays by half again (called by coo_push when full). */
int coo_grow(struct coo *c, const char *name, struct sp_err *err);
void coo_free(struct coo *c);

static inline int coo_push(struct coo *c, int32_t row, int32_t col, float val, const char *name,
			   struct sp_err *err)
{
	if (c->n == c->cap && coo_grow(c, name, err))
		return -1;
	c->rows[c->n] = row;
	c->cols[c->n] = col;
	if (c->vals)
		c->vals[c->n] = val;
	c->n++;
	return 0;
}

enum coo_mirror {
	COO_AS_GIVEN,       /* each entry once */
	COO_MIRROR,         /* off-diagonal (i, j, v) also gives (j, i, v) */
	COO_MIRROR_NEGATED, /* ... gives (j, i, -v): skew-symmetric */
};

/* CSR of the entries (and their mirrors), each row sorted by column;
 * entries at the same (row, column) keep their input order, a mirror right
 * after its entry; duplicates are kept. Indices are checked against the
 * shape; a mirror needs a square shape. The entries are freed as soon as
 * they are copied, so c is empty afterwards whether or not this succeeds.
 * Peak memory, with many rows: the entries twice over (12 bytes each, with
 * mirrors counted), then once plus the CSR. */
int coo_to_csr(struct coo *c, int64_t nrows, int64_t ncols, enum coo_mirror mirror,
	       struct csr *g, const char *name, struct sp_err *err);

#endif
