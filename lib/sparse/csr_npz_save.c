/* Saving struct csr as scipy.sparse.save_npz does. Members whose dtype
 * differs from struct csr's (int32 indptr, implicit ones for a pattern)
 * are generated a block at a time, so saving needs no copy of the graph. */
#include "sparse/csr_npz.h"

#include <string.h>

enum { BLOCK = 8192 };

/* Fill out with elements [at, at + n) of a generated member. */
typedef void (*fill_fn)(const struct csr *g, int64_t at, int n, void *out);

static void fill_indptr32(const struct csr *g, int64_t at, int n, void *out)
{
	int32_t *p = out;
	for (int i = 0; i < n; i++)
		p[i] = (int32_t)g->indptr[at + i]; /* nnz fits int32, checked by the caller */
}

static void fill_ones(const struct csr *g, int64_t at, int n, void *out)
{
	float *p = out;
	for (int i = 0; i < n; i++)
		p[i] = 1.0f;
}

static int add_generated(struct npz_writer *w, const char *name, enum npy_dtype dt, int64_t count,
			 fill_fn fill, const struct csr *g, struct sp_err *err)
{
	struct npy_array a = {.dtype = dt, .itemsize = npy_dtype_size(dt), .ndim = 1,
			      .shape = {count}};
	unsigned char block[BLOCK * 4];
	if (npz_writer_begin(w, name, &a, err))
		return -1;
	for (int64_t at = 0; at < count; at += BLOCK) {
		int n = count - at < BLOCK ? (int)(count - at) : BLOCK;
		fill(g, at, n, block);
		if (npz_writer_write(w, block, (size_t)n * a.itemsize, err))
			return -1;
	}
	return npz_writer_end(w, err);
}

static int add_vector(struct npz_writer *w, const char *name, enum npy_dtype dt, int64_t count,
		      const void *data, struct sp_err *err)
{
	struct npy_array a = {.dtype = dt, .itemsize = npy_dtype_size(dt), .ndim = 1,
			      .shape = {count}, .data = (void *)data};
	return npz_writer_add(w, name, &a, err);
}

/* The members in save_npz's order: indices, indptr, format, shape, data. */
static int add_members(struct npz_writer *w, const struct csr *g, struct sp_err *err)
{
	int64_t shape[2] = {g->nrows, g->ncols};
	struct npy_array format = {.dtype = NPY_BYTES, .itemsize = 3, .ndim = 0, .data = "csr"};
	if (add_vector(w, "indices", NPY_I4, g->nnz, g->indices, err))
		return -1;
	/* SciPy picks int32 indices when nnz and the shape fit; struct csr's
	 * dimensions always do. */
	if (g->nnz <= INT32_MAX
		    ? add_generated(w, "indptr", NPY_I4, g->nrows + 1, fill_indptr32, g, err)
		    : add_vector(w, "indptr", NPY_I8, g->nrows + 1, g->indptr, err))
		return -1;
	if (npz_writer_add(w, "format", &format, err) ||
	    add_vector(w, "shape", NPY_I8, 2, shape, err))
		return -1;
	return g->values ? add_vector(w, "data", NPY_F4, g->nnz, g->values, err)
			 : add_generated(w, "data", NPY_F4, g->nnz, fill_ones, g, err);
}

int csr_npz_save(const char *path, const struct csr *g, int compress, struct sp_err *err)
{
	struct npz_writer w;
	if (csr_validate(g, CSR_CHECK_BASIC, path, err) || npz_writer_open(&w, path, compress, err))
		return -1;
	if (add_members(&w, g, err)) {
		npz_writer_abort(&w);
		return -1;
	}
	return npz_writer_commit(&w, err);
}
