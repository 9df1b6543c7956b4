/* .npy arrays: dtypes and sizes, reading from a byte source, writing. */
#include "formats/npy.h"

#include <stdlib.h>
#include <string.h>

#include "core/outfile.h"
#include "core/bytes.h"
#include "core/infile.h"

size_t npy_dtype_size(enum npy_dtype dt)
{
	static const size_t sizes[] = {1, 1, 4, 8, 2, 4, 8, 0};
	return (unsigned)dt <= NPY_BYTES ? sizes[dt] : 0;
}

const char *npy_dtype_name(enum npy_dtype dt)
{
	static const char *const names[] = {"bool", "u1", "i4", "i8", "f2", "f4", "f8", "S"};
	return (unsigned)dt <= NPY_BYTES ? names[dt] : "?";
}

int64_t npy_count(const struct npy_array *a)
{
	int64_t n = 1;
	for (int i = 0; i < a->ndim; i++)
		n *= a->shape[i];
	return n;
}

size_t npy_nbytes(const struct npy_array *a)
{
	return (size_t)npy_count(a) * a->itemsize;
}

int npy_check(const struct npy_array *a, const char *name, struct sp_err *err)
{
	if ((unsigned)a->dtype > NPY_BYTES)
		return sp_fail(err, "%s: invalid dtype %d", name, (int)a->dtype);
	size_t want = npy_dtype_size(a->dtype);
	if (want ? a->itemsize != want : a->itemsize == 0)
		return sp_fail(err, "%s: itemsize %zu does not fit dtype %s", name, a->itemsize,
			       npy_dtype_name(a->dtype));
	if (a->ndim < 0 || a->ndim > NPY_MAXDIM)
		return sp_fail(err, "%s: %d dimensions (at most %d)", name, a->ndim, NPY_MAXDIM);
	int64_t bytes = (int64_t)a->itemsize;
	for (int i = 0; i < a->ndim; i++) {
		if (a->shape[i] < 0)
			return sp_fail(err, "%s: negative dimension %lld in shape", name,
				       (long long)a->shape[i]);
		if (__builtin_mul_overflow(bytes, a->shape[i] ? a->shape[i] : 1, &bytes))
			return sp_fail(err, "%s: shape is too large (dimension %d is %lld)", name,
				       i, (long long)a->shape[i]);
	}
	return 0;
}

int npy_alloc(struct npy_array *a, const char *name, struct sp_err *err)
{
	a->data = NULL;
	if (npy_check(a, name, err))
		return -1;
	size_t n = npy_nbytes(a);
	a->data = malloc(n ? n : 1);
	if (!a->data)
		return sp_fail(err, "%s: out of memory for %zu bytes", name, n);
	return 0;
}

void npy_free(struct npy_array *a)
{
	free(a->data);
	a->data = NULL;
}

int npy_read_header_source(struct npy_source *src, struct npy_array *a, struct sp_err *err)
{
	unsigned char pre[12];
	memset(a, 0, sizeof *a);
	/* Magic and version first: the length field is 2 bytes in version 1
	 * and 4 in versions 2 and 3. */
	if (src->size < 10)
		return sp_fail(err, "%s: truncated: %llu bytes is too short for a .npy header",
			       src->name, (unsigned long long)src->size);
	if (src->read(src, pre, 8, err))
		return -1;
	if (memcmp(pre, "\x93NUMPY", 6) != 0)
		return sp_fail(err, "%s: not a .npy file (no 0x93 NUMPY magic at byte 0)",
			       src->name);
	int version = pre[6];
	if (version < 1 || version > 3 || pre[7] != 0)
		return sp_fail(err, "%s: unsupported .npy format version %d.%d", src->name, pre[6],
			       pre[7]);
	int lenbytes = version == 1 ? 2 : 4;
	if (src->size < 8u + lenbytes)
		return sp_fail(err, "%s: truncated: %llu bytes is too short for a .npy header",
			       src->name, (unsigned long long)src->size);
	if (src->read(src, pre + 8, lenbytes, err))
		return -1;
	uint64_t textlen = le_load(pre + 8, lenbytes), start = 8u + lenbytes;
	if (textlen > NPY_HEADER_LIMIT)
		return sp_fail(err, "%s: header length %llu is over the limit of %d bytes",
			       src->name, (unsigned long long)textlen, NPY_HEADER_LIMIT);
	if (start + textlen > src->size)
		return sp_fail(err, "%s: truncated: header claims %llu bytes, %s holds %llu",
			       src->name, (unsigned long long)(start + textlen), src->noun,
			       (unsigned long long)src->size);
	char *text = malloc(textlen ? textlen : 1);
	if (!text)
		return sp_fail(err, "%s: out of memory", src->name);
	int rc = src->read(src, text, textlen, err);
	if (rc == 0)
		rc = npy_header_parse(text, textlen, start, version, a, src->name, err);
	free(text);
	if (rc)
		return -1;
	uint64_t want = npy_nbytes(a), have = src->size - start - textlen;
	if (want > have)
		return sp_fail(err, "%s: truncated: header claims %llu bytes of data, %s holds "
			       "%llu", src->name, (unsigned long long)want, src->noun,
			       (unsigned long long)have);
	if (want < have)
		return sp_fail(err, "%s: header claims %llu bytes of data, %s holds %llu "
			       "(unexpected bytes at the end)", src->name, (unsigned long long)want,
			       src->noun, (unsigned long long)have);
	return 0;
}

int npy_read_source(struct npy_source *src, struct npy_array *a, struct sp_err *err)
{
	if (npy_read_header_source(src, a, err) || npy_alloc(a, src->name, err))
		return -1;
	if (src->read(src, a->data, npy_nbytes(a), err)) {
		npy_free(a);
		return -1;
	}
	return 0;
}

static int read_file(struct npy_source *src, void *buf, size_t n, struct sp_err *err)
{
	/* A large fread goes straight from the kernel into buf. */
	if (fread(buf, 1, n, src->ctx) == n)
		return 0;
	if (ferror((FILE *)src->ctx))
		return sp_fail_errno(err, "%s: read failed", src->name);
	return sp_fail(err, "%s: file ended early (did it change while being read?)", src->name);
}

int npy_read(const char *path, struct npy_array *a, struct sp_err *err)
{
	FILE *fp;
	uint64_t size;
	memset(a, 0, sizeof *a);
	if (infile_open(path, &fp, &size, err))
		return -1;
	struct npy_source src = {read_file, fp, size, path, "file"};
	int rc = npy_read_source(&src, a, err);
	fclose(fp);
	return rc;
}

struct mem {
	const unsigned char *p;
	size_t left;
};

static int read_mem(struct npy_source *src, void *buf, size_t n, struct sp_err *err)
{
	struct mem *m = src->ctx;
	if (n > m->left)
		return sp_fail(err, "%s: truncated", src->name);
	memcpy(buf, m->p, n);
	m->p += n;
	m->left -= n;
	return 0;
}

int npy_read_mem(const void *buf, size_t size, const char *name, struct npy_array *a,
		 struct sp_err *err)
{
	struct mem m = {buf, size};
	struct npy_source src = {read_mem, &m, size, name, "file"};
	return npy_read_source(&src, a, err);
}

int npy_write_fp(FILE *fp, const struct npy_array *a, const char *name, struct sp_err *err)
{
	char header[NPY_HEADER_MAX];
	size_t len, n;
	if (npy_header_encode(a, header, &len, name, err))
		return -1;
	n = npy_nbytes(a);
	if (fwrite(header, 1, len, fp) != len || (n && fwrite(a->data, 1, n, fp) != n))
		return sp_fail_errno(err, "%s: write failed", name);
	return 0;
}

int npy_write(const char *path, const struct npy_array *a, struct sp_err *err)
{
	struct outfile f;
	if (outfile_open(&f, path, err))
		return -1;
	if (npy_write_fp(f.fp, a, path, err)) {
		outfile_abort(&f);
		return -1;
	}
	return outfile_commit(&f, err);
}
