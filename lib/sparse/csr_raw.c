#include "sparse/csr_raw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"

/* A whole raw int32 file: *count values into *out (malloc'd). */
static int read_i32(const char *path, int32_t **out, int64_t *count, struct sp_err *err)
{
	FILE *fp;
	uint64_t size;
	if (infile_open(path, &fp, &size, err))
		return -1;
	int rc = 0;
	if (size % 4)
		rc = sp_fail(err, "%s: %llu bytes, not a whole number of int32 values", path,
			     (unsigned long long)size);
	*count = (int64_t)(size / 4);
	*out = rc ? NULL : malloc(size ? size : 1);
	if (!rc && !*out)
		rc = sp_fail(err, "%s: out of memory for %lld values", path, (long long)*count);
	if (!rc && size && fread(*out, 4, (size_t)*count, fp) != (size_t)*count)
		rc = sp_fail_errno(err, "%s: read failed", path);
	fclose(fp);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int csr_raw_load_indptr(const char *path, int64_t **indptr, int64_t *nrows, struct sp_err *err)
{
	int32_t *raw;
	int64_t count;
	size_t n = strlen(path), m = strlen(CSR_RAW_SUFFIX);
	if (n < m || strcmp(path + n - m, CSR_RAW_SUFFIX))
		return sp_fail(err, "%s: a MaxK-GNN graph is named NAME" CSR_RAW_SUFFIX, path);
	if (read_i32(path, &raw, &count, err))
		return -1;
	if (count < 2) {
		free(raw);
		return sp_fail(err, "%s: %lld values: row pointers need at least 2 (one node)", path,
			       (long long)count);
	}
	int64_t *p = malloc((size_t)count * sizeof *p);
	if (!p) {
		free(raw);
		return sp_fail(err, "%s: out of memory for %lld row pointers", path, (long long)count);
	}
	for (int64_t i = 0; i < count; i++)
		p[i] = raw[i];
	free(raw);
	*nrows = count - 1;
	/* monotone from 0: the last value is the edge count */
	if (csr_validate_indptr(p, *nrows, p[*nrows], path, err)) {
		free(p);
		return -1;
	}
	*indptr = p;
	return 0;
}

int csr_raw_load(const char *path, struct csr *g, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	if (csr_raw_load_indptr(path, &g->indptr, &g->nrows, err))
		return -1;
	size_t n = strlen(path) - strlen(CSR_RAW_SUFFIX);
	char *ipath = malloc(n + sizeof ".indices");
	if (!ipath) {
		csr_free(g);
		return sp_fail(err, "%s: out of memory", path);
	}
	snprintf(ipath, n + sizeof ".indices", "%.*s.indices", (int)n, path);
	int64_t count;
	int rc = read_i32(ipath, &g->indices, &count, err);
	g->ncols = g->nrows;
	g->nnz = g->nrows ? g->indptr[g->nrows] : 0;
	if (!rc && count != g->nnz)
		rc = sp_fail(err, "%s: %lld column indices, but %s ends at %lld", ipath,
			     (long long)count, path, (long long)g->nnz);
	if (!rc)
		rc = csr_validate(g, CSR_CHECK_BASIC, ipath, err);
	free(ipath);
	if (rc)
		csr_free(g);
	return rc;
}
