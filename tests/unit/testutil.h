/* Helpers the unit tests share: a scratch folder per test program, paths in
 * it, whole-file reads and writes, and assertions on CSR results and error
 * messages. Include after cmocka.h. Static inline: each test is its own
 * program and uses what it needs. Paths to data/ are relative to the
 * repository root, where `make test` runs the tests. */
#ifndef SPKIT_TESTUTIL_H
#define SPKIT_TESTUTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "sparse/csr.h"
#include "core/err.h"

static char test_dir[] __attribute__((unused)) = "/tmp/spkit-test-XXXXXX";

/* cmocka group setup and teardown: create and remove test_dir. */
static inline int test_dir_setup(void **state)
{
	return mkdtemp(test_dir) ? 0 : -1;
}

static inline int test_dir_teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", test_dir);
	return system(cmd);
}

/* test_dir/NAME, NAME printf-style; valid until 8 more calls. */
static inline const char *test_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline const char *test_path(const char *fmt, ...)
{
	static char path[8][512];
	static int next;
	char name[256], *p = path[next++ % 8];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	snprintf(p, sizeof path[0], "%s/%s", test_dir, name);
	return p;
}

static inline unsigned char *test_slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	*n = (size_t)ftell(fp);
	rewind(fp);
	unsigned char *buf = malloc(*n + 1);
	assert_int_equal(fread(buf, 1, *n, fp), *n);
	fclose(fp);
	return buf;
}

static inline void test_spit(const char *path, const void *buf, size_t n)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, n, fp), n);
	fclose(fp);
}

/* Is an unfinished output (outfile's NAME.tmp.XXXXXX) left in test_dir? */
static inline int test_dir_has_temporaries(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "ls %s | grep -q '\\.tmp\\.'", test_dir);
	return system(cmd) == 0;
}

/* The whole file, NUL-terminated; the caller frees it. NULL if absent. */
static inline char *test_read(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0, n;
	char *s = malloc(cap + 1);
	while (s && (n = fread(s + len, 1, cap - len, f)) > 0)
		if ((len += n) == cap)
			s = realloc(s, (cap *= 2) + 1);
	fclose(f);
	if (s)
		s[len] = '\0';
	return s;
}

static inline int test_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Entries in test_dir, to catch stray temporaries. */
static inline int test_dir_count(void)
{
	char cmd[sizeof test_dir + 32];
	snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", test_dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (!p || fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/* ||got - ref|| / ||ref|| (2-norms; the plain norm when ref is zero), and
 * infinity when got holds a NaN: how every kernel is compared with its
 * double-precision reference. */
static inline double test_rel_err(const double *ref, const float *got, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		if (got[i] != got[i])
			return INFINITY;
		num += (got[i] - ref[i]) * (got[i] - ref[i]);
		den += ref[i] * ref[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Write text to NAME in the scratch folder; returns the path (test_path's). */
static inline const char *test_write(const char *name, const char *text)
{
	const char *path = test_path("%s", name);
	test_spit(path, text, strlen(text));
	return path;
}

/* Write len bytes of text gzip-compressed (zlib's gzwrite) to NAME in the
 * scratch folder; returns the path (test_path's). */
static inline const char *test_write_gz(const char *name, const char *text, size_t len)
{
	const char *path = test_path("%s", name);
	gzFile f = gzopen(path, "wb1"); /* level 1: quick, and every level reads alike */
	assert_non_null(f);
	assert_int_equal(gzwrite(f, text, (unsigned)len), (int)len);
	assert_int_equal(gzclose(f), Z_OK);
	return path;
}

/* The CSR is exactly this; values NULL means a pattern (g->values NULL). */
static inline void assert_csr(const struct csr *g, int64_t nrows, int64_t ncols, int64_t nnz,
			      const int64_t *indptr, const int32_t *indices, const float *values)
{
	assert_int_equal(g->nrows, nrows);
	assert_int_equal(g->ncols, ncols);
	assert_int_equal(g->nnz, nnz);
	for (int64_t r = 0; r <= nrows; r++)
		assert_int_equal(g->indptr[r], indptr[r]);
	for (int64_t j = 0; j < nnz; j++)
		assert_int_equal(g->indices[j], indices[j]);
	if (!values) {
		assert_null(g->values);
		return;
	}
	assert_non_null(g->values);
	for (int64_t j = 0; j < nnz; j++)
		assert_true(g->values[j] == values[j]);
}

/* Two CSRs are the same, entry by entry. */
static inline void assert_csr_same(const struct csr *a, const struct csr *b)
{
	assert_csr(a, b->nrows, b->ncols, b->nnz, b->indptr, b->indices, b->values);
}

/* The message holds every one of the NULL-terminated fragments. */
static inline void assert_msg_has(const struct sp_err *e, const char *first, ...)
{
	va_list ap;
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *)) {
		if (!strstr(e->msg, s))
			fail_msg("message \"%s\" lacks \"%s\"", e->msg, s);
	}
	va_end(ap);
}

/* A file reader under test: mtx_read or edgelist_read behind one shape. */
typedef int (*test_reader)(const char *path, const void *opts, struct csr *g, struct sp_err *e);

/* Case case_no of a table of malformed files: text, written as
 * "badN.EXT", must fail, leave g empty, and give a message that starts with
 * the path and holds "badN.EXT" + where (":LINE:") and the problem. */
static inline void assert_malformed(test_reader read, const void *opts, const char *ext,
				    size_t case_no, const char *text, const char *where,
				    const char *problem)
{
	char name[32], name_where[64];
	snprintf(name, sizeof name, "bad%zu.%s", case_no, ext);
	const char *path = test_write(name, text);
	snprintf(name_where, sizeof name_where, "%s%s", name, where);
	struct csr g;
	struct sp_err e = {""};
	if (read(path, opts, &g, &e) != -1)
		fail_msg("case %zu read without error", case_no);
	assert_null(g.indptr);
	assert_int_equal(strncmp(e.msg, path, strlen(path)), 0);
	assert_msg_has(&e, name_where, problem, NULL);
}

#endif
