/* libFuzzer target for .npy: the reader on arbitrary bytes (from memory, no
 * file I/O), then on what it accepts: every numeric conversion, and a
 * write-then-read round trip that must give the same array back. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/npy.h"

static void convert_all(const struct npy_array *a)
{
	static const enum npy_dtype targets[] = {NPY_BOOL, NPY_U1, NPY_I4, NPY_I8,
						 NPY_F2,   NPY_F4, NPY_F8};
	struct sp_err err;
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
		size_t n = (size_t)npy_count(a) * npy_dtype_size(targets[i]);
		void *dst = malloc(n ? n : 1);
		npy_convert(a, targets[i], dst, "fuzz.npy", &err);
		free(dst);
	}
}

static void round_trip(const struct npy_array *a)
{
	char header[NPY_HEADER_MAX];
	size_t len, n = npy_nbytes(a);
	struct sp_err err;
	struct npy_array b;
	if (npy_header_encode(a, header, &len, "fuzz.npy", &err))
		__builtin_trap(); /* the reader accepted it, so it must be writable */
	unsigned char *file = malloc(len + n);
	memcpy(file, header, len);
	memcpy(file + len, a->data, n);
	if (npy_read_mem(file, len + n, "again.npy", &b, &err) || b.dtype != a->dtype ||
	    b.itemsize != a->itemsize || b.ndim != a->ndim ||
	    memcmp(b.shape, a->shape, sizeof a->shape[0] * (size_t)a->ndim) != 0 ||
	    memcmp(b.data, a->data, n) != 0)
		__builtin_trap();
	npy_free(&b);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_array a;
	struct sp_err err;
	if (npy_read_mem(data, size, "fuzz.npy", &a, &err) != 0)
		return 0;
	if (a.dtype != NPY_BYTES)
		convert_all(&a);
	round_trip(&a);
	npy_free(&a);
	return 0;
}
