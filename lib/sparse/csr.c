#include "sparse/csr.h"

#include "core/memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int csr_alloc(struct csr *g, int64_t nrows, int64_t ncols, int64_t nnz, int with_values,
	      const char *name, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	if (nrows < 0 || ncols < 0 || nnz < 0 || nrows > CSR_MAX_DIM || ncols > CSR_MAX_DIM ||
	    nnz > CSR_MAX_NNZ)
		return sp_fail(err, "%s: absurd size %lld x %lld with %lld entries", name,
			       (long long)nrows, (long long)ncols, (long long)nnz);
	/* The arrays, and as much again for the row cursor or transpose that
	 * every builder keeps beside them. */
	uint64_t bytes = 2 * ((uint64_t)nrows + 1) * sizeof *g->indptr +
			 (uint64_t)nnz * (sizeof *g->indices + (with_values ? sizeof *g->values : 0));
	char what[300];
	snprintf(what, sizeof what, "%s: %lld x %lld with %lld entries", name, (long long)nrows,
		 (long long)ncols, (long long)nnz);
	if (mem_check(bytes, what, err))
		return -1;
	g->nrows = nrows;
	g->ncols = ncols;
	g->nnz = nnz;
	g->indptr = calloc((size_t)nrows + 1, sizeof *g->indptr);
	g->indices = malloc((size_t)(nnz ? nnz : 1) * sizeof *g->indices);
	if (with_values)
		g->values = malloc((size_t)(nnz ? nnz : 1) * sizeof *g->values);
	if (!g->indptr || !g->indices || (with_values && !g->values)) {
		csr_free(g);
		return sp_fail(err, "%s: out of memory for %lld rows and %lld entries", name,
			       (long long)nrows, (long long)nnz);
	}
	return 0;
}

void csr_free(struct csr *g)
{
	free(g->indptr);
	free(g->indices);
	free(g->values);
	memset(g, 0, sizeof *g);
}

int csr_validate_indptr(const int64_t *indptr, int64_t nrows, int64_t nnz, const char *name,
			struct sp_err *err)
{
	if (indptr[0] != 0)
		return sp_fail(err, "%s: indptr[0] is %lld, expected 0", name, (long long)indptr[0]);
	for (int64_t r = 0; r < nrows; r++) {
		if (indptr[r + 1] < indptr[r])
			return sp_fail(err, "%s: indptr decreases at row %lld (%lld after %lld)", name,
				       (long long)r, (long long)indptr[r + 1], (long long)indptr[r]);
	}
	if (indptr[nrows] != nnz)
		return sp_fail(err, "%s: indptr ends at %lld but there are %lld entries", name,
			       (long long)indptr[nrows], (long long)nnz);
	return 0;
}

int csr_validate(const struct csr *g, unsigned checks, const char *name, struct sp_err *err)
{
	if (g->nrows < 0 || g->ncols < 0 || g->nnz < 0)
		return sp_fail(err, "%s: negative shape", name);
	if ((checks & CSR_CHECK_NONEMPTY) && g->nrows == 0)
		return sp_fail(err, "%s: graph has no rows", name);
	if (csr_validate_indptr(g->indptr, g->nrows, g->nnz, name, err))
		return -1;
	int sorted = checks & (CSR_CHECK_SORTED | CSR_CHECK_UNIQUE);
	int unique = checks & CSR_CHECK_UNIQUE;
	for (int64_t r = 0; r < g->nrows; r++) {
		for (int64_t j = g->indptr[r]; j < g->indptr[r + 1]; j++) {
			int32_t c = g->indices[j];
			if (c < 0 || c >= g->ncols)
				return sp_fail(err, "%s: row %lld has column %d outside [0, %lld)", name,
					       (long long)r, c, (long long)g->ncols);
			if (j > g->indptr[r]) {
				int32_t prev = g->indices[j - 1];
				if (sorted && c < prev)
					return sp_fail(err, "%s: row %lld is not sorted (column %d after %d)",
						       name, (long long)r, c, prev);
				if (unique && c == prev)
					return sp_fail(err, "%s: row %lld repeats column %d", name,
						       (long long)r, c);
			}
		}
	}
	if ((checks & CSR_CHECK_FINITE) && g->values) {
		for (int64_t j = 0; j < g->nnz; j++)
			if (!isfinite(g->values[j]))
				return sp_fail(err, "%s: entry %lld is not finite", name, (long long)j);
	}
	return 0;
}

int csr_from_coo(struct csr *g, int64_t nrows, int64_t ncols, int64_t nnz, const int64_t *rows,
		 const int64_t *cols, const float *vals, const char *name, struct sp_err *err)
{
	for (int64_t i = 0; i < nnz; i++) {
		if (rows[i] < 0 || rows[i] >= nrows || cols[i] < 0 || cols[i] >= ncols)
			return sp_fail(err, "%s: entry %lld at (%lld, %lld) is outside the %lld x %lld shape",
				       name, (long long)i, (long long)rows[i], (long long)cols[i],
				       (long long)nrows, (long long)ncols);
	}
	if (csr_alloc(g, nrows, ncols, nnz, vals != NULL, name, err))
		return -1;
	for (int64_t i = 0; i < nnz; i++)
		g->indptr[rows[i] + 1]++;
	for (int64_t r = 0; r < nrows; r++)
		g->indptr[r + 1] += g->indptr[r];
	int64_t *next = malloc((size_t)(nrows ? nrows : 1) * sizeof *next);
	if (!next) {
		csr_free(g);
		return sp_fail(err, "%s: out of memory", name);
	}
	memcpy(next, g->indptr, (size_t)nrows * sizeof *next);
	for (int64_t i = 0; i < nnz; i++) {
		int64_t at = next[rows[i]]++;
		g->indices[at] = (int32_t)cols[i];
		if (vals)
			g->values[at] = vals[i];
	}
	free(next);
	return 0;
}

struct entry {
	int32_t col;
	int32_t pos; /* place in the row: the tie-break that makes qsort stable */
	float val;
};

static int by_col(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->col != y->col)
		return (x->col > y->col) - (x->col < y->col);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

int csr_sort_rows(struct csr *g, const char *name, struct sp_err *err)
{
	int64_t widest = 0;
	for (int64_t r = 0; r < g->nrows; r++)
		if (g->indptr[r + 1] - g->indptr[r] > widest)
			widest = g->indptr[r + 1] - g->indptr[r];
	struct entry *tmp = malloc((size_t)(widest ? widest : 1) * sizeof *tmp);
	if (!tmp)
		return sp_fail(err, "%s: out of memory to sort a row of %lld entries", name,
			       (long long)widest);
	for (int64_t r = 0; r < g->nrows; r++) {
		int64_t b = g->indptr[r], n = g->indptr[r + 1] - b;
		for (int64_t j = 0; j < n; j++)
			tmp[j] = (struct entry){g->indices[b + j], (int32_t)j,
						g->values ? g->values[b + j] : 0};
		qsort(tmp, (size_t)n, sizeof *tmp, by_col);
		for (int64_t j = 0; j < n; j++) {
			g->indices[b + j] = tmp[j].col;
			if (g->values)
				g->values[b + j] = tmp[j].val;
		}
	}
	free(tmp);
	return 0;
}

void csr_drop_duplicates(struct csr *g)
{
	int64_t out = 0, begin = 0;
	for (int64_t r = 0; r < g->nrows; r++) {
		int64_t end = g->indptr[r + 1], row_out = out;
		for (int64_t j = begin; j < end; j++) {
			/* Sorted: a repeat equals the entry kept last in this row. */
			if (out > row_out && g->indices[j] == g->indices[out - 1])
				continue;
			g->indices[out] = g->indices[j];
			if (g->values)
				g->values[out] = g->values[j];
			out++;
		}
		begin = end;
		g->indptr[r + 1] = out;
	}
	g->nnz = out;
}

int csr_transpose(const struct csr *g, const float *vals, struct csr *at, struct sp_err *err)
{
	if (!vals)
		vals = g->values;
	if (csr_alloc(at, g->ncols, g->nrows, g->nnz, vals != NULL, "transpose", err))
		return -1;
	for (int64_t e = 0; e < g->nnz; e++)
		at->indptr[g->indices[e] + 1]++;
	for (int64_t j = 0; j < at->nrows; j++)
		at->indptr[j + 1] += at->indptr[j];
	int64_t *next = malloc((size_t)(at->nrows ? at->nrows : 1) * sizeof *next);
	if (!next) {
		csr_free(at);
		return sp_fail(err, "transpose: out of memory");
	}
	memcpy(next, at->indptr, (size_t)at->nrows * sizeof *next);
	for (int64_t r = 0; r < g->nrows; r++)
		for (int64_t e = g->indptr[r]; e < g->indptr[r + 1]; e++) {
			int64_t to = next[g->indices[e]]++;
			at->indices[to] = (int32_t)r;
			if (vals)
				at->values[to] = vals[e];
		}
	free(next);
	return 0;
}
