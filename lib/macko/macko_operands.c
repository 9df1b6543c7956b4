#include "macko/macko_operands.h"

#include <limits.h>
#include <string.h>

#include "formats/npy_float.h"
#include "macko/macko_npz.h"

int macko_vectors_read(const char *path, int64_t len, const char *what, enum npy_dtype to,
		       struct npy_array *a, struct sp_err *err)
{
	if (npy_read(path, a, err))
		return -1;
	int64_t last = a->ndim ? a->shape[a->ndim - 1] : 0;
	if (npy_float_require(a, path, err))
		goto fail;
	if (a->ndim < 1 || a->ndim > 2 || last != len) {
		sp_fail(err,
			"%s: expected %lld %s (or N x %lld), found shape of %d dimensions ending in %lld",
			path, (long long)len, what, (long long)len, a->ndim, (long long)last);
		goto fail;
	}
	if (a->ndim == 2 && (a->shape[0] < 1 || a->shape[0] > INT_MAX)) {
		sp_fail(err, "%s: %lld vectors, expected 1 to %d", path, (long long)a->shape[0],
			INT_MAX);
		goto fail;
	}
	if (npy_cast(a, to, path, err))
		goto fail;
	return 0;
fail:
	npy_free(a);
	return -1;
}

int macko_operands_load(struct macko_operands *op, const char *matrix_path, const char *x_path,
			const char *y_in_path, struct sp_err *err)
{
	memset(op, 0, sizeof *op);
	op->matrix_path = matrix_path;
	op->x_path = x_path;
	op->y_in_path = y_in_path;
	if (macko_load(matrix_path, &op->m, err))
		return -1;
	if (macko_vectors_read(x_path, op->m.cols, "columns", NPY_F2, &op->x, err))
		goto fail;
	op->nvec = op->x.ndim == 2 ? (int)op->x.shape[0] : 1;
	if (!y_in_path)
		return 0;
	if (macko_vectors_read(y_in_path, op->m.rows, "rows", NPY_F4, &op->y_in, err))
		goto fail;
	const struct npy_array *x = &op->x, *y = &op->y_in;
	if (y->ndim != x->ndim || (x->ndim == 2 && y->shape[0] != x->shape[0])) {
		sp_fail(err, "%s: shape does not match y (%d vectors of %lld)", y_in_path, op->nvec,
			(long long)op->m.rows);
		goto fail;
	}
	return 0;
fail:
	macko_operands_free(op);
	return -1;
}

int macko_operands_check_finite(const struct macko_operands *op, struct sp_err *err)
{
	const struct npy_array values = {NPY_F2, 2, 1, {op->m.elements}, op->m.values};
	int64_t bad;
	if ((bad = npy_float_first_nonfinite(&values)) >= 0)
		return sp_fail(err, "%s: stored element %lld is not finite", op->matrix_path,
			       (long long)bad);
	if ((bad = npy_float_first_nonfinite(&op->x)) >= 0)
		return sp_fail(err, "%s: element %lld is not finite in fp16", op->x_path,
			       (long long)bad);
	if (op->y_in_path && (bad = npy_float_first_nonfinite(&op->y_in)) >= 0)
		return sp_fail(err, "%s: element %lld is not finite", op->y_in_path, (long long)bad);
	return 0;
}

int macko_operands_alloc_y(const struct macko_operands *op, enum npy_dtype dtype,
			   struct npy_array *y, const char *name, struct sp_err *err)
{
	*y = (struct npy_array){dtype, npy_dtype_size(dtype), op->x.ndim, {0}, NULL};
	if (op->x.ndim == 2) {
		y->shape[0] = op->nvec;
		y->shape[1] = op->m.rows;
	} else {
		y->shape[0] = op->m.rows;
	}
	return npy_alloc(y, name, err);
}

void macko_operands_free(struct macko_operands *op)
{
	macko_free(&op->m);
	npy_free(&op->x);
	npy_free(&op->y_in);
}
