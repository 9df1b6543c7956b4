#include "macko/macko_npz.h"

#include <stdlib.h>
#include <string.h>

#include "formats/npz.h"

/* Reads member `name`, requiring its dtype and one dimension. */
static int read_1d(struct npz *z, const char *path, const char *name, enum npy_dtype dtype,
		   struct npy_array *a, struct sp_err *err)
{
	if (!npz_has(z, name))
		return sp_fail(err, "%s: missing array '%s' (a MACKO file has values, deltas, "
				    "row_indices and shape)", path, name);
	if (npz_read(z, name, a, err))
		return -1;
	if (a->ndim != 1 || a->dtype != dtype) {
		sp_fail(err, "%s: array '%s' must be 1-d %s, found %d-d %s", path, name,
			npy_dtype_name(dtype), a->ndim, npy_dtype_name(a->dtype));
		npy_free(a);
		return -1;
	}
	return 0;
}

int macko_read(struct npz *z, const char *path, struct macko *m, struct sp_err *err)
{
	struct npy_array shape = {0}, values = {0}, deltas = {0}, rows = {0};
	memset(m, 0, sizeof *m);
	int rc = -1;
	if (!npz_has(z, "shape")) {
		sp_fail(err, "%s: missing array 'shape' (a MACKO file has values, deltas, row_indices "
			     "and shape)", path);
		goto out;
	}
	if (npz_read(z, "shape", &shape, err))
		goto out;
	int64_t dims[2];
	if (shape.ndim != 1 || shape.shape[0] != 2 ||
	    (shape.dtype != NPY_I4 && shape.dtype != NPY_I8) ||
	    npy_convert(&shape, NPY_I8, dims, path, err)) {
		sp_fail(err, "%s: array 'shape' must hold two integers", path);
		goto out;
	}
	if (dims[0] < 0 || dims[1] < 0 || dims[0] >= INT32_MAX || dims[1] > INT32_MAX) {
		sp_fail(err, "%s: shape %lld x %lld is out of range", path, (long long)dims[0],
			(long long)dims[1]);
		goto out;
	}
	if (read_1d(z, path, "values", NPY_F2, &values, err) ||
	    read_1d(z, path, "deltas", NPY_U1, &deltas, err) ||
	    read_1d(z, path, "row_indices", NPY_I4, &rows, err))
		goto out;
	if (rows.shape[0] != dims[0] + 1) {
		sp_fail(err, "%s: row_indices has %lld entries, expected rows + 1 = %lld", path,
			(long long)rows.shape[0], (long long)dims[0] + 1);
		goto out;
	}
	/* values first: deltas are checked against it, so a short values would
	 * otherwise be blamed on deltas */
	int64_t elements = ((const int32_t *)rows.data)[dims[0]];
	if (values.shape[0] < elements || values.shape[0] % MACKO_PAD) {
		sp_fail(err, "%s: values has %lld entries for the %lld elements row_indices holds "
			     "(expected a multiple of %d, at least as many)", path,
			(long long)values.shape[0], (long long)elements, MACKO_PAD);
		goto out;
	}
	if (deltas.shape[0] * 2 != values.shape[0]) {
		sp_fail(err, "%s: deltas has %lld bytes for %lld values (expected half as many)", path,
			(long long)deltas.shape[0], (long long)values.shape[0]);
		goto out;
	}
	m->rows = dims[0];
	m->cols = dims[1];
	m->padded = values.shape[0];
	m->elements = elements;
	m->values = values.data;
	m->deltas = deltas.data;
	m->row_indices = rows.data;
	values.data = deltas.data = rows.data = NULL;
	if (macko_validate(m, path, err)) {
		macko_free(m);
		goto out;
	}
	rc = 0;
out:
	npy_free(&shape);
	npy_free(&values);
	npy_free(&deltas);
	npy_free(&rows);
	return rc;
}

int macko_load(const char *path, struct macko *m, struct sp_err *err)
{
	struct npz z;
	memset(m, 0, sizeof *m);
	if (npz_open(&z, path, err))
		return -1;
	int rc = macko_read(&z, path, m, err);
	npz_close(&z);
	return rc;
}

int macko_npz_probe(const char *path)
{
	struct npz z;
	if (npz_open(&z, path, NULL))
		return 0;
	/* Any array of MACKO's own (SciPy's are data, indices, indptr, row, col,
	 * format and shape): a MACKO file missing one is then reported as such. */
	int yes = npz_has(&z, "values") || npz_has(&z, "deltas") || npz_has(&z, "row_indices");
	npz_close(&z);
	return yes;
}

int macko_save(const char *path, const struct macko *m, int compress, struct sp_err *err)
{
	int64_t dims[2] = {m->rows, m->cols};
	const struct npy_array arrays[] = {
		{NPY_F2, 2, 1, {m->padded}, m->values},
		{NPY_U1, 1, 1, {m->padded / 2}, m->deltas},
		{NPY_I4, 4, 1, {m->rows + 1}, m->row_indices},
		{NPY_I8, 8, 1, {2}, dims},
	};
	static const char *const names[] = {"values", "deltas", "row_indices", "shape"};
	struct npz_writer w;
	if (npz_writer_open(&w, path, compress, err))
		return -1;
	for (int i = 0; i < 4; i++) {
		if (npz_writer_add(&w, names[i], &arrays[i], err)) {
			npz_writer_abort(&w);
			return -1;
		}
	}
	return npz_writer_commit(&w, err);
}
