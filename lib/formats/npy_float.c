#include "formats/npy_float.h"

#include <math.h>

#include "core/half.h"

int npy_float_require(const struct npy_array *a, const char *name, struct sp_err *err)
{
	if (a->dtype == NPY_F2 || a->dtype == NPY_F4 || a->dtype == NPY_F8)
		return 0;
	return sp_fail(err, "%s: expected dtype f2, f4 or f8, found %s", name,
		       npy_dtype_name(a->dtype));
}

int64_t npy_float_first_nonfinite(const struct npy_array *a)
{
	const int64_t n = npy_count(a);
	const uint16_t *f2 = a->data;
	const float *f4 = a->data;
	const double *f8 = a->data;
	int64_t i = 0;
	switch (a->dtype) {
	case NPY_F2:
		while (i < n && !half_is_nonfinite(f2[i]))
			i++;
		break;
	case NPY_F4:
		while (i < n && isfinite(f4[i]))
			i++;
		break;
	default:
		while (i < n && isfinite(f8[i]))
			i++;
	}
	return i < n ? i : -1;
}
