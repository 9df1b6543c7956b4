/* Checks on arrays that a program reads as floating-point data (a matrix,
 * vectors): that the dtype is one of the float types, and where the first
 * value that is not finite lies. */
#ifndef SPKIT_NPY_FLOAT_H
#define SPKIT_NPY_FLOAT_H

#include <stdint.h>

#include "core/err.h"
#include "formats/npy.h"

/* 0 when a's dtype is f2, f4 or f8; otherwise -1 and "NAME: expected dtype
 * f2, f4 or f8, found i4". */
int npy_float_require(const struct npy_array *a, const char *name, struct sp_err *err);

/* The index of a's first NaN or infinity (a of dtype f2, f4 or f8, in C
 * order), or -1 when every element is finite. */
int64_t npy_float_first_nonfinite(const struct npy_array *a);

#endif
