/* NumPy .npy arrays: the header (format versions 1.0, 2.0 and 3.0), the
 * dtypes spkit uses (bool, u1, i4, i8, f2, f4, f8 little-endian, and |Sn
 * byte strings for SciPy's `format` member), C order only.
 *
 * Reading goes through a byte source, so the same code reads a plain file,
 * a buffer in memory (fuzzing) and a zip member being inflated (npz.h):
 * the header is parsed from its first bytes and the data is then read
 * straight into the array's final buffer. Every size in a header is checked
 * against what the source holds before anything is allocated. */
#ifndef SPKIT_NPY_H
#define SPKIT_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/err.h"

#define NPY_MAXDIM 8
/* Longest header text accepted (NumPy itself refuses more than 10000
 * characters without allow_pickle). */
#define NPY_HEADER_LIMIT 65536
/* Longest header npy_header_encode writes: the dict with 8 dimensions of
 * 20 digits, NumPy's 21 spare spaces, padding to 64. Always fits a
 * version 1.0 header, so spkit never needs to write 2.0. */
#define NPY_HEADER_MAX 512

enum npy_dtype {
	NPY_BOOL, /* |b1 */
	NPY_U1,   /* |u1 */
	NPY_I4,   /* <i4 */
	NPY_I8,   /* <i8 */
	NPY_F2,   /* <f2 */
	NPY_F4,   /* <f4 */
	NPY_F8,   /* <f8 */
	NPY_BYTES /* |S<itemsize>, fixed-length byte strings */
};

struct npy_array {
	enum npy_dtype dtype;
	size_t itemsize; /* bytes per element; for NPY_BYTES the n of |Sn */
	int ndim;        /* 0 for a scalar array */
	int64_t shape[NPY_MAXDIM];
	void *data; /* malloc'd by the readers; npy_free releases it */
};

/* Bytes per element of a fixed-size dtype (0 for NPY_BYTES). */
size_t npy_dtype_size(enum npy_dtype dt);
/* "bool", "u1", "i4", "i8", "f2", "f4", "f8" or "S". */
const char *npy_dtype_name(enum npy_dtype dt);
/* Elements and bytes of an array whose shape has been checked (by a
 * reader, npy_alloc or npy_header_encode): the products cannot overflow. */
int64_t npy_count(const struct npy_array *a);
size_t npy_nbytes(const struct npy_array *a);
/* Check dtype, itemsize (fixed by the dtype, 1 or more for NPY_BYTES) and
 * shape: no negative dimension, at most NPY_MAXDIM, and the element count
 * and byte size (counting 0 as 1, so no dimension is absurd) fit in int64. */
int npy_check(const struct npy_array *a, const char *name, struct sp_err *err);
/* Check dtype, itemsize and shape and allocate a->data for them (at least
 * one byte, so data is never NULL for an empty array). */
int npy_alloc(struct npy_array *a, const char *name, struct sp_err *err);
void npy_free(struct npy_array *a);

/* Where a reader pulls bytes from. read() delivers exactly n bytes or fails
 * with a message; size is how many bytes the source holds in all. */
struct npy_source {
	int (*read)(struct npy_source *src, void *buf, size_t n, struct sp_err *err);
	void *ctx; /* the reader's own state */
	uint64_t size;
	const char *name; /* starts every message: "x.npy" or "g.npz: member 'data'" */
	const char *noun; /* what holds the bytes, in size messages: "file" or "member" */
};

/* Parse a .npy header's dict text ("{'descr': '<f4', 'fortran_order':
 * False, 'shape': (3, 4), }" and padding) into a's dtype, itemsize, ndim
 * and shape. base is the text's offset in the file, for "at byte N";
 * version is the format's major version (1 and 2 allow Python 2's "3L"). */
int npy_header_parse(const char *text, size_t len, uint64_t base, int version,
		     struct npy_array *a, const char *name, struct sp_err *err);
/* Consume the header from src and fill a's dtype, itemsize, ndim and shape
 * (a->data is NULL). Fails unless the data that follows is exactly the
 * size the header claims. */
int npy_read_header_source(struct npy_source *src, struct npy_array *a, struct sp_err *err);
/* Header, then the data straight into a freshly allocated a->data. */
int npy_read_source(struct npy_source *src, struct npy_array *a, struct sp_err *err);
int npy_read(const char *path, struct npy_array *a, struct sp_err *err);
int npy_read_mem(const void *buf, size_t size, const char *name, struct npy_array *a,
		 struct sp_err *err);

/* The header NumPy would write for a (version 1.0, padded with spaces so
 * the data starts at a multiple of 64 bytes); buf holds NPY_HEADER_MAX.
 * Checks a's dtype, itemsize and shape. */
int npy_header_encode(const struct npy_array *a, char *buf, size_t *len, const char *name,
		      struct sp_err *err);
/* Header and data to an open stream; name is for messages. */
int npy_write_fp(FILE *fp, const struct npy_array *a, const char *name, struct sp_err *err);
/* Atomically (outfile.h): the file appears complete or not at all. */
int npy_write(const char *path, const struct npy_array *a, struct sp_err *err);

/* Elementwise conversion of src's numeric data into dst (npy_count(src)
 * elements of type `to`). Conversions that would change a value fail and
 * name the element: integers out of the target's range, floats that are not
 * integers (or not finite) into integer types, finite values that overflow
 * a float type. bool counts as the integers 0 and 1. */
int npy_convert(const struct npy_array *src, enum npy_dtype to, void *dst, const char *name,
		struct sp_err *err);
/* Convert a in place to dtype `to` (a no-op if it already is). */
int npy_cast(struct npy_array *a, enum npy_dtype to, const char *name, struct sp_err *err);

#endif
