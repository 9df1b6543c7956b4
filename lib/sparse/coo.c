#include "sparse/coo.h"

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

/* Placing entries row by row into a CSR of millions of rows touches row
 * cursors and destinations at random, a cache miss an entry, which costs
 * more than parsing the text. So the entries are first spread, stably, into
 * blocks of 2^shift consecutive rows (at most 2^MAX_BLOCK_BITS blocks,
 * written as that many sequential streams), and then each block is placed
 * with cursors that stay in cache. A matrix of one block is placed
 * directly. */
enum { MIN_SHIFT = 12, MAX_BLOCK_BITS = 11 };

/* Entries in input order, each followed by its mirror when mirrored. */
struct stream {
	const int32_t *rows, *cols;
	const float *vals; /* NULL for a pattern */
	int64_t n;
	int mirrored;
	float sign; /* of the mirror's value */
};

static int block_shift(int64_t nrows)
{
	int bits = 0;
	while (bits < 63 && ((int64_t)1 << bits) < nrows)
		bits++;
	return bits - MAX_BLOCK_BITS > MIN_SHIFT ? bits - MAX_BLOCK_BITS : MIN_SHIFT;
}

/* Checks every index; counts the entries the CSR will hold, and those of
 * each block of rows. */
static int count_entries(const struct stream *s, int64_t nrows, int64_t ncols, int shift,
			 int64_t *block_count, int64_t *nnz, const char *name, struct sp_err *err)
{
	int64_t n = s->n;
	for (int64_t k = 0; k < s->n; k++) {
		int32_t r = s->rows[k], col = s->cols[k];
		if (r < 0 || r >= nrows || col < 0 || col >= ncols)
			return sp_fail(err, "%s: entry %lld at (%d, %d) is outside the %lld x %lld shape",
				       name, (long long)k, r, col, (long long)nrows, (long long)ncols);
		block_count[r >> shift]++;
		if (s->mirrored && r != col) {
			block_count[col >> shift]++;
			n++;
		}
	}
	*nnz = n;
	return 0;
}

/* A stable counting sort of entries whose rows all lie in [lo, hi) into g,
 * the first row starting at position start. The cursor of row r is
 * g->indptr[r + 1]: first the count, then the start, and once every entry
 * is placed, the end of row r, which is what indptr[r + 1] must hold. */
static void place_rows(struct csr *g, int64_t lo, int64_t hi, int64_t start,
		       const struct stream *s)
{
	int64_t *cur = g->indptr + 1;
	for (int64_t k = 0; k < s->n; k++) {
		cur[s->rows[k]]++;
		if (s->mirrored && s->rows[k] != s->cols[k])
			cur[s->cols[k]]++;
	}
	for (int64_t r = lo, at = start; r < hi; r++) {
		int64_t count = cur[r];
		cur[r] = at;
		at += count;
	}
	for (int64_t k = 0; k < s->n; k++) {
		int32_t r = s->rows[k], col = s->cols[k];
		int64_t at = cur[r]++;
		g->indices[at] = col;
		if (s->vals)
			g->values[at] = s->vals[k];
		if (s->mirrored && r != col) {
			at = cur[col]++;
			g->indices[at] = r;
			if (s->vals)
				g->values[at] = s->sign * s->vals[k];
		}
	}
}

/* Entries spread by block of rows, ready for place_rows. */
struct blocks {
	int32_t *rows, *cols;
	float *vals;
	int64_t *start; /* nblocks + 1 */
};

static void blocks_free(struct blocks *b)
{
	free(b->rows);
	free(b->cols);
	free(b->vals);
	free(b->start);
}

static int spread_blocks(struct blocks *b, const struct stream *s, int shift, int64_t nblocks,
			 int64_t nnz, const char *name, struct sp_err *err)
{
	size_t n = (size_t)(nnz ? nnz : 1);
	b->rows = malloc(n * sizeof *b->rows);
	b->cols = malloc(n * sizeof *b->cols);
	if (s->vals)
		b->vals = malloc(n * sizeof *b->vals);
	int64_t *cur = malloc((size_t)nblocks * sizeof *cur);
	if (!b->rows || !b->cols || (s->vals && !b->vals) || !cur) {
		free(cur);
		return sp_fail(err, "%s: out of memory sorting %lld entries", name, (long long)nnz);
	}
	memcpy(cur, b->start, (size_t)nblocks * sizeof *cur);
	for (int64_t k = 0; k < s->n; k++) {
		int32_t r = s->rows[k], col = s->cols[k];
		int64_t at = cur[r >> shift]++;
		b->rows[at] = r;
		b->cols[at] = col;
		if (s->vals)
			b->vals[at] = s->vals[k];
		if (s->mirrored && r != col) {
			at = cur[col >> shift]++;
			b->rows[at] = col;
			b->cols[at] = r;
			if (s->vals)
				b->vals[at] = s->sign * s->vals[k];
		}
	}
	free(cur);
	return 0;
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

/* Sort every row of g by column, stably. */
static int sort_rows(struct csr *g, const char *name, struct sp_err *err)
{
	int64_t widest = 0;
	for (int64_t r = 0; r < g->nrows; r++)
		if (g->indptr[r + 1] - g->indptr[r] > widest)
			widest = g->indptr[r + 1] - g->indptr[r];
	int32_t *tidx = NULL;
	float *tval = NULL;
	if (widest > RUN) {
		tidx = malloc((size_t)widest * sizeof *tidx);
		if (g->values)
			tval = malloc((size_t)widest * sizeof *tval);
		if (!tidx || (g->values && !tval)) {
			free(tidx);
			return sp_fail(err, "%s: out of memory sorting a row of %lld entries", name,
				       (long long)widest);
		}
	}
	for (int64_t r = 0; r < g->nrows; r++)
		sort_row(g->indices + g->indptr[r], g->values ? g->values + g->indptr[r] : NULL,
			 g->indptr[r + 1] - g->indptr[r], tidx, tval);
	free(tidx);
	free(tval);
	return 0;
}

int coo_to_csr(struct coo *c, int64_t nrows, int64_t ncols, enum coo_mirror mirror,
	       struct csr *g, const char *name, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	struct stream in = {c->rows, c->cols, c->vals, c->n, mirror != COO_AS_GIVEN,
			    mirror == COO_MIRROR_NEGATED ? -1.0f : 1.0f};
	struct blocks b = {0};
	int shift = block_shift(nrows);
	int64_t nblocks = nrows > 0 ? ((nrows - 1) >> shift) + 1 : 0, nnz = 0;
	int rc = -1;
	if (in.mirrored && nrows != ncols) {
		sp_fail(err, "%s: a mirrored matrix must be square, not %lld x %lld", name,
			(long long)nrows, (long long)ncols);
		goto out;
	}
	b.start = calloc((size_t)nblocks + 1, sizeof *b.start);
	if (!b.start) {
		sp_fail(err, "%s: out of memory for %lld rows", name, (long long)nrows);
		goto out;
	}
	if (count_entries(&in, nrows, ncols, shift, b.start + 1, &nnz, name, err) ||
	    csr_alloc(g, nrows, ncols, nnz, c->vals != NULL, name, err))
		goto out;
	if (nblocks <= 1) {
		place_rows(g, 0, nrows, 0, &in);
		coo_free(c);
	} else {
		for (int64_t k = 0; k < nblocks; k++)
			b.start[k + 1] += b.start[k];
		if (spread_blocks(&b, &in, shift, nblocks, nnz, name, err))
			goto out;
		coo_free(c);
		for (int64_t k = 0; k < nblocks; k++) {
			int64_t lo = k << shift, hi = lo + ((int64_t)1 << shift), at = b.start[k];
			struct stream block = {b.rows + at, b.cols + at, b.vals ? b.vals + at : NULL,
					       b.start[k + 1] - at, 0, 1.0f};
			place_rows(g, lo, hi < nrows ? hi : nrows, at, &block);
		}
	}
	rc = sort_rows(g, name, err);
out:
	if (rc)
		csr_free(g);
	coo_free(c);
	blocks_free(&b);
	return rc;
}
