/* Row blocks and the rows that travel between them (gnn_part.h).
 *
 * Work on the host, once per graph and rank: one pass over the rank's
 * edges (split into own and halo), one over every other rank's edges
 * (which of this rank's rows they read: its send lists), and an n-entry
 * map from global row to halo column, freed at the end. On products_like
 * (124M edges) that is well under a second a rank. */
#include "gnn/gnn_part.h"

#include <stdlib.h>
#include <string.h>

const char *const gnn_exchange_names[] = {[GNN_EXCHANGE_HALO] = "halo",
					  [GNN_EXCHANGE_ALLGATHER] = "allgather", NULL};

int gnn_part_starts(const struct csr *g, int size, int64_t *starts, struct sp_err *err)
{
	if (size < 1 || g->nrows < size)
		return sp_fail(err, "cannot cut %lld rows into %d blocks", (long long)g->nrows,
			       size);
	starts[0] = 0;
	starts[size] = g->nrows;
	/* a row costs its edges and one more (its own term: the dense layers'
	 * work), so a graph with few edges is cut by rows */
	const double total = (double)g->nnz + (double)g->nrows;
	for (int q = 1; q < size; q++) {
		/* the first row whose cost so far reaches q / size of the whole */
		const int64_t target = (int64_t)(total * q / size);
		int64_t lo = 0, hi = g->nrows;
		while (lo < hi) {
			const int64_t mid = lo + (hi - lo) / 2;
			if (g->indptr[mid] + mid < target)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* at least one row a block, before and after */
		const int64_t least = starts[q - 1] + 1, most = g->nrows - (size - q);
		starts[q] = lo < least ? least : lo > most ? most : lo;
	}
	return 0;
}

static int owner(const int64_t *starts, int size, int64_t j)
{
	int lo = 0, hi = size - 1;
	while (lo < hi) {
		const int mid = (lo + hi + 1) / 2;
		if (starts[mid] <= j)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* halo mode: the rows of other ranks this rank reads, ascending; their
 * column map (global row -> halo column, -1 for others); per-peer ranges. */
static void plan_receive(const struct csr *g, struct gnn_part *p, int32_t *col_of)
{
	const int64_t hi = p->lo + p->nloc;
	for (int64_t j = 0; j < p->n; j++)
		col_of[j] = -1;
	for (int64_t e = g->indptr[p->lo]; e < g->indptr[hi]; e++) {
		const int32_t j = g->indices[e];
		if (j < p->lo || j >= hi)
			col_of[j] = 0; /* read: numbered below */
	}
	p->nhalo = 0;
	for (int64_t j = 0; j < p->n; j++)
		if (col_of[j] == 0)
			col_of[j] = (int32_t)p->nhalo++;
	for (int q = 0, at = 0; q < p->size; q++) {
		p->recv_first[q] = at;
		for (int64_t j = p->starts[q]; j < p->starts[q + 1]; j++)
			at += col_of[j] >= 0;
		p->recv_count[q] = at - p->recv_first[q];
	}
}

/* halo mode: the local rows each peer reads, from that peer's edges. */
static int plan_send(const struct csr *g, struct gnn_part *p, struct sp_err *err)
{
	const int64_t hi = p->lo + p->nloc;
	uint8_t *seen = malloc((size_t)p->nloc);
	int32_t *rows = malloc((size_t)(p->nloc ? p->nloc : 1) * (size_t)p->size * sizeof *rows);
	if (!seen || !rows) {
		free(seen);
		free(rows);
		return sp_fail(err, "out of memory for the send lists of %lld rows",
			       (long long)p->nloc);
	}
	p->nsend = 0;
	for (int q = 0; q < p->size; q++) {
		p->send_first[q] = p->nsend;
		p->send_count[q] = 0;
		if (q == p->rank)
			continue;
		memset(seen, 0, (size_t)p->nloc);
		for (int64_t e = g->indptr[p->starts[q]]; e < g->indptr[p->starts[q + 1]]; e++) {
			const int32_t j = g->indices[e];
			if (j >= p->lo && j < hi)
				seen[j - p->lo] = 1;
		}
		for (int64_t r = 0; r < p->nloc; r++)
			if (seen[r])
				rows[p->nsend++] = (int32_t)r;
		p->send_count[q] = p->nsend - p->send_first[q];
	}
	free(seen);
	p->send_rows = realloc(rows, (size_t)(p->nsend ? p->nsend : 1) * sizeof *rows);
	if (!p->send_rows) {
		free(rows);
		return sp_fail(err, "out of memory");
	}
	return 0;
}

/* own and halo from the rank's rows of g, columns through col_of (halo)
 * or the padded all-gather layout; values from vals (the rows' edges). */
static int split_edges(const struct csr *g, struct gnn_part *p, const int32_t *col_of,
		       const float *vals, struct sp_err *err)
{
	const int64_t hi = p->lo + p->nloc, base = g->indptr[p->lo];
	int64_t own_nnz = 0, halo_nnz = 0;
	for (int64_t e = base; e < g->indptr[hi]; e++) {
		const int32_t j = g->indices[e];
		if (j >= p->lo && j < hi)
			own_nnz++;
		else
			halo_nnz++;
	}
	if (csr_alloc(&p->own, p->nloc, p->nloc, own_nnz, 1, "partition", err) ||
	    csr_alloc(&p->halo, p->nloc, p->nhalo, halo_nnz, 1, "partition", err))
		return -1;
	int64_t a = 0, b = 0;
	for (int64_t r = 0; r < p->nloc; r++) {
		for (int64_t e = g->indptr[p->lo + r]; e < g->indptr[p->lo + r + 1]; e++) {
			const int32_t j = g->indices[e];
			if (j >= p->lo && j < hi) {
				p->own.indices[a] = (int32_t)(j - p->lo);
				p->own.values[a++] = vals[e - base];
			} else {
				const int q = col_of ? 0 : owner(p->starts, p->size, j);
				p->halo.indices[b] =
					col_of ? col_of[j]
					       : (int32_t)(q * p->maxrows + (j - p->starts[q]));
				p->halo.values[b++] = vals[e - base];
			}
		}
		p->own.indptr[r + 1] = a;
		p->halo.indptr[r + 1] = b;
	}
	return 0;
}

int gnn_part_create(const struct csr *g, enum edge_norm norm, int size, int rank,
		    enum gnn_exchange mode, struct gnn_part *p, struct sp_err *err)
{
	memset(p, 0, sizeof *p);
	if (g->nrows != g->ncols)
		return sp_fail(err, "partition: the graph is %lld x %lld, not square",
			       (long long)g->nrows, (long long)g->ncols);
	if (rank < 0 || rank >= size)
		return sp_fail(err, "partition: rank %d of %d", rank, size);
	p->rank = rank;
	p->size = size;
	p->mode = mode;
	p->n = g->nrows;
	size_t per = (size_t)size + 1;
	p->starts = calloc(per, sizeof *p->starts);
	p->recv_first = calloc(per, sizeof *p->recv_first);
	p->recv_count = calloc(per, sizeof *p->recv_count);
	p->send_first = calloc(per, sizeof *p->send_first);
	p->send_count = calloc(per, sizeof *p->send_count);
	if (!p->starts || !p->recv_first || !p->recv_count || !p->send_first || !p->send_count) {
		gnn_part_free(p);
		return sp_fail(err, "out of memory");
	}
	if (gnn_part_starts(g, size, p->starts, err)) {
		gnn_part_free(p);
		return -1;
	}
	p->lo = p->starts[rank];
	p->nloc = p->starts[rank + 1] - p->lo;
	for (int q = 0; q < size; q++) {
		const int64_t rows = p->starts[q + 1] - p->starts[q];
		p->maxrows = rows > p->maxrows ? rows : p->maxrows;
	}
	const int64_t edges = g->indptr[p->lo + p->nloc] - g->indptr[p->lo];
	float *vals = malloc((size_t)(edges ? edges : 1) * sizeof *vals);
	int32_t *col_of = NULL;
	int rc = -1;
	if (!vals) {
		sp_fail(err, "out of memory for %lld edge values", (long long)edges);
		goto out;
	}
	edge_values_rows(g, norm, p->lo, p->lo + p->nloc, vals);
	if (mode == GNN_EXCHANGE_HALO) {
		col_of = malloc((size_t)(p->n ? p->n : 1) * sizeof *col_of);
		if (!col_of) {
			sp_fail(err, "out of memory for the halo map of %lld rows", (long long)p->n);
			goto out;
		}
		plan_receive(g, p, col_of);
		if (plan_send(g, p, err))
			goto out;
	} else {
		p->nhalo = (int64_t)size * p->maxrows;
	}
	rc = split_edges(g, p, col_of, vals, err);
out:
	free(vals);
	free(col_of);
	if (rc)
		gnn_part_free(p);
	return rc;
}

void gnn_part_free(struct gnn_part *p)
{
	free(p->starts);
	free(p->recv_first);
	free(p->recv_count);
	free(p->send_first);
	free(p->send_count);
	free(p->send_rows);
	csr_free(&p->own);
	csr_free(&p->halo);
	memset(p, 0, sizeof *p);
}
