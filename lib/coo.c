#include "coo.h"

#include <stdlib.h>
#include <string.h>

int coo_init(struct coo *c, int64_t cap, int with_values, const char *name, struct sp_err *err)
{
	memset(c, 0, sizeof *c);
	if (cap < 16)
		cap = 16;
	if (cap > CSR_MAX_NNZ)
		return sp_fail(err, "%s: %lld entries exceed the limit of %lld", name, (long long)cap,
			       (long long)CSR_MAX_NNZ);
	c->rows = malloc((size_t)cap * sizeof *c->rows);
	c->cols = malloc((size_t)cap * sizeof *c->cols);
	if (with_values)
		c->vals = malloc((size_t)cap * sizeof *c->vals);
	if (!c->rows || !c->cols || (with_values && !c->vals)) {
		coo_free(c);
		return sp_fail(err, "%s: out of memory for %lld entries", name, (long long)cap);
	}
	c->cap = cap;
	return 0;
}

/* realloc that leaves *p as it was when it fails. */
static int grow_array(void **p, int64_t cap, size_t size)
{
	void *q = realloc(*p, (size_t)cap * size);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

int coo_grow(struct coo *c, const char *name, struct sp_err *err)
{
	if (c->cap >= CSR_MAX_NNZ)
		return sp_fail(err, "%s: more than %lld entries", name, (long long)CSR_MAX_NNZ);
	int64_t cap = c->cap + c->cap / 2 + 16;
	if (cap > CSR_MAX_NNZ)
		cap = CSR_MAX_NNZ;
	/* The arrays may end up larger than c->cap if one realloc fails; that
	 * is harmless, and coo_free still frees them. */
	if (grow_array((void **)&c->rows, cap, sizeof *c->rows) ||
	    grow_array((void **)&c->cols, cap, sizeof *c->cols) ||
	    (c->vals && grow_array((void **)&c->vals, cap, sizeof *c->vals)))
		return sp_fail(err, "%s: out of memory for %lld entries", name, (long long)cap);
	c->cap = cap;
	return 0;
}

void coo_free(struct coo *c)
{
	free(c->rows);
	free(c->cols);
	free(c->vals);
	memset(c, 0, sizeof *c);
}

/* Checks every index and counts the entries the CSR will hold. */
static int count_entries(const struct coo *c, int64_t nrows, int64_t ncols, int mirror,
			 int64_t *nnz, const char *name, struct sp_err *err)
{
	int64_t n = c->n;
	for (int64_t k = 0; k < c->n; k++) {
		int32_t r = c->rows[k], col = c->cols[k];
		if (r < 0 || r >= nrows || col < 0 || col >= ncols)
			return sp_fail(err, "%s: entry %lld at (%d, %d) is outside the %lld x %lld shape",
				       name, (long long)k, r, col, (long long)nrows, (long long)ncols);
		n += mirror && r != col;
	}
	*nnz = n;
	return 0;
}

/* Prefix sums that turn counts stored two places ahead (count of i at
 * p[i + 2]) into starts one place ahead (start of i at p[i + 1]). Using
 * p[i + 1]++ as the cursor while placing entries then leaves p[i + 1] at
 * the end of i, which is the finished pointer array: no second array. */
static void starts_from_counts(int64_t *p, int64_t n)
{
	for (int64_t i = 1; i <= n; i++)
		p[i] += p[i - 1];
}

/* Stable sorts of one row by column, values following (val may be NULL).
 * Rows are short in most graphs and often already sorted (files written
 * column by column), where insertion sort is linear; long rows get a
 * bottom-up merge sort over insertion-sorted runs. */
enum { RUN = 32 };

static void insertion_sort(int32_t *idx, float *val, int64_t n)
{
	for (int64_t i = 1; i < n; i++) {
		int32_t c = idx[i];
		if (idx[i - 1] <= c)
			continue;
		float v = val ? val[i] : 0;
		int64_t j = i;
		for (; j > 0 && idx[j - 1] > c; j--) {
			idx[j] = idx[j - 1];
			if (val)
				val[j] = val[j - 1];
		}
		idx[j] = c;
		if (val)
			val[j] = v;
	}
}

/* Merge the sorted runs [lo, mid) and [mid, hi) of (si, sv) into (di, dv). */
static void merge_runs(const int32_t *si, const float *sv, int32_t *di, float *dv, int64_t lo,
		       int64_t mid, int64_t hi)
{
	int64_t a = lo, b = mid;
	for (int64_t k = lo; k < hi; k++) {
		int64_t from = b >= hi || (a < mid && si[a] <= si[b]) ? a++ : b++;
		di[k] = si[from];
		if (sv)
			dv[k] = sv[from];
	}
}

static void sort_row(int32_t *idx, float *val, int64_t n, int32_t *tidx, float *tval)
{
	for (int64_t b = 0; b < n; b += RUN)
		insertion_sort(idx + b, val ? val + b : NULL, n - b < RUN ? n - b : RUN);
	int32_t *si = idx, *di = tidx;
	float *sv = val, *dv = val ? tval : NULL;
	for (int64_t width = RUN; width < n; width *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * width) {
			int64_t mid = lo + width < n ? lo + width : n;
			int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			merge_runs(si, sv, di, dv, lo, mid, hi);
		}
		int32_t *ti = si;
		si = di;
		di = ti;
		float *tv = sv;
		sv = dv;
		dv = tv;
	}
	if (si != idx) {
		memcpy(idx, si, (size_t)n * sizeof *idx);
		if (val)
			memcpy(val, sv, (size_t)n * sizeof *val);
	}
}

int coo_to_csr(struct coo *c, int64_t nrows, int64_t ncols, enum coo_mirror mirror,
	       struct csr *g, const char *name, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	int32_t *tidx = NULL;
	float *tval = NULL;
	int64_t nnz = 0;
	int rc = -1, with_values = c->vals != NULL, mirrored = mirror != COO_AS_GIVEN;
	if (mirrored && nrows != ncols) {
		sp_fail(err, "%s: a mirrored matrix must be square, not %lld x %lld", name,
			(long long)nrows, (long long)ncols);
		goto out;
	}
	if (count_entries(c, nrows, ncols, mirrored, &nnz, name, err) ||
	    csr_alloc(g, nrows, ncols, nnz, with_values, name, err))
		goto out;

	/* A stable counting sort by row: counts two places ahead (see
	 * starts_from_counts); the last row's count is never needed, which
	 * keeps indptr at nrows + 1. */
	int64_t *rowptr = g->indptr;
	for (int64_t k = 0; k < c->n; k++) {
		int32_t r = c->rows[k], col = c->cols[k];
		if (r + 2 <= nrows)
			rowptr[r + 2]++;
		if (mirrored && r != col && col + 2 <= nrows)
			rowptr[col + 2]++;
	}
	starts_from_counts(rowptr, nrows);
	float sign = mirror == COO_MIRROR_NEGATED ? -1.0f : 1.0f;
	for (int64_t k = 0; k < c->n; k++) {
		int32_t r = c->rows[k], col = c->cols[k];
		int64_t at = rowptr[r + 1]++;
		g->indices[at] = col;
		if (with_values)
			g->values[at] = c->vals[k];
		if (mirrored && r != col) {
			at = rowptr[col + 1]++;
			g->indices[at] = r;
			if (with_values)
				g->values[at] = sign * c->vals[k];
		}
	}
	coo_free(c);

	int64_t widest = 0;
	for (int64_t r = 0; r < nrows; r++)
		if (rowptr[r + 1] - rowptr[r] > widest)
			widest = rowptr[r + 1] - rowptr[r];
	if (widest > RUN) {
		tidx = malloc((size_t)widest * sizeof *tidx);
		if (with_values)
			tval = malloc((size_t)widest * sizeof *tval);
		if (!tidx || (with_values && !tval)) {
			sp_fail(err, "%s: out of memory sorting a row of %lld entries", name,
				(long long)widest);
			goto out;
		}
	}
	for (int64_t r = 0; r < nrows; r++)
		sort_row(g->indices + rowptr[r], with_values ? g->values + rowptr[r] : NULL,
			 rowptr[r + 1] - rowptr[r], tidx, tval);
	rc = 0;
out:
	if (rc)
		csr_free(g);
	coo_free(c);
	free(tidx);
	free(tval);
	return rc;
}
