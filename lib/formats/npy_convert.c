/* Checked elementwise conversion between the numeric dtypes, for loaders
 * that want one type (int64 indices, float32 values) whatever the file has.
 *
 * Elements go through a block of int64 (integer targets) or double (float
 * targets): one tight loop decodes the source type into the block, one
 * checks it, one encodes it, so no loop switches on a dtype per element. */
#include "formats/npy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"

enum { BLOCK = 1024 }; /* elements per block: 8 KiB of int64 or double */

static int is_integer(enum npy_dtype dt)
{
	return dt == NPY_BOOL || dt == NPY_U1 || dt == NPY_I4 || dt == NPY_I8;
}

static void load_ints(const void *src, enum npy_dtype dt, int64_t at, int n, int64_t *out)
{
	const uint8_t *u1 = src;
	const int32_t *i4 = src;
	const int64_t *i8 = src;
	switch (dt) {
	case NPY_BOOL:
	case NPY_U1:
		for (int i = 0; i < n; i++)
			out[i] = u1[at + i];
		break;
	case NPY_I4:
		for (int i = 0; i < n; i++)
			out[i] = i4[at + i];
		break;
	default:
		memcpy(out, i8 + at, (size_t)n * sizeof *out);
	}
}

static void load_doubles(const void *src, enum npy_dtype dt, int64_t at, int n, double *out)
{
	const uint16_t *f2 = src;
	const float *f4 = src;
	const double *f8 = src;
	if (is_integer(dt)) {
		int64_t tmp[BLOCK];
		load_ints(src, dt, at, n, tmp);
		for (int i = 0; i < n; i++)
			out[i] = (double)tmp[i];
		return;
	}
	switch (dt) {
	case NPY_F2:
		for (int i = 0; i < n; i++)
			out[i] = half_to_float(f2[at + i]);
		break;
	case NPY_F4:
		for (int i = 0; i < n; i++)
			out[i] = f4[at + i];
		break;
	default:
		memcpy(out, f8 + at, (size_t)n * sizeof *out);
	}
}

/* Float source into an integer block: each value must be a whole number
 * that fits int64 (the target's own range is checked after). */
static int doubles_to_ints(const double *d, int n, int64_t at, int64_t *out, const char *name,
			   struct sp_err *err)
{
	for (int i = 0; i < n; i++) {
		if (!isfinite(d[i]) || d[i] != trunc(d[i]))
			return sp_fail(err, "%s: element %lld (%.17g) is not an integer", name,
				       (long long)(at + i), d[i]);
		if (d[i] < -0x1p63 || d[i] >= 0x1p63)
			return sp_fail(err, "%s: element %lld (%.17g) is out of range", name,
				       (long long)(at + i), d[i]);
		out[i] = (int64_t)d[i];
	}
	return 0;
}

static int store_ints(void *dst, enum npy_dtype dt, int64_t at, int n, const int64_t *v,
		      const char *name, struct sp_err *err)
{
	int64_t lo = dt == NPY_I4 ? INT32_MIN : dt == NPY_I8 ? INT64_MIN : 0;
	int64_t hi = dt == NPY_I4 ? INT32_MAX : dt == NPY_I8 ? INT64_MAX : dt == NPY_U1 ? 255 : 1;
	for (int i = 0; i < n; i++)
		if (v[i] < lo || v[i] > hi)
			return sp_fail(err, "%s: element %lld (%lld) does not fit in %s", name,
				       (long long)(at + i), (long long)v[i], npy_dtype_name(dt));
	uint8_t *u1 = dst;
	int32_t *i4 = dst;
	int64_t *i8 = dst;
	switch (dt) {
	case NPY_BOOL:
	case NPY_U1:
		for (int i = 0; i < n; i++)
			u1[at + i] = (uint8_t)v[i];
		break;
	case NPY_I4:
		for (int i = 0; i < n; i++)
			i4[at + i] = (int32_t)v[i];
		break;
	default:
		memcpy(i8 + at, v, (size_t)n * sizeof *v);
	}
	return 0;
}

/* Half goes straight from double (half_from_double): through the nearest
 * float it would round twice, and differ from NumPy. */
static int store_doubles(void *dst, enum npy_dtype dt, int64_t at, int n, const double *v,
			 const char *name, struct sp_err *err)
{
	uint16_t *f2 = dst;
	float *f4 = dst;
	double *f8 = dst;
	if (dt == NPY_F8) {
		memcpy(f8 + at, v, (size_t)n * sizeof *v);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int overflow;
		if (dt == NPY_F2) {
			f2[at + i] = half_from_double(v[i]);
			overflow = (f2[at + i] & HALF_ABS) == HALF_INF && isfinite(v[i]);
		} else {
			f4[at + i] = (float)v[i];
			overflow = isinf(f4[at + i]) && isfinite(v[i]);
		}
		if (overflow)
			return sp_fail(err, "%s: element %lld (%.17g) overflows %s", name,
				       (long long)(at + i), v[i], npy_dtype_name(dt));
	}
	return 0;
}

static int check_numeric(enum npy_dtype from, enum npy_dtype to, const char *name,
			 struct sp_err *err)
{
	if ((unsigned)from >= NPY_BYTES || (unsigned)to >= NPY_BYTES)
		return sp_fail(err, "%s: cannot convert %s to %s", name, npy_dtype_name(from),
			       npy_dtype_name(to));
	return 0;
}

int npy_convert(const struct npy_array *src, enum npy_dtype to, void *dst, const char *name,
		struct sp_err *err)
{
	if (check_numeric(src->dtype, to, name, err))
		return -1;
	int64_t count = npy_count(src);
	if (src->dtype == to) {
		memcpy(dst, src->data, npy_nbytes(src));
		return 0;
	}
	int64_t ints[BLOCK];
	double doubles[BLOCK];
	for (int64_t at = 0; at < count; at += BLOCK) {
		int n = count - at < BLOCK ? (int)(count - at) : BLOCK;
		int rc;
		if (!is_integer(to)) {
			load_doubles(src->data, src->dtype, at, n, doubles);
			rc = store_doubles(dst, to, at, n, doubles, name, err);
		} else if (is_integer(src->dtype)) {
			load_ints(src->data, src->dtype, at, n, ints);
			rc = store_ints(dst, to, at, n, ints, name, err);
		} else {
			load_doubles(src->data, src->dtype, at, n, doubles);
			rc = doubles_to_ints(doubles, n, at, ints, name, err);
			if (rc == 0)
				rc = store_ints(dst, to, at, n, ints, name, err);
		}
		if (rc)
			return -1;
	}
	return 0;
}

int npy_cast(struct npy_array *a, enum npy_dtype to, const char *name, struct sp_err *err)
{
	if (a->dtype == to)
		return 0;
	if (check_numeric(a->dtype, to, name, err))
		return -1;
	struct npy_array b = *a;
	b.dtype = to;
	b.itemsize = npy_dtype_size(to);
	if (npy_alloc(&b, name, err))
		return -1;
	if (npy_convert(a, to, b.data, name, err)) {
		npy_free(&b);
		return -1;
	}
	npy_free(a);
	*a = b;
	return 0;
}
