/* The matrix a user names, compressed: a dense .npy (any float dtype) gives
 * what macko_compress_dense gives for its fp16 rounding, pruned or not; a
 * Matrix Market file what the same dense matrix gives, a pattern one with
 * values 1; a random matrix what randmat gives; bad files one message
 * naming the file; the timings reported at level 2; and a MACKO .npz told
 * from other files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/half.h"
#include "formats/npy.h"
#include "macko/macko_input.h"
#include "macko/macko_npz.h"
#include "macko/randmat.h"

enum { ROWS = 6, COLS = 40 };

/* A ROWS x COLS matrix of distinct magnitudes, about half of them zero. */
static void fill(float *a)
{
	for (int i = 0; i < ROWS * COLS; i++)
		a[i] = (i * 7) % 3 ? 0 : (float)((i % 2 ? -1 : 1) * (1 + i / 8.0));
}

static void assert_same(const struct macko *a, const struct macko *b)
{
	assert_int_equal(a->rows, b->rows);
	assert_int_equal(a->cols, b->cols);
	assert_int_equal(a->elements, b->elements);
	assert_int_equal(a->padded, b->padded);
	assert_memory_equal(a->values, b->values, (size_t)a->padded * 2);
	assert_memory_equal(a->deltas, b->deltas, (size_t)a->padded / 2);
	assert_memory_equal(a->row_indices, b->row_indices, (size_t)(a->rows + 1) * 4);
}

/* The MACKO matrix of dense fp16 bits, pruned as in asks. */
static void expected(uint16_t *h, int64_t rows, int64_t cols, const struct macko_input *in,
		     struct macko *m)
{
	struct sp_err err;
	if (in->prune == MACKO_PRUNE_DENSITY)
		assert_int_equal(prune_to_density(h, rows * cols, in->keep, &err), 0);
	if (in->prune == MACKO_PRUNE_BELOW)
		prune_below(h, rows * cols, in->threshold);
	assert_int_equal(macko_compress_dense(h, rows, cols, m, "want", &err), 0);
}

static const char *save_f4(const char *name, const float *a, int ndim, int64_t d0, int64_t d1)
{
	struct npy_array arr = {NPY_F4, 4, ndim, {d0, d1}, (void *)a};
	struct sp_err err;
	const char *path = test_path("%s", name);
	assert_int_equal(npy_write(path, &arr, &err), 0);
	return path;
}

static void test_dense_npy(void **state)
{
	float a[ROWS * COLS];
	uint16_t h[ROWS * COLS];
	fill(a);
	const char *path = save_f4("a.npy", a, 2, ROWS, COLS);
	const struct macko_input asks[] = {
		{.path = path, .name = path},
		{.path = path, .name = path, .prune = MACKO_PRUNE_DENSITY, .keep = 0.1},
		{.path = path, .name = path, .prune = MACKO_PRUNE_BELOW, .threshold = 4.5},
	};
	for (int k = 0; k < 3; k++) {
		struct macko got, want;
		struct sp_err err;
		assert_int_equal(macko_input_compress(&asks[k], &got, NULL, &err), 0);
		for (int i = 0; i < ROWS * COLS; i++)
			h[i] = half_from_float(a[i]);
		expected(h, ROWS, COLS, &asks[k], &want);
		assert_same(&got, &want);
		macko_free(&got);
		macko_free(&want);
	}
}

/* The same matrix as a Matrix Market file gives the dense file's arrays,
 * pruned to the same density of all entries; a pattern matrix has 1s. */
static void test_sparse_mtx(void **state)
{
	float a[ROWS * COLS];
	uint16_t h[ROWS * COLS];
	fill(a);
	char text[8192], pattern[8192];
	int nnz = 0, n = 0, np = 0;
	for (int i = 0; i < ROWS * COLS; i++)
		nnz += a[i] != 0;
	n = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n",
		     ROWS, COLS, nnz);
	np = snprintf(pattern, sizeof pattern,
		      "%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", ROWS, COLS,
		      nnz);
	for (int i = 0; i < ROWS * COLS; i++)
		if (a[i] != 0) {
			n += snprintf(text + n, sizeof text - n, "%d %d %.17g\n", i / COLS + 1,
				      i % COLS + 1, a[i]);
			np += snprintf(pattern + np, sizeof pattern - np, "%d %d\n", i / COLS + 1,
				       i % COLS + 1);
		}
	const char *path = test_write("a.mtx", text), *ppath = test_write("p.mtx", pattern);
	struct sp_err err;
	struct macko got, want;
	for (int k = 0; k < 2; k++) {
		struct macko_input in = {.path = path, .name = path, .prune = k ? MACKO_PRUNE_DENSITY
										: MACKO_PRUNE_NONE,
					 .keep = 0.1};
		assert_int_equal(macko_input_compress(&in, &got, NULL, &err), 0);
		for (int i = 0; i < ROWS * COLS; i++)
			h[i] = half_from_float(a[i]);
		expected(h, ROWS, COLS, &in, &want);
		assert_same(&got, &want);
		macko_free(&got);
		macko_free(&want);
	}
	struct macko_input in = {.path = ppath, .name = ppath};
	assert_int_equal(macko_input_compress(&in, &got, NULL, &err), 0);
	for (int i = 0; i < ROWS * COLS; i++)
		h[i] = a[i] != 0 ? 0x3c00 : 0;
	expected(h, ROWS, COLS, &in, &want);
	assert_same(&got, &want);
	macko_free(&got);
	macko_free(&want);
}

static void test_random(void **state)
{
	enum { R = 50, C = 70 };
	static uint16_t h[R * C];
	randmat_fp16(h, R, C, 0.3, 9);
	struct macko_input in = {.name = "--random", .rows = R, .cols = C, .density = 0.3, .seed = 9};
	struct macko got, want;
	struct sp_err err;
	assert_int_equal(macko_input_compress(&in, &got, NULL, &err), 0);
	expected(h, R, C, &in, &want);
	assert_same(&got, &want);
	macko_free(&got);
	macko_free(&want);
}

static void test_bad_files(void **state)
{
	float a[ROWS * COLS] = {0};
	const char *d1 = save_f4("d1.npy", a, 1, ROWS, 0);
	int32_t ints[4] = {0};
	struct npy_array arr = {NPY_I4, 4, 2, {2, 2}, ints};
	struct sp_err err;
	const char *i4 = test_path("i4.npy");
	assert_int_equal(npy_write(i4, &arr, &err), 0);
	const struct {
		const char *path, *message;
	} cases[] = {
		{d1, "d1.npy: expected a 2-d matrix, found 1 dimensions"},
		{i4, "i4.npy: expected dtype f2, f4 or f8, found i4"},
		{test_path("missing.npy"), "missing.npy: cannot open: No such file or directory"},
		{test_write("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n"),
		 "bad.mtx:3"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		struct macko_input in = {.path = cases[k].path, .name = cases[k].path};
		struct macko m;
		assert_int_equal(macko_input_compress(&in, &m, NULL, &err), -1);
		assert_non_null(strstr(err.msg, cases[k].message));
		assert_ptr_equal(strstr(err.msg, test_dir), err.msg);
	}
}

struct heard {
	int count;
	char text[4][64];
	int level[4];
};

static void hear(void *ctx, int level, const char *text)
{
	struct heard *h = ctx;
	if (h->count < 4) {
		snprintf(h->text[h->count], sizeof h->text[0], "%s", text);
		h->level[h->count] = level;
	}
	h->count++;
}

static void test_reports_timings(void **state)
{
	struct heard h = {0};
	struct sp_report r = {NULL, hear, &h};
	struct macko_input in = {.name = "--random", .rows = 3, .cols = 3, .density = 0.5, .seed = 1};
	struct macko m;
	struct sp_err err;
	assert_int_equal(macko_input_compress(&in, &m, &r, &err), 0);
	macko_free(&m);
	assert_int_equal(h.count, 2);
	assert_int_equal(strncmp(h.text[0], "read and prune: ", 16), 0);
	assert_int_equal(strncmp(h.text[1], "compress: ", 10), 0);
	assert_int_equal(h.level[0], 2);
	assert_int_equal(h.level[1], 2);
}

static void test_is_macko(void **state)
{
	float a[ROWS * COLS];
	fill(a);
	const char *dense = save_f4("m.npy", a, 2, ROWS, COLS), *npz = test_path("m.npz");
	struct macko_input in = {.path = dense, .name = dense};
	struct macko m;
	struct sp_err err;
	assert_int_equal(macko_input_compress(&in, &m, NULL, &err), 0);
	assert_int_equal(macko_save(npz, &m, 0, &err), 0);
	macko_free(&m);
	assert_int_equal(macko_input_is_macko(npz), 1);
	assert_int_equal(macko_input_is_macko(dense), 0);
	assert_int_equal(macko_input_is_macko(test_path("missing.npz")), 0);
	/* a .npz that is no zip: not MACKO (compressing it will say why) */
	assert_int_equal(macko_input_is_macko(test_write("junk.npz", "junk")), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_npy),
		cmocka_unit_test(test_sparse_mtx),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_reports_timings),
		cmocka_unit_test(test_is_macko),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
