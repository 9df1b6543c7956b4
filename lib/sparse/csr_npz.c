/* Loading SciPy .npz sparse matrices (csr or coo) into struct csr. Each
 * member is read once, straight into its array, and converted only when
 * its dtype is not already the one struct csr uses. */
#include "sparse/csr_npz.h"

#include "core/memory.h"

#include <stdlib.h>
#include <string.h>

enum layout { LAYOUT_CSR, LAYOUT_COO };

static int is_integer(enum npy_dtype dt)
{
	return dt == NPY_BOOL || dt == NPY_U1 || dt == NPY_I4 || dt == NPY_I8;
}

/* A member must be a vector of numbers (integers, for index arrays) with
 * `want` elements (any number if want < 0); `because` says where want
 * comes from ("indptr ends at 12"). */
static int check_vector(const struct npz *z, const char *name, const struct npy_array *a,
			int integer, int64_t want, const char *because, struct sp_err *err)
{
	const char *path = z->zip.path;
	if (a->ndim != 1)
		return sp_fail(err, "%s: %s has %d dimensions, expected 1", path, name, a->ndim);
	if (a->dtype == NPY_BYTES || (integer && !is_integer(a->dtype)))
		return sp_fail(err, "%s: %s has dtype %s, expected %s", path, name,
			       npy_dtype_name(a->dtype), integer ? "integers" : "numbers");
	if (want >= 0 && a->shape[0] != want)
		return sp_fail(err, "%s: %s has %lld elements but %s", path, name,
			       (long long)a->shape[0], because);
	return 0;
}

/* Read member `name` as a checked vector of dtype `to`. */
static int read_vector(struct npz *z, const char *name, enum npy_dtype to, int64_t want,
		       const char *because, struct npy_array *a, struct sp_err *err)
{
	char label[SP_ERR_MAX];
	snprintf(label, sizeof label, "%s: member '%s'", z->zip.path, name);
	if (npz_read(z, name, a, err))
		return -1;
	if (check_vector(z, name, a, is_integer(to), want, because, err) ||
	    npy_cast(a, to, label, err)) {
		npy_free(a);
		return -1;
	}
	return 0;
}

/* The same check on a member's header alone, for members not read. */
static int check_member(struct npz *z, const char *name, int integer, int64_t want,
			const char *because, struct sp_err *err)
{
	struct npy_array a;
	if (npz_member_shape(z, name, &a, err))
		return -1;
	return check_vector(z, name, &a, integer, want, because, err);
}

static int read_format(struct npz *z, enum layout *layout, struct sp_err *err)
{
	struct npy_array f;
	char text[8] = "";
	if (npz_read(z, "format", &f, err))
		return -1;
	int ok = f.dtype == NPY_BYTES && npy_count(&f) == 1 && f.itemsize < sizeof text;
	if (ok)
		memcpy(text, f.data, f.itemsize); /* NumPy pads |Sn with NULs */
	npy_free(&f);
	for (char *c = text; *c; c++)
		if (*c < ' ' || *c > '~')
			*c = '?';
	if (!ok)
		return sp_fail(err, "%s: format is not a short byte string", z->zip.path);
	if (strcmp(text, "csr") == 0)
		*layout = LAYOUT_CSR;
	else if (strcmp(text, "coo") == 0)
		*layout = LAYOUT_COO;
	else
		return sp_fail(err, "%s: format is '%s'; only csr and coo are supported",
			       z->zip.path, text);
	return 0;
}

static int read_shape(struct npz *z, int64_t *nrows, int64_t *ncols, struct sp_err *err)
{
	struct npy_array s;
	if (read_vector(z, "shape", NPY_I8, 2, "a matrix has 2 dimensions", &s, err))
		return -1;
	*nrows = ((int64_t *)s.data)[0];
	*ncols = ((int64_t *)s.data)[1];
	npy_free(&s);
	if (*nrows < 0 || *ncols < 0 || *nrows > CSR_MAX_DIM || *ncols > CSR_MAX_DIM)
		return sp_fail(err, "%s: shape (%lld, %lld) is out of range [0, %lld]", z->zip.path,
			       (long long)*nrows, (long long)*ncols, (long long)CSR_MAX_DIM);
	return 0;
}

static int read_header(struct npz *z, enum layout *layout, int64_t *nrows, int64_t *ncols,
		       struct sp_err *err)
{
	return read_format(z, layout, err) || read_shape(z, nrows, ncols, err) ? -1 : 0;
}

/* indptr, checked to run from 0 up to its last entry, which is nnz. */
static int read_indptr(struct npz *z, int64_t nrows, struct npy_array *ip, int64_t *nnz,
		       struct sp_err *err)
{
	char because[64];
	snprintf(because, sizeof because, "shape has %lld rows", (long long)nrows);
	if (read_vector(z, "indptr", NPY_I8, nrows + 1, because, ip, err))
		return -1;
	const int64_t *p = ip->data;
	*nnz = p[nrows];
	if (csr_validate_indptr(p, nrows, *nnz, z->zip.path, err)) {
		npy_free(ip);
		return -1;
	}
	if (*nnz > CSR_MAX_NNZ) {
		npy_free(ip);
		return sp_fail(err, "%s: indptr ends at %lld, over the limit of %lld entries",
			       z->zip.path, (long long)*nnz, (long long)CSR_MAX_NNZ);
	}
	return 0;
}

static int read_csr(struct npz *z, struct csr *g, struct sp_err *err)
{
	struct npy_array ip, ix, dv;
	char because[64];
	if (read_indptr(z, g->nrows, &ip, &g->nnz, err))
		return -1;
	snprintf(because, sizeof because, "indptr ends at %lld", (long long)g->nnz);
	if (read_vector(z, "indices", NPY_I4, g->nnz, because, &ix, err)) {
		npy_free(&ip);
		return -1;
	}
	if (read_vector(z, "data", NPY_F4, g->nnz, because, &dv, err)) {
		npy_free(&ip);
		npy_free(&ix);
		return -1;
	}
	g->indptr = ip.data;
	g->indices = ix.data;
	g->values = dv.data;
	return 0;
}

/* The row member, and nnz from its length. */
static int read_rows(struct npz *z, struct npy_array *row, int64_t *nnz, struct sp_err *err)
{
	if (read_vector(z, "row", NPY_I8, -1, "", row, err))
		return -1;
	*nnz = row->shape[0];
	if (*nnz <= CSR_MAX_NNZ)
		return 0;
	npy_free(row);
	return sp_fail(err, "%s: row has %lld entries, over the limit of %lld", z->zip.path,
		       (long long)*nnz, (long long)CSR_MAX_NNZ);
}

static int read_coo(struct npz *z, struct csr *g, struct sp_err *err)
{
	struct npy_array row, col = {0}, dv = {0};
	char because[64];
	int64_t nnz;
	if (read_rows(z, &row, &nnz, err))
		return -1;
	snprintf(because, sizeof because, "row has %lld", (long long)nnz);
	int rc = read_vector(z, "col", NPY_I8, nnz, because, &col, err);
	if (rc == 0)
		rc = read_vector(z, "data", NPY_F4, nnz, because, &dv, err);
	if (rc == 0)
		rc = csr_from_coo(g, g->nrows, g->ncols, nnz, row.data, col.data, dv.data,
				  z->zip.path, err);
	npy_free(&row);
	npy_free(&col);
	npy_free(&dv);
	return rc;
}

int csr_npz_read(struct npz *z, struct csr *g, struct sp_err *err)
{
	enum layout layout;
	int64_t nrows, ncols;
	memset(g, 0, sizeof *g);
	if (read_header(z, &layout, &nrows, &ncols, err))
		return -1;
	g->nrows = nrows;
	g->ncols = ncols;
	if ((layout == LAYOUT_CSR ? read_csr(z, g, err) : read_coo(z, g, err)) ||
	    csr_validate(g, CSR_CHECK_BASIC | CSR_CHECK_FINITE, z->zip.path, err)) {
		csr_free(g);
		return -1;
	}
	return 0;
}

int csr_npz_load(const char *path, struct csr *g, struct sp_err *err)
{
	struct npz z;
	memset(g, 0, sizeof *g);
	if (npz_open(&z, path, err))
		return -1;
	int rc = csr_npz_read(&z, g, err);
	npz_close(&z);
	return rc;
}

/* Entries per row from coo's row member, as an indptr. */
static int count_rows(struct npz *z, const struct npy_array *row, int64_t nrows, int64_t *indptr,
		      struct sp_err *err)
{
	const int64_t *r = row->data;
	int64_t nnz = row->shape[0];
	for (int64_t i = 0; i < nnz; i++) {
		if (r[i] < 0 || r[i] >= nrows)
			return sp_fail(err, "%s: row of entry %lld is %lld, outside [0, %lld)",
				       z->zip.path, (long long)i, (long long)r[i],
				       (long long)nrows);
		indptr[r[i] + 1]++;
	}
	for (int64_t i = 0; i < nrows; i++)
		indptr[i + 1] += indptr[i];
	return 0;
}

static int load_indptr(struct npz *z, int64_t **indptr, int64_t *nrows, int64_t *ncols,
		       int64_t *nnz, struct sp_err *err)
{
	enum layout layout;
	struct npy_array a;
	char because[64];
	if (read_header(z, &layout, nrows, ncols, err))
		return -1;
	if (layout == LAYOUT_CSR) {
		if (read_indptr(z, *nrows, &a, nnz, err))
			return -1;
		*indptr = a.data;
		snprintf(because, sizeof because, "indptr ends at %lld", (long long)*nnz);
		return check_member(z, "indices", 1, *nnz, because, err) ||
		       check_member(z, "data", 0, *nnz, because, err) ? -1 : 0;
	}
	if (read_rows(z, &a, nnz, err))
		return -1;
	char what[300];
	snprintf(what, sizeof what, "%s: a row pointer array of %lld rows", z->zip.path,
		 (long long)*nrows);
	if (mem_check(((uint64_t)*nrows + 1) * sizeof **indptr, what, err)) {
		npy_free(&a);
		return -1;
	}
	*indptr = calloc((size_t)*nrows + 1, sizeof **indptr);
	snprintf(because, sizeof because, "row has %lld", (long long)*nnz);
	int rc = *indptr ? count_rows(z, &a, *nrows, *indptr, err)
			 : sp_fail(err, "%s: out of memory for %lld rows", z->zip.path,
				   (long long)*nrows);
	npy_free(&a);
	return rc || check_member(z, "col", 1, *nnz, because, err) ||
	       check_member(z, "data", 0, *nnz, because, err) ? -1 : 0;
}

int csr_npz_load_indptr(const char *path, int64_t **indptr, int64_t *nrows, int64_t *ncols,
			int64_t *nnz, struct sp_err *err)
{
	struct npz z;
	*indptr = NULL;
	if (npz_open(&z, path, err))
		return -1;
	int rc = load_indptr(&z, indptr, nrows, ncols, nnz, err);
	npz_close(&z);
	if (rc) {
		free(*indptr);
		*indptr = NULL;
	}
	return rc;
}
