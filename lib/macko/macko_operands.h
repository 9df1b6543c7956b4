/* The operands of a product y = alpha A x + beta y_in from files: the MACKO
 * matrix, x (C values, one vector, or N x C for N vectors) and y_in (R
 * values or N x R, the shape of y), each checked against the matrix's
 * shape, and on request the check that every value is finite (without it,
 * NaN and Inf are computed through, as BLAS does). */
#ifndef SPKIT_MACKO_OPERANDS_H
#define SPKIT_MACKO_OPERANDS_H

#include "core/err.h"
#include "formats/npy.h"
#include "macko/macko.h"

struct macko_operands {
	const char *matrix_path, *x_path, *y_in_path; /* y_in_path NULL: no y_in */
	struct macko m;
	struct npy_array x;    /* f2, 1-d (cols) or 2-d (nvec x cols) */
	struct npy_array y_in; /* f4, x's number of dimensions, rows for cols */
	int nvec;
};

/* A 1-d array of len values or a 2-d one of N x len (N >= 1; more than
 * MACKO_MAX_VECTORS run as several products), of f2, f4 or f8, converted to `to`. what names len
 * in messages ("columns", "rows"). */
int macko_vectors_read(const char *path, int64_t len, const char *what, enum npy_dtype to,
		       struct npy_array *a, struct sp_err *err);

/* Load the matrix, x and (y_in_path not NULL) y_in, their shapes checked. */
int macko_operands_load(struct macko_operands *op, const char *matrix_path, const char *x_path,
			const char *y_in_path, struct sp_err *err);
/* -1 and the first value that is not finite, of the matrix's stored
 * elements, x in fp16 or y_in, named: "x.npy: element 7 is not finite in
 * fp16". */
int macko_operands_check_finite(const struct macko_operands *op, struct sp_err *err);
/* y for these operands: f2 or f4 (dtype), x's number of dimensions. */
int macko_operands_alloc_y(const struct macko_operands *op, enum npy_dtype dtype,
			   struct npy_array *y, const char *name, struct sp_err *err);
void macko_operands_free(struct macko_operands *op);

#endif
