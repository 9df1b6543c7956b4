#include "maxk/maxk_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"

enum { ROWS_PER_CHUNK = 1024 };

int cbsr_check(int64_t n, int h, int k, struct sp_err *err)
{
	if (h < 1 || h > MAXK_MAX_WIDTH)
		return sp_fail(err, "feature width %d is outside 1..%d", h, MAXK_MAX_WIDTH);
	if (k < 1 || k > h)
		return sp_fail(err, "k = %d is outside 1..%d (the feature width)", k, h);
	if (n < 0 || n > CSR_MAX_DIM)
		return sp_fail(err, "%lld rows is out of range", (long long)n);
	return 0;
}

int cbsr_alloc(struct cbsr *c, int64_t n, int h, int k, struct sp_err *err)
{
	memset(c, 0, sizeof *c);
	if (cbsr_check(n, h, k, err))
		return -1;
	c->n = n;
	c->h = h;
	c->k = k;
	size_t m = (size_t)(n ? n : 1) * (size_t)k;
	c->values = malloc(m * sizeof *c->values);
	c->index = malloc(m * sizeof *c->index);
	if (!c->values || !c->index) {
		cbsr_free(c);
		return sp_fail(err, "out of memory for %lld x %d kept entries", (long long)n, k);
	}
	return 0;
}

void cbsr_free(struct cbsr *c)
{
	free(c->values);
	free(c->index);
	memset(c, 0, sizeof *c);
}

struct topk_job {
	const float *x;
	struct cbsr *out;
};

/* Is entry a (value va at column ca) kept before entry b? Larger values
 * first, ties to the lower column; NaN counts as the largest, so it is
 * kept and propagates rather than vanishing. */
static int ranks_before(float va, int ca, float vb, int cb)
{
	if (isnan(va) != isnan(vb))
		return isnan(va);
	if (va != vb)
		return va > vb;
	return ca < cb;
}

/* Heap of the k best entries seen so far, the one that ranks last on top. */
struct heap {
	const float *row;
	int *col;
	int size;
};

static int worse(const struct heap *h, int a, int b)
{
	return ranks_before(h->row[h->col[b]], h->col[b], h->row[h->col[a]], h->col[a]);
}

static void sift_down(struct heap *h, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, w = i;
		if (l < h->size && worse(h, l, w))
			w = l;
		if (r < h->size && worse(h, r, w))
			w = r;
		if (w == i)
			return;
		int t = h->col[i];
		h->col[i] = h->col[w];
		h->col[w] = t;
		i = w;
	}
}

static void sift_up(struct heap *h, int i)
{
	while (i > 0 && worse(h, i, (i - 1) / 2)) {
		int p = (i - 1) / 2, t = h->col[i];
		h->col[i] = h->col[p];
		h->col[p] = t;
		i = p;
	}
}

static void topk_rows(void *ctx, int64_t chunk)
{
	const struct topk_job *j = ctx;
	const struct cbsr *c = j->out;
	int64_t end = (chunk + 1) * ROWS_PER_CHUNK < c->n ? (chunk + 1) * ROWS_PER_CHUNK : c->n;
	/* Scratch on the stack (h is at most MAXK_MAX_WIDTH): the heap, and a
	 * mark per column so the kept columns come out in ascending order
	 * without a sort. */
	int heap_cols[MAXK_MAX_WIDTH];
	unsigned char kept[MAXK_MAX_WIDTH];
	for (int64_t i = chunk * ROWS_PER_CHUNK; i < end; i++) {
		struct heap h = {j->x + i * c->h, heap_cols, 0};
		for (int col = 0; col < c->h; col++) {
			if (h.size < c->k) {
				h.col[h.size++] = col;
				sift_up(&h, h.size - 1);
			} else if (ranks_before(h.row[col], col, h.row[h.col[0]], h.col[0])) {
				h.col[0] = col;
				sift_down(&h, 0);
			}
		}
		memset(kept, 0, (size_t)c->h);
		for (int t = 0; t < c->k; t++)
			kept[h.col[t]] = 1;
		uint16_t *idx = c->index + i * c->k;
		float *val = c->values + i * c->k;
		for (int col = 0, t = 0; col < c->h; col++)
			if (kept[col]) {
				idx[t] = (uint16_t)col;
				val[t++] = h.row[col];
			}
	}
}

void maxk_topk_fill(const float *x, struct cbsr *out)
{
	struct topk_job j = {x, out};
	parallel_for((out->n + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, topk_rows, &j);
}

int maxk_topk_ref(const float *x, int64_t n, int h, int k, struct cbsr *out, struct sp_err *err)
{
	if (cbsr_alloc(out, n, h, k, err))
		return -1;
	maxk_topk_fill(x, out);
	return 0;
}

void cbsr_to_dense(const struct cbsr *c, float *dense)
{
	memset(dense, 0, (size_t)c->n * (size_t)c->h * sizeof *dense);
	for (int64_t i = 0; i < c->n; i++)
		for (int t = 0; t < c->k; t++)
			dense[i * c->h + c->index[i * c->k + t]] = c->values[i * c->k + t];
}

void maxk_backward_ref(const struct cbsr *c, const float *grad, float *grad_kept)
{
	for (int64_t i = 0; i < c->n; i++)
		for (int t = 0; t < c->k; t++)
			grad_kept[i * c->k + t] = grad[i * c->h + c->index[i * c->k + t]];
}

void edge_values(const struct csr *g, enum edge_norm norm, float *vals)
{
	edge_values_rows(g, norm, 0, g->nrows, vals);
}

void edge_values_rows(const struct csr *g, enum edge_norm norm, int64_t lo, int64_t hi,
		      float *vals)
{
	const int64_t base = g->indptr[lo];
	for (int64_t r = lo; r < hi; r++) {
		int64_t deg = g->indptr[r + 1] - g->indptr[r];
		for (int64_t e = g->indptr[r]; e < g->indptr[r + 1]; e++) {
			int32_t j = g->indices[e];
			float *v = &vals[e - base];
			if (norm == EDGE_ONES) {
				*v = 1.0f;
			} else if (norm == EDGE_MEAN) {
				*v = (float)(1.0 / (double)deg);
			} else {
				int64_t dj = j < g->nrows ? g->indptr[j + 1] - g->indptr[j] : 0;
				*v = dj ? (float)(1.0 / sqrt((double)deg * (double)dj)) : 0.0f;
			}
		}
	}
}

/* The SpGEMM and SSpMM write double (the references the GPU is tested
 * against) or float (the CPU training backend): one of y/yf is set. Each
 * row's sums are in double either way, so the float result is the double
 * one rounded once. */
struct spgemm_job {
	const struct csr *a;
	const float *a_vals;
	const struct cbsr *x;
	double *y;
	float *yf;
};

static void spgemm_rows(void *ctx, int64_t chunk)
{
	const struct spgemm_job *j = ctx;
	const struct cbsr *x = j->x;
	int64_t end = (chunk + 1) * ROWS_PER_CHUNK < j->a->nrows ? (chunk + 1) * ROWS_PER_CHUNK
								  : j->a->nrows;
	double acc[MAXK_MAX_WIDTH];
	for (int64_t r = chunk * ROWS_PER_CHUNK; r < end; r++) {
		double *yr = j->y ? j->y + r * x->h : acc;
		memset(yr, 0, (size_t)x->h * sizeof *yr);
		for (int64_t e = j->a->indptr[r]; e < j->a->indptr[r + 1]; e++) {
			int64_t src = j->a->indices[e];
			double w = j->a_vals[e];
			for (int t = 0; t < x->k; t++)
				yr[x->index[src * x->k + t]] += w * x->values[src * x->k + t];
		}
		if (j->yf)
			for (int c = 0; c < x->h; c++)
				j->yf[r * x->h + c] = (float)yr[c];
	}
}

void maxk_spgemm_ref(const struct csr *a, const float *a_vals, const struct cbsr *x, double *y)
{
	struct spgemm_job j = {a, a_vals, x, y, NULL};
	parallel_for((a->nrows + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, spgemm_rows, &j);
}

void maxk_spgemm_float(const struct csr *a, const float *a_vals, const struct cbsr *x, float *y)
{
	struct spgemm_job j = {a, a_vals, x, NULL, y};
	parallel_for((a->nrows + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, spgemm_rows, &j);
}

struct sspmm_job {
	const struct csr *at; /* A's transpose: row j lists the r with an edge (r, j) */
	const float *at_vals;
	const struct cbsr *x;
	const float *dy;
	double *dx;
	float *dxf;
};

static void sspmm_rows(void *ctx, int64_t chunk)
{
	const struct sspmm_job *s = ctx;
	const struct cbsr *x = s->x;
	int64_t end = (chunk + 1) * ROWS_PER_CHUNK < x->n ? (chunk + 1) * ROWS_PER_CHUNK : x->n;
	double acc[MAXK_MAX_WIDTH];
	for (int64_t j = chunk * ROWS_PER_CHUNK; j < end; j++) {
		double *dxj = s->dx ? s->dx + j * x->k : acc;
		for (int t = 0; t < x->k; t++)
			dxj[t] = 0;
		int64_t lo = 0, hi = 0; /* a node past at's rows has no in-edges */
		if (j < s->at->nrows) {
			lo = s->at->indptr[j];
			hi = s->at->indptr[j + 1];
		}
		for (int64_t e = lo; e < hi; e++) {
			const float *dyr = s->dy + (int64_t)s->at->indices[e] * x->h;
			double w = s->at_vals[e];
			for (int t = 0; t < x->k; t++)
				dxj[t] += w * dyr[x->index[j * x->k + t]];
		}
		if (s->dxf)
			for (int t = 0; t < x->k; t++)
				s->dxf[j * x->k + t] = (float)dxj[t];
	}
}

int maxk_sspmm_ref(const struct csr *a, const float *a_vals, const struct cbsr *x, const float *dy,
		   double *dx, struct sp_err *err)
{
	struct csr at;
	if (csr_transpose(a, a_vals, &at, err))
		return -1;
	struct sspmm_job s = {&at, at.values, x, dy, dx, NULL};
	parallel_for((x->n + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, sspmm_rows, &s);
	csr_free(&at);
	return 0;
}

void maxk_sspmm_transposed(const struct csr *at, const struct cbsr *x, const float *dy, float *dx)
{
	struct sspmm_job s = {at, at->values, x, dy, NULL, dx};
	parallel_for((x->n + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, sspmm_rows, &s);
}
