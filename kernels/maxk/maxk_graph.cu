/* A graph on the device for the MaxK kernels (struct maxk_dev_graph,
 * maxk_gpu.h): the CSR with its edge values, the .warp4 records it was
 * given, its own work items (rows cut at MAXK_CHUNK edges, longest first),
 * the rows no item stores whole, and the transpose (for the gather form of
 * the backward and for cuSPARSE).
 *
 * Work: on the host, once a graph (a pass over the rows, a sort of the
 * items, a transpose), then one upload. Bytes on the device: 16 an edge
 * (the CSR and its transpose), 8 a row, 16 a record or item, 4 a bare
 * row, all counted in d->bytes.
 *
 * Why rows and not MaxK-GNN's 64-edge records: a row in one item is
 * stored once without atomics, and y need not be zeroed there first; the
 * forward over rows is twice as fast on reddit_like (bench/RESULTS.md,
 * maxk-train, "Records as work items"), and sorting the items longest first lets the
 * warps that take them round-robin end together. */
#include <stdlib.h>

#include "core/gpu_check.cuh"
#include "maxk/maxk_gpu.h"

/* Longest first, then by row. */
static int by_length_descending(const void *pa, const void *pb)
{
	const int32_t *a = (const int32_t *)pa, *b = (const int32_t *)pb;
	if (a[2] != b[2])
		return a[2] > b[2] ? -1 : 1;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

/* A row of deg edges is stored whole by one item: no atomics, and y is
 * not zeroed there first. The others (empty, or cut) are its bare rows. */
static bool whole_row(int64_t deg)
{
	return deg > 0 && deg <= MAXK_CHUNK;
}

/* Rows cut into items of at most MAXK_CHUNK edges (records as .warp4's,
 * but the fourth field is 1 when the item is its whole row): most rows are
 * one item, written without atomics. Items are sorted longest first, so
 * warps taking them round-robin end together. */
static int64_t chunk_rows(const struct csr *g, int32_t *items)
{
	int64_t m = 0;
	for (int64_t r = 0; r < g->nrows; r++)
		for (int64_t e = g->indptr[r]; e < g->indptr[r + 1]; e += MAXK_CHUNK) {
			const int64_t len = g->indptr[r + 1] - e;
			if (items) {
				items[4 * m] = (int32_t)r;
				items[4 * m + 1] = (int32_t)e;
				items[4 * m + 2] = (int32_t)(len < MAXK_CHUNK ? len : MAXK_CHUNK);
				items[4 * m + 3] = e == g->indptr[r] && whole_row(len);
			}
			m++;
		}
	if (items)
		qsort(items, (size_t)m, 4 * sizeof *items, by_length_descending);
	return m;
}

/* count elements of elem bytes from src to a new device array (at least
 * one element, so empty arrays still have an address), counted in d->bytes. */
static int to_device(struct maxk_dev_graph *d, void **dst, const void *src, int64_t count,
		     size_t elem, const char *what, struct sp_err *err)
{
	const size_t bytes = (size_t)(count ? count : 1) * elem;
	if (gpu_malloc(dst, bytes, what, err))
		return -1;
	d->bytes += bytes;
	return gpu_upload(*dst, src, (size_t)count * elem, err);
}

extern "C" int maxk_dev_graph_upload(const struct csr *g, const float *vals, const int32_t *warp4,
				     int64_t records, struct maxk_dev_graph *d, struct sp_err *err)
{
	*d = (struct maxk_dev_graph){g->nrows, g->nnz, records};
	d->ncols = g->ncols;
	if (g->nnz > INT32_MAX || g->nrows >= INT32_MAX || g->ncols >= INT32_MAX)
		return sp_fail(err, "graph of %lld rows and %lld edges is too large for 32-bit offsets",
			       (long long)g->nrows, (long long)g->nnz);
	struct csr t;
	if (csr_transpose(g, vals, &t, err))
		return -1;
	int32_t *t_ptr32 = (int32_t *)malloc((size_t)(t.nrows + 1) * sizeof *t_ptr32);
	int32_t *ptr32 = (int32_t *)malloc((size_t)(g->nrows + 1) * sizeof *ptr32);
	d->nchunks = chunk_rows(g, NULL);
	int32_t *chunks = (int32_t *)malloc((size_t)(d->nchunks ? d->nchunks : 1) * 16);
	int32_t *bare = (int32_t *)malloc((size_t)(g->nrows ? g->nrows : 1) * sizeof *bare);
	int rc = -1;
	if (!t_ptr32 || !ptr32 || !chunks || !bare) {
		sp_fail(err, "out of memory");
		goto out;
	}
	chunk_rows(g, chunks);
	for (int64_t r = 0; r < g->nrows; r++) {
		const int64_t deg = g->indptr[r + 1] - g->indptr[r];
		if (!whole_row(deg))
			bare[d->nbare++] = (int32_t)r;
	}
	for (int64_t j = 0; j <= t.nrows; j++)
		t_ptr32[j] = (int32_t)t.indptr[j];
	for (int64_t r = 0; r <= g->nrows; r++)
		ptr32[r] = (int32_t)g->indptr[r];
	if (to_device(d, (void **)&d->indptr, ptr32, g->nrows + 1, 4, "graph indptr", err) ||
	    to_device(d, (void **)&d->indices, g->indices, g->nnz, 4, "graph indices", err) ||
	    to_device(d, (void **)&d->vals, vals, g->nnz, 4, "edge values", err) ||
	    to_device(d, (void **)&d->warp4, warp4, records, 16, "warp4 records", err) ||
	    to_device(d, (void **)&d->chunks, chunks, d->nchunks, 16, "row items", err) ||
	    to_device(d, (void **)&d->bare_rows, bare, d->nbare, 4, "bare rows", err) ||
	    to_device(d, (void **)&d->t_indptr, t_ptr32, t.nrows + 1, 4, "transpose indptr", err) ||
	    to_device(d, (void **)&d->t_indices, t.indices, g->nnz, 4, "transpose indices", err) ||
	    to_device(d, (void **)&d->t_vals, t.values, g->nnz, 4, "transpose values", err))
		goto out;
	rc = 0;
out:
	free(t_ptr32);
	free(ptr32);
	free(chunks);
	free(bare);
	csr_free(&t);
	if (rc)
		maxk_dev_graph_free(d);
	return rc;
}

extern "C" void maxk_dev_graph_free(struct maxk_dev_graph *d)
{
	gpu_free(d->indptr);
	gpu_free(d->indices);
	gpu_free(d->vals);
	gpu_free(d->warp4);
	gpu_free(d->chunks);
	gpu_free(d->bare_rows);
	gpu_free(d->t_indptr);
	gpu_free(d->t_indices);
	gpu_free(d->t_vals);
	*d = (struct maxk_dev_graph){0};
}
