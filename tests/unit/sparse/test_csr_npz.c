/* SciPy-layout .npz sparse matrices: save/load round trips, the members
 * save_npz writes, COO input, indptr-only loading, and every inconsistency
 * a file can have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sparse/csr_npz.h"
#include "formats/npz.h"
#include "testutil.h"

/* A 4 x 5 matrix:
 *   row 0: (0, 1.5) (3, -2)
 *   row 1: empty
 *   row 2: (4, 7)
 *   row 3: (0, 0.25) (1, 1) (2, 3) */
static int64_t indptr[] = {0, 2, 2, 3, 6};
static int32_t indices[] = {0, 3, 4, 0, 1, 2};
static float values[] = {1.5f, -2, 7, 0.25f, 1, 3};
static const struct csr sample = {4, 5, 6, indptr, indices, values};

static void expect_equal(const struct csr *a, const struct csr *b)
{
	assert_int_equal(a->nrows, b->nrows);
	assert_int_equal(a->ncols, b->ncols);
	assert_int_equal(a->nnz, b->nnz);
	assert_memory_equal(a->indptr, b->indptr, (a->nrows + 1) * sizeof *a->indptr);
	assert_memory_equal(a->indices, b->indices, a->nnz * sizeof *a->indices);
	if (b->values)
		assert_memory_equal(a->values, b->values, a->nnz * sizeof *a->values);
	else
		for (int64_t i = 0; i < a->nnz; i++)
			assert_true(a->values[i] == 1.0f);
}

static void test_round_trip(void **state)
{
	struct csr pattern = sample;
	pattern.values = NULL;
	const struct csr *graphs[] = {&sample, &pattern};
	for (int compress = 0; compress <= 1; compress++) {
		for (int i = 0; i < 2; i++) {
			struct csr g;
			struct sp_err e;
			const char *path = test_path("g.npz");
			if (csr_npz_save(path, graphs[i], compress, &e) ||
			    csr_npz_load(path, &g, &e))
				fail_msg("%s", e.msg);
			expect_equal(&g, graphs[i]);
			csr_free(&g);
			int64_t *ip, nrows, ncols, nnz;
			assert_int_equal(csr_npz_load_indptr(path, &ip, &nrows, &ncols, &nnz, &e),
					 0);
			assert_int_equal(nrows, 4);
			assert_int_equal(ncols, 5);
			assert_int_equal(nnz, 6);
			assert_memory_equal(ip, indptr, sizeof indptr);
			free(ip);
		}
	}
}

static void test_members_as_save_npz(void **state)
{
	struct sp_err e;
	struct npz z;
	const char *path = test_path("members.npz");
	assert_int_equal(csr_npz_save(path, &sample, 1, &e), 0);
	assert_int_equal(npz_open(&z, path, &e), 0);
	static const struct {
		const char *name;
		enum npy_dtype dtype;
		int ndim;
		int64_t len;
	} want[] = {{"indices", NPY_I4, 1, 6},
		    {"indptr", NPY_I4, 1, 5},
		    {"format", NPY_BYTES, 0, 1},
		    {"shape", NPY_I8, 1, 2},
		    {"data", NPY_F4, 1, 6}};
	assert_int_equal(z.zip.count, 5);
	for (int i = 0; i < 5; i++) {
		char zipname[32];
		snprintf(zipname, sizeof zipname, "%s.npy", want[i].name);
		assert_string_equal(z.zip.entries[i].name, zipname);
		assert_int_equal(z.zip.entries[i].method, ZIP_DEFLATED);
		struct npy_array a;
		assert_int_equal(npz_read(&z, want[i].name, &a, &e), 0);
		assert_int_equal(a.dtype, want[i].dtype);
		assert_int_equal(a.ndim, want[i].ndim);
		assert_int_equal(npy_count(&a), want[i].len);
		if (a.dtype == NPY_BYTES)
			assert_memory_equal(a.data, "csr", 3);
		npy_free(&a);
	}
	npz_close(&z);
}

/* Build an archive member by member. */
struct member {
	const char *name;
	struct npy_array a;
};

#define VEC(dt, n, ...) {dt, 0, 1, {n}, (void *)(__VA_ARGS__)}

static const char *write_members(const struct member *m, int n)
{
	struct npz_writer w;
	struct sp_err e;
	const char *path = test_path("m.npz");
	assert_int_equal(npz_writer_open(&w, path, 0, &e), 0);
	for (int i = 0; i < n; i++) {
		struct npy_array a = m[i].a;
		if (!a.itemsize)
			a.itemsize = npy_dtype_size(a.dtype);
		if (npz_writer_add(&w, m[i].name, &a, &e))
			fail_msg("%s", e.msg);
	}
	assert_int_equal(npz_writer_commit(&w, &e), 0);
	return path;
}

static const struct npy_array csr_format = {NPY_BYTES, 3, 0, {0}, "csr"};
static const struct npy_array coo_format = {NPY_BYTES, 3, 0, {0}, "coo"};
static const struct npy_array shape45 = VEC(NPY_I8, 2, (int64_t[]){4, 5});

static void test_coo_input(void **state)
{
	/* Any integer and numeric dtypes; entries out of row order. */
	const struct member m[] = {
		{"row", VEC(NPY_I4, 6, (int32_t[]){3, 0, 3, 2, 0, 3})},
		{"col", VEC(NPY_U1, 6, (uint8_t[]){0, 0, 1, 4, 3, 2})},
		{"format", coo_format},
		{"shape", VEC(NPY_I4, 2, (int32_t[]){4, 5})},
		{"data", VEC(NPY_F8, 6, (double[]){0.25, 1.5, 1, 7, -2, 3})},
	};
	const char *path = write_members(m, 5);
	struct csr g;
	struct sp_err e;
	if (csr_npz_load(path, &g, &e))
		fail_msg("%s", e.msg);
	expect_equal(&g, &sample);
	csr_free(&g);
	int64_t *ip, nrows, ncols, nnz;
	assert_int_equal(csr_npz_load_indptr(path, &ip, &nrows, &ncols, &nnz, &e), 0);
	assert_memory_equal(ip, indptr, sizeof indptr);
	assert_int_equal(nnz, 6);
	free(ip);
}

/* Flip a byte of a stored member's data, past its 128-byte .npy header. */
static void damage_data(const char *path, const char *zipname)
{
	FILE *fp = fopen(path, "r+b");
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, fp), len = strlen(zipname), i = 0;
	while (i + len < n && memcmp(buf + i, zipname, len) != 0)
		i++; /* the first mention is the local header */
	assert_true(i + len < n);
	fseek(fp, (long)(i + len + 20 + 128), SEEK_SET);
	fputc(buf[i + len + 20 + 128] ^ 0x55, fp);
	fclose(fp);
}

static void test_indptr_only_reads_indptr(void **state)
{
	/* indices and data have valid headers but damaged bytes: the full load
	 * fails on them, the indptr load never reads them. */
	const struct member m[] = {
		{"indices", VEC(NPY_I4, 6, indices)},
		{"indptr", VEC(NPY_I8, 5, indptr)},
		{"format", csr_format},
		{"shape", shape45},
		{"data", VEC(NPY_F4, 6, values)},
	};
	const char *path = write_members(m, 5);
	damage_data(path, "indices.npy");
	damage_data(path, "data.npy");
	struct csr g;
	struct sp_err e;
	assert_int_equal(csr_npz_load(path, &g, &e), -1);
	assert_non_null(strstr(e.msg, "member 'indices': CRC-32 mismatch"));
	int64_t *ip, nrows, ncols, nnz;
	if (csr_npz_load_indptr(path, &ip, &nrows, &ncols, &nnz, &e))
		fail_msg("%s", e.msg);
	assert_memory_equal(ip, indptr, sizeof indptr);
	free(ip);
}

static void expect_loads(const struct member *m, int n)
{
	const char *path = write_members(m, n);
	struct csr g;
	struct sp_err e;
	if (csr_npz_load(path, &g, &e))
		fail_msg("%s", e.msg);
	csr_free(&g);
}

/* Loading fails with a message naming the file and containing `what`; so
 * does the indptr-only load, when `indptr_too`. */
static void expect_load_error(const struct member *m, int n, const char *what, int indptr_too)
{
	const char *path = write_members(m, n);
	struct csr g;
	struct sp_err e;
	if (csr_npz_load(path, &g, &e) == 0)
		fail_msg("loaded a file that should fail with '%s'", what);
	if (!strstr(e.msg, path) || !strstr(e.msg, what))
		fail_msg("message '%s' lacks '%s'", e.msg, what);
	int64_t *ip = (int64_t *)&g, nrows, ncols, nnz; /* not NULL: failure must reset it */
	int rc = csr_npz_load_indptr(path, &ip, &nrows, &ncols, &nnz, &e);
	if (indptr_too && (rc == 0 || !strstr(e.msg, what)))
		fail_msg("indptr load: '%s', wanted '%s'", rc ? e.msg : "success", what);
	if (!indptr_too && rc)
		fail_msg("indptr load failed: %s", e.msg);
	if (rc)
		assert_null(ip);
	free(ip);
}

static void test_bad_csr_files(void **state)
{
	struct member m[] = {
		{"indices", VEC(NPY_I4, 6, indices)},
		{"indptr", VEC(NPY_I8, 5, indptr)},
		{"format", csr_format},
		{"shape", shape45},
		{"data", VEC(NPY_F4, 6, values)},
	};
	struct member ok[5];
	memcpy(ok, m, sizeof m);
	expect_load_error(m, 2, "member 'format' is missing", 1);
	m[2].a = (struct npy_array){NPY_BYTES, 3, 0, {0}, "csc"};
	expect_load_error(m, 5, "format is 'csc'; only csr and coo are supported", 1);
	m[2].a = (struct npy_array){NPY_BYTES, 6, 0, {0}, "csr\0\0\0"};
	expect_loads(m, 5); /* NumPy pads shorter strings with NULs */
	m[2].a = (struct npy_array)VEC(NPY_I8, 1, (int64_t[]){3});
	expect_load_error(m, 5, "format is not a short byte string", 1);
	memcpy(m, ok, sizeof m);

	m[3].a = (struct npy_array)VEC(NPY_I8, 3, (int64_t[]){4, 5, 6});
	expect_load_error(m, 5, "shape has 3 elements but a matrix has 2 dimensions", 1);
	m[3].a = (struct npy_array)VEC(NPY_I8, 2, (int64_t[]){4, -5});
	expect_load_error(m, 5, "shape (4, -5) is out of range", 1);
	m[3].a = (struct npy_array)VEC(NPY_F8, 2, (double[]){4, 5});
	expect_load_error(m, 5, "shape has dtype f8, expected integers", 1);
	m[3].a = (struct npy_array)VEC(NPY_I8, 2, (int64_t[]){3, 5});
	expect_load_error(m, 5, "indptr has 5 elements but shape has 3 rows", 1);
	m[3].a = (struct npy_array)VEC(NPY_I8, 2, (int64_t[]){4, 4});
	expect_load_error(m, 5, "row 2 has column 4 outside [0, 4)", 0);
	memcpy(m, ok, sizeof m);

	m[1].a = (struct npy_array)VEC(NPY_I8, 5, (int64_t[]){0, 2, 1, 3, 6});
	expect_load_error(m, 5, "indptr decreases at row 1 (1 after 2)", 1);
	m[1].a = (struct npy_array)VEC(NPY_I4, 5, (int32_t[]){-1, 2, 2, 3, 6});
	expect_load_error(m, 5, "indptr[0] is -1, expected 0", 1);
	m[1].a = (struct npy_array)VEC(NPY_I8, 5, (int64_t[]){0, 2, 2, 3, 8});
	expect_load_error(m, 5, "indices has 6 elements but indptr ends at 8", 1);
	m[1].a = (struct npy_array)VEC(NPY_F4, 5, (float[]){0, 2, 2, 3, 6});
	expect_load_error(m, 5, "indptr has dtype f4, expected integers", 1);
	m[1].a = (struct npy_array){NPY_I8, 8, 2, {5, 1}, indptr};
	expect_load_error(m, 5, "indptr has 2 dimensions, expected 1", 1);
	memcpy(m, ok, sizeof m);

	m[0].a = (struct npy_array)VEC(NPY_I8, 6, (int64_t[]){0, 3, 4, 0, 1, 4294967296LL});
	expect_load_error(m, 5, "member 'indices': element 5 (4294967296) does not fit in i4", 0);
	m[0].a = (struct npy_array)VEC(NPY_I4, 6, (int32_t[]){0, 3, -4, 0, 1, 2});
	expect_load_error(m, 5, "row 2 has column -4 outside [0, 5)", 0);
	m[0].a = (struct npy_array)VEC(NPY_I4, 5, indices);
	expect_load_error(m, 5, "indices has 5 elements but indptr ends at 6", 1);
	memcpy(m, ok, sizeof m);

	m[4].a = (struct npy_array)VEC(NPY_F4, 6, (float[]){1, 2, NAN, 4, 5, 6});
	expect_load_error(m, 5, "entry 2 is not finite", 0);
	m[4].a = (struct npy_array)VEC(NPY_F8, 6, (double[]){1, 2, 1e300, 4, 5, 6});
	expect_load_error(m, 5, "member 'data': element 2 (1.0000000000000001e+300) overflows f4",
			  0);
	m[4].a = (struct npy_array)VEC(NPY_F4, 7, (float[]){1, 2, 3, 4, 5, 6, 7});
	expect_load_error(m, 5, "data has 7 elements but indptr ends at 6", 1);
	m[4].a = (struct npy_array){NPY_BYTES, 1, 1, {6}, "abcdef"};
	expect_load_error(m, 5, "data has dtype S, expected numbers", 1);
	m[4].a = (struct npy_array)VEC(NPY_BOOL, 6, (uint8_t[]){1, 1, 0, 1, 1, 1});
	expect_loads(m, 5); /* bool data counts as numbers */
}

static void test_bad_coo_files(void **state)
{
	struct member m[] = {
		{"row", VEC(NPY_I8, 3, (int64_t[]){0, 9, 1})},
		{"col", VEC(NPY_I8, 3, (int64_t[]){0, 0, 4})},
		{"format", coo_format},
		{"shape", shape45},
		{"data", VEC(NPY_F4, 3, (float[]){1, 2, 3})},
	};
	const char *path = write_members(m, 5);
	struct csr g;
	struct sp_err e;
	int64_t *ip, nrows, ncols, nnz;
	assert_int_equal(csr_npz_load(path, &g, &e), -1);
	assert_non_null(strstr(e.msg, "m.npz: entry 1 at (9, 0) is outside the 4 x 5 shape"));
	assert_int_equal(csr_npz_load_indptr(path, &ip, &nrows, &ncols, &nnz, &e), -1);
	assert_non_null(strstr(e.msg, "m.npz: row of entry 1 is 9, outside [0, 4)"));
	m[0].a = (struct npy_array)VEC(NPY_I8, 3, (int64_t[]){0, 3, 1});
	m[1].a = (struct npy_array)VEC(NPY_I8, 3, (int64_t[]){0, 0, 5});
	expect_load_error(m, 5, "entry 2 at (1, 5) is outside the 4 x 5 shape", 0);
	m[1].a = (struct npy_array)VEC(NPY_I8, 2, (int64_t[]){0, 0});
	expect_load_error(m, 5, "col has 2 elements but row has 3", 1);
	m[1].a = (struct npy_array)VEC(NPY_I8, 3, (int64_t[]){0, 0, 4});
	m[4].a = (struct npy_array)VEC(NPY_F4, 4, (float[]){1, 2, 3, 4});
	expect_load_error(m, 5, "data has 4 elements but row has 3", 1);
	expect_load_error(m + 1, 4, "member 'row' is missing", 1);
}

static void test_paths(void **state)
{
	struct csr g;
	struct sp_err e;
	int64_t *ip, nrows, ncols, nnz;
	assert_int_equal(csr_npz_load(test_dir, &g, &e), -1);
	assert_non_null(strstr(e.msg, "is a directory"));
	assert_int_equal(csr_npz_load_indptr(test_dir, &ip, &nrows, &ncols, &nnz, &e), -1);
	assert_non_null(strstr(e.msg, "is a directory"));
	const char *path = test_path("none.npz");
	assert_int_equal(csr_npz_load(path, &g, &e), -1);
	assert_non_null(strstr(e.msg, path));

	path = test_path("no/such/dir/g.npz");
	assert_int_equal(csr_npz_save(path, &sample, 0, &e), -1);
	assert_non_null(strstr(e.msg, path));
	assert_int_equal(access(path, F_OK), -1);

	/* An invalid graph is refused before anything is written. */
	struct csr bad = sample;
	int32_t bad_indices[] = {0, 3, 5, 0, 1, 2};
	bad.indices = bad_indices;
	path = test_path("bad.npz");
	assert_int_equal(csr_npz_save(path, &bad, 1, &e), -1);
	assert_non_null(strstr(e.msg, "bad.npz: row 2 has column 5 outside [0, 5)"));
	assert_int_equal(access(path, F_OK), -1);
	assert_false(test_dir_has_temporaries());
}

static void test_empty_matrix(void **state)
{
	int64_t ip0[1] = {0};
	struct csr empty = {0, 0, 0, ip0, indices, NULL};
	struct csr g;
	struct sp_err e;
	const char *path = test_path("empty.npz");
	if (csr_npz_save(path, &empty, 1, &e) || csr_npz_load(path, &g, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(g.nrows, 0);
	assert_int_equal(g.nnz, 0);
	assert_int_equal(g.indptr[0], 0);
	csr_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_members_as_save_npz),
		cmocka_unit_test(test_coo_input),
		cmocka_unit_test(test_indptr_only_reads_indptr),
		cmocka_unit_test(test_bad_csr_files),
		cmocka_unit_test(test_bad_coo_files),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_empty_matrix),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
