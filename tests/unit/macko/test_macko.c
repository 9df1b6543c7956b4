/* MACKO: hand-worked arrays that pin the format byte for byte, then random
 * matrices (fixed seeds) against a naive encoder that follows the format's
 * definition literally (walk the row, count zeros, store every nonzero and
 * every 16th zero, trim the row's trailing stored zeros), which the hand
 * examples pin in turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "macko/macko.h"
#include "core/rng.h"

/* --- helpers -------------------------------------------------------------- */

static uint16_t random_nonzero_half(struct rng *r)
{
	for (;;) {
		uint16_t h = (uint16_t)rng_u64(r);
		if ((h & HALF_INF) != HALF_INF && !half_is_zero(h))
			return h; /* finite, subnormals included, either sign */
	}
}

/* rows x cols, each entry nonzero with probability `density`; some of the
 * zeros are -0, which compression treats as zero. */
static uint16_t *random_dense(int64_t rows, int64_t cols, double density, uint64_t seed)
{
	struct rng r;
	rng_init(&r, seed, 0);
	uint16_t *a = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *a);
	assert_non_null(a);
	for (int64_t i = 0; i < rows * cols; i++) {
		if (rng_uniform(&r) < density)
			a[i] = random_nonzero_half(&r);
		else
			a[i] = rng_below(&r, 8) == 0 ? 0x8000 : 0;
	}
	return a;
}

/* The format's definition, literally, one row at a time. */
static void ref_compress(const uint16_t *dense, int64_t rows, int64_t cols, struct macko *m)
{
	int64_t cap = rows * cols + 1;
	uint16_t *val = malloc((size_t)cap * sizeof *val);
	uint8_t *del = malloc((size_t)cap);
	int32_t *ri = malloc((size_t)(rows + 1) * sizeof *ri);
	assert_true(val && del && ri);
	int64_t k = 0;
	ri[0] = 0;
	for (int64_t r = 0; r < rows; r++) {
		int zeros = 0;
		for (int64_t c = 0; c < cols; c++) {
			uint16_t h = dense[r * cols + c];
			if (half_is_zero(h) && ++zeros < 16)
				continue;
			val[k] = half_is_zero(h) ? 0 : h;
			del[k++] = (uint8_t)(half_is_zero(h) ? 15 : zeros);
			zeros = 0;
		}
		while (k > ri[r] && val[k - 1] == 0) /* trim stored zeros at the row's end */
			k--;
		ri[r + 1] = (int32_t)k;
	}
	struct sp_err e;
	assert_int_equal(macko_alloc(m, rows, cols, k, "ref", &e), 0);
	memcpy(m->values, val, (size_t)k * sizeof *val);
	for (int64_t i = 0; i < k; i++)
		m->deltas[i / 2] |= (uint8_t)(del[i] << (i % 2 * 4));
	memcpy(m->row_indices, ri, (size_t)(rows + 1) * sizeof *ri);
	free(val);
	free(del);
	free(ri);
}

static void assert_macko_equal(const struct macko *a, const struct macko *b)
{
	assert_int_equal(a->rows, b->rows);
	assert_int_equal(a->cols, b->cols);
	assert_int_equal(a->elements, b->elements);
	assert_int_equal(a->padded, b->padded);
	assert_memory_equal(a->row_indices, b->row_indices, (size_t)(a->rows + 1) * 4);
	if (a->padded) {
		assert_memory_equal(a->values, b->values, (size_t)a->padded * 2);
		assert_memory_equal(a->deltas, b->deltas, (size_t)a->padded / 2);
	}
}

/* -0 comes back as +0; everything else exactly. */
static void assert_round_trip(const uint16_t *dense, const struct macko *m)
{
	int64_t n = m->rows * m->cols;
	uint16_t *back = malloc((size_t)(n ? n : 1) * sizeof *back);
	assert_non_null(back);
	memset(back, 0xa5, (size_t)n * sizeof *back); /* decompress must write every entry */
	macko_decompress(m, back);
	for (int64_t i = 0; i < n; i++) {
		uint16_t want = half_is_zero(dense[i]) ? 0 : dense[i];
		if (back[i] != want)
			fail_msg("entry %lld (row %lld): got 0x%04x, want 0x%04x", (long long)i,
				 (long long)(i / m->cols), back[i], want);
	}
	free(back);
}

static void compress_ok(const uint16_t *dense, int64_t rows, int64_t cols, struct macko *m)
{
	struct sp_err e = {{0}};
	if (macko_compress_dense(dense, rows, cols, m, "m.npz", &e))
		fail_msg("%s", e.msg);
	if (macko_validate(m, "m.npz", &e))
		fail_msg("%s", e.msg);
}

/* --- the format by hand --------------------------------------------------- */

enum { HAND_ROWS = 7, HAND_COLS = 128 };

/* Row 0: 1.0 at column 0, then 127 zeros (trimmed).
 * Row 1: empty.
 * Row 2: starts at element 1, mid-byte. 15 zeros, 2; 16 zeros, 3; 17 zeros, 4.
 * Row 3: 31 zeros, 5; 32 zeros, 6; then 63 zeros.
 * Row 4: 40 zeros, 7, -8, then zeros.
 * Row 5: -0, NaN, 125 zeros, -inf in the last column.
 * Row 6: 5 zeros, the smallest subnormal; the arrays' padding follows. */
static void hand_matrix(uint16_t *a)
{
	memset(a, 0, HAND_ROWS * HAND_COLS * sizeof *a);
	uint16_t(*m)[HAND_COLS] = (uint16_t(*)[HAND_COLS])a;
	m[0][0] = 0x3c00;
	m[2][15] = 0x4000;
	m[2][32] = 0x4200;
	m[2][50] = 0x4400;
	m[3][31] = 0x4500;
	m[3][64] = 0x4600;
	m[4][40] = 0x4700;
	m[4][41] = 0xc800;
	m[5][0] = 0x8000;
	m[5][1] = 0x7e00;
	m[5][127] = 0xfc00;
	m[6][5] = 0x0001;
}

static void test_hand_example_bytes(void **state)
{
	static const uint16_t values[32] = {
		0x3c00,                                 /* row 0 */
		0x4000, 0,      0x4200, 0,      0x4400, /* row 2 */
		0,      0x4500, 0,      0,      0x4600, /* row 3 */
		0,      0,      0x4700, 0xc800,         /* row 4 */
		0x7e00, 0,      0,      0,      0,      0, 0, 0, 0xfc00, /* row 5 */
		0x0001,                                 /* row 6, then padding */
	};
	/* deltas by element: 0 | 15 15 0 15 1 | 15 15 15 15 0 | 15 15 8 0 |
	 * 1 15x7 13 | 5, two per byte, low nibble first */
	static const uint8_t deltas[16] = {0xf0, 0x0f, 0x1f, 0xff, 0xff, 0xf0, 0x8f, 0x10,
					   0xff, 0xff, 0xff, 0xdf, 0x05, 0,    0,    0};
	static const int32_t row_indices[HAND_ROWS + 1] = {0, 1, 1, 6, 11, 15, 24, 25};
	uint16_t a[HAND_ROWS * HAND_COLS];
	hand_matrix(a);
	struct macko m;
	compress_ok(a, HAND_ROWS, HAND_COLS, &m);
	assert_int_equal(m.elements, 25);
	assert_int_equal(m.padded, 32);
	assert_memory_equal(m.values, values, sizeof values);
	assert_memory_equal(m.deltas, deltas, sizeof deltas);
	assert_memory_equal(m.row_indices, row_indices, sizeof row_indices);
	assert_round_trip(a, &m);

	struct macko ref;
	ref_compress(a, HAND_ROWS, HAND_COLS, &ref);
	assert_macko_equal(&m, &ref);
	macko_free(&ref);
	macko_free(&m);
}

static void test_hand_example_stats(void **state)
{
	uint16_t a[HAND_ROWS * HAND_COLS];
	hand_matrix(a);
	struct macko m;
	compress_ok(a, HAND_ROWS, HAND_COLS, &m);
	struct macko_stats s;
	macko_stats(&m, &s);
	assert_int_equal(s.rows, 7);
	assert_int_equal(s.cols, 128);
	assert_int_equal(s.nonzeros, 11); /* NaN and -inf count; -0 does not */
	assert_int_equal(s.stored, 25);
	assert_int_equal(s.padding_zeros, 14);
	assert_true(s.density == 11.0 / 896);
	assert_true(s.effective_density == 25.0 / 896);
	assert_int_equal(s.bytes_macko, 32 * 2 + 16 + 8 * 4);
	assert_int_equal(s.bytes_dense_fp16, 7 * 128 * 2);
	assert_int_equal(s.bytes_csr32, 11 * 6 + 8 * 4);
	assert_int_equal(s.bytes_csr16, 11 * 4 + 8 * 4);
	macko_free(&m);
}

static void test_tiny_and_empty(void **state)
{
	struct macko m;
	uint16_t one = 0xbc00; /* 1x1: -1.0 */
	compress_ok(&one, 1, 1, &m);
	assert_int_equal(m.elements, 1);
	assert_int_equal(m.padded, 8);
	assert_int_equal(m.values[0], 0xbc00);
	for (int i = 1; i < 8; i++)
		assert_int_equal(m.values[i], 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(m.deltas[i], 0);
	assert_int_equal(m.row_indices[0], 0);
	assert_int_equal(m.row_indices[1], 1);
	assert_round_trip(&one, &m);
	macko_free(&m);

	uint16_t zero = 0x8000; /* 1x1 zero: nothing stored */
	compress_ok(&zero, 1, 1, &m);
	assert_int_equal(m.elements, 0);
	assert_int_equal(m.padded, 0);
	assert_round_trip(&zero, &m);
	macko_free(&m);

	uint16_t *z = calloc(5 * 300, sizeof *z); /* all zero */
	compress_ok(z, 5, 300, &m);
	assert_int_equal(m.elements, 0);
	assert_int_equal(m.padded, 0);
	for (int r = 0; r <= 5; r++)
		assert_int_equal(m.row_indices[r], 0);
	struct macko_stats s;
	macko_stats(&m, &s);
	assert_int_equal(s.nonzeros, 0);
	assert_true(s.density == 0);
	assert_int_equal(s.bytes_macko, 6 * 4);
	assert_round_trip(z, &m);
	macko_free(&m);
	free(z);

	compress_ok(NULL, 0, 7, &m); /* no rows */
	assert_int_equal(m.elements, 0);
	assert_int_equal(m.row_indices[0], 0);
	macko_free(&m);
	compress_ok(NULL, 3, 0, &m); /* no columns */
	assert_int_equal(m.row_indices[3], 0);
	macko_free(&m);
}

/* --- random matrices ------------------------------------------------------- */

static const double densities[] = {1.0, 0.9, 0.5, 0.1, 0.01, 0.0};

/* 37 x 1001: one parallel block; 40 x 20000: rows over 10,000 long, four
 * blocks; 1100 x 251: two blocks of many short rows. */
static const int64_t shapes[][2] = {{37, 1001}, {40, 20000}, {1100, 251}};

static void test_round_trip_random(void **state)
{
	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
		for (size_t d = 0; d < sizeof densities / sizeof *densities; d++) {
			int64_t rows = shapes[s][0], cols = shapes[s][1];
			uint16_t *a = random_dense(rows, cols, densities[d], 100 + s * 10 + d);
			struct macko m, ref;
			compress_ok(a, rows, cols, &m);
			ref_compress(a, rows, cols, &ref);
			assert_macko_equal(&m, &ref);
			assert_round_trip(a, &m);
			assert_int_equal(m.padded % MACKO_PAD, 0);
			if (densities[d] == 0)
				assert_int_equal(m.elements, 0);
			macko_free(&m);
			macko_free(&ref);
			free(a);
		}
	}
}

/* Rows of 65536 columns make blocks of 4 rows. Every row stores 5 elements
 * (a nonzero; 48 zeros, three of them stored; a nonzero) and row 0 one more,
 * so every block after the first starts at an odd element, in the middle of
 * a delta byte that the thread of the block before writes too. */
static void test_block_boundaries_mid_byte(void **state)
{
	int64_t rows = 11, cols = 65536;
	uint16_t *a = calloc((size_t)(rows * cols), sizeof *a);
	assert_non_null(a);
	a[0] = 0x3c00;
	for (int64_t r = 0; r < rows; r++) {
		a[r * cols + 5 + r] = (uint16_t)(0x4000 + r);
		a[r * cols + 5 + r + 49] = (uint16_t)(0xc000 + r);
	}
	const char *threads[] = {"1", "3"};
	for (int t = 0; t < 2; t++) {
		setenv("SPKIT_THREADS", threads[t], 1);
		struct macko m, ref;
		compress_ok(a, rows, cols, &m);
		ref_compress(a, rows, cols, &ref);
		assert_int_equal(m.row_indices[4], 21);
		assert_int_equal(m.row_indices[8], 41);
		assert_macko_equal(&m, &ref);
		assert_round_trip(a, &m);
		macko_free(&m);
		macko_free(&ref);
	}
	unsetenv("SPKIT_THREADS");
	free(a);
}

/* The eight-at-a-time path stores eight values per group, some of them
 * scratch for the next group to overwrite, so it must leave 64 elements of
 * room. Here the second row's chunk has 63 (it starts at element 1 and the
 * arrays end, unpadded, at 64), and its last group keeps 7 of 8: stored
 * eight at a time it would write element 64, past the arrays (the
 * sanitizer build sees that). */
static void test_chunk_at_array_end(void **state)
{
	uint16_t a[2 * 64] = {0};
	a[0] = 0x3c00;
	for (int c = 0; c < 63; c++)
		a[64 + c] = (uint16_t)(0x4000 + c);
	struct macko m, ref;
	compress_ok(a, 2, 64, &m);
	assert_int_equal(m.elements, 64);
	assert_int_equal(m.padded, 64);
	ref_compress(a, 2, 64, &ref);
	assert_macko_equal(&m, &ref);
	assert_round_trip(a, &m);
	macko_free(&m);
	macko_free(&ref);
}

static void test_thread_count_invariance(void **state)
{
	int64_t rows = 3000, cols = 333; /* four blocks */
	uint16_t *a = random_dense(rows, cols, 0.3, 7);
	struct macko one, three;
	setenv("SPKIT_THREADS", "1", 1);
	compress_ok(a, rows, cols, &one);
	setenv("SPKIT_THREADS", "3", 1);
	compress_ok(a, rows, cols, &three);
	unsetenv("SPKIT_THREADS");
	assert_macko_equal(&one, &three);
	macko_free(&one);
	macko_free(&three);
	free(a);
}

/* --- CSR input ------------------------------------------------------------- */

static void dense_to_csr(const uint16_t *a, int64_t rows, int64_t cols, struct csr *g)
{
	int64_t nnz = 0;
	for (int64_t i = 0; i < rows * cols; i++)
		nnz += !half_is_zero(a[i]);
	struct sp_err e;
	assert_int_equal(csr_alloc(g, rows, cols, nnz, 1, "g", &e), 0);
	int64_t j = 0;
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t c = 0; c < cols; c++) {
			if (half_is_zero(a[r * cols + c]))
				continue;
			g->indices[j] = (int32_t)c;
			g->values[j++] = half_to_float(a[r * cols + c]);
		}
		g->indptr[r + 1] = j;
	}
}

static void test_csr_matches_dense(void **state)
{
	for (size_t d = 0; d < sizeof densities / sizeof *densities; d++) {
		int64_t rows = 37, cols = 1001;
		uint16_t *a = random_dense(rows, cols, densities[d], 200 + d);
		struct csr g;
		dense_to_csr(a, rows, cols, &g);
		struct macko from_dense, from_csr;
		struct sp_err e;
		compress_ok(a, rows, cols, &from_dense);
		assert_int_equal(macko_compress_csr(&g, &from_csr, "g.npz", &e), 0);
		assert_macko_equal(&from_dense, &from_csr);
		macko_free(&from_dense);
		macko_free(&from_csr);
		csr_free(&g);
		free(a);
	}
}

/* Float values are rounded to fp16; those that round to zero, and stored
 * zeros, are dropped, so their columns count as gap. An Inf stays one
 * (test_csr_rejects: a finite value that overflows is refused). */
static void test_csr_rounding(void **state)
{
	int64_t indptr[] = {0, 5};
	int32_t indices[] = {0, 1, 2, 20, 40};
	float values[] = {1.0001f, 1e-10f, 0.0f, -65519.0f, INFINITY};
	struct csr g = {1, 41, 5, indptr, indices, values};
	struct macko m;
	struct sp_err e;
	assert_int_equal(macko_compress_csr(&g, &m, "g.npz", &e), 0);
	/* 1.0 at 0; 19 zeros: one stored, then -65504 (delta 3) at 20; 19 more: inf at 40 */
	assert_int_equal(m.elements, 5);
	uint16_t want_values[8] = {0x3c00, 0, 0xfbff, 0, 0x7c00};
	uint8_t want_deltas[4] = {0xf0, 0xf3, 0x03, 0};
	assert_memory_equal(m.values, want_values, sizeof want_values);
	assert_memory_equal(m.deltas, want_deltas, sizeof want_deltas);
	assert_int_equal(macko_validate(&m, "g.npz", &e), 0);
	macko_free(&m);
}

static void test_csr_rejects(void **state)
{
	struct macko m;
	struct sp_err e;
	int64_t indptr[] = {0, 0, 2};
	int32_t unsorted[] = {5, 3};
	float values[] = {1, 2};
	struct csr g = {2, 10, 2, indptr, unsorted, values};
	assert_int_equal(macko_compress_csr(&g, &m, "g.npz", &e), -1);
	assert_string_equal(e.msg, "g.npz: row 1 is not sorted (column 3 after 5)");
	int32_t repeated[] = {3, 3};
	g.indices = repeated;
	assert_int_equal(macko_compress_csr(&g, &m, "g.npz", &e), -1);
	assert_string_equal(e.msg, "g.npz: row 1 repeats column 3");
	int32_t sorted[] = {3, 4};
	g.indices = sorted;
	g.values = NULL;
	assert_int_equal(macko_compress_csr(&g, &m, "g.npz", &e), -1);
	assert_non_null(strstr(e.msg, "g.npz: a pattern matrix"));
	float big[] = {1, 70000};
	g.values = big;
	assert_int_equal(macko_compress_csr(&g, &m, "g.npz", &e), -1);
	assert_string_equal(e.msg, "g.npz: the value at row 1, column 4 (70000) overflows f2");
}

/* 16 rows with a lone nonzero in the last of 2^31 - 1 columns need 2^27
 * elements each (one every 16 columns), 2^31 in all: one past int32. The
 * count is made from the CSR entries, so nothing that size is allocated. */
static void test_too_many_elements(void **state)
{
	int64_t indptr[17];
	int32_t indices[16];
	float values[16];
	for (int r = 0; r < 16; r++) {
		indptr[r] = r;
		indices[r] = INT32_MAX - 1;
		values[r] = 1;
	}
	indptr[16] = 16;
	struct csr g = {16, INT32_MAX, 16, indptr, indices, values};
	struct macko m;
	struct sp_err e;
	assert_int_equal(macko_compress_csr(&g, &m, "big.npz", &e), -1);
	assert_string_equal(e.msg, "big.npz: the 16 x 2147483647 matrix needs 2147483648 stored "
				   "elements, more than MACKO's int32 row_indices can count "
				   "(2147483647)");
	assert_null(m.values);
}

static void test_shape_errors(void **state)
{
	struct macko m;
	struct sp_err e;
	uint16_t a = 0;
	assert_int_equal(macko_compress_dense(&a, -1, 3, &m, "m.npz", &e), -1);
	assert_string_equal(e.msg, "m.npz: shape -1 x 3 is outside 0..2147483647");
	assert_int_equal(macko_compress_dense(&a, 1, (int64_t)1 << 31, &m, "m.npz", &e), -1);
	assert_int_equal(macko_alloc(&m, 2, 2, -1, "m.npz", &e), -1);
	assert_string_equal(e.msg,
			    "m.npz: -1 stored elements do not fit MACKO's int32 row_indices");
	assert_int_equal(macko_alloc(&m, 2, 2, (int64_t)INT32_MAX + 1, "m.npz", &e), -1);
}

/* --- validation ------------------------------------------------------------ */

static void expect_invalid(const struct macko *m, const char *want)
{
	struct sp_err e;
	assert_int_equal(macko_validate(m, "m.npz", &e), -1);
	if (strcmp(e.msg, want))
		fail_msg("got \"%s\", want \"%s\"", e.msg, want);
}

static void test_validate_rejects(void **state)
{
	uint16_t a[HAND_ROWS * HAND_COLS];
	hand_matrix(a);
	struct macko m;
	compress_ok(a, HAND_ROWS, HAND_COLS, &m);
	/* row_indices {0, 1, 1, 6, 11, 15, 24, 25} */

	/* row_indices[at] = bad, one at a time */
	static const struct {
		int at;
		int32_t bad;
		const char *want;
	} ri_cases[] = {
		{3, 0, "m.npz: row 2: row_indices decrease (0 after 1)"},
		{3, 26, "m.npz: row 2: ends at element 26, past the 25 stored"},
		{0, 1, "m.npz: row_indices[0] is 1, expected 0"},
		{7, 24, "m.npz: row_indices end at 24 but 25 elements are stored"},
	};
	for (size_t i = 0; i < sizeof ri_cases / sizeof *ri_cases; i++) {
		int32_t good = m.row_indices[ri_cases[i].at];
		m.row_indices[ri_cases[i].at] = ri_cases[i].bad;
		expect_invalid(&m, ri_cases[i].want);
		m.row_indices[ri_cases[i].at] = good;
	}
	/* Row 5 ends at column 127 with delta 13 (element 23, high nibble of
	 * byte 11): one more pushes it past the last column. */
	m.deltas[11] = 0xef;
	expect_invalid(&m, "m.npz: row 5: element 8 falls in column 128 of 128");
	m.deltas[11] = 0xdf;

	/* the sizes, on copies of the struct */
	struct macko bad = m;
	bad.padded = 28;
	expect_invalid(&bad, "m.npz: padded length 28 is not a multiple of 8");
	bad.padded = 24;
	expect_invalid(&bad, "m.npz: 25 elements stored in arrays of 24");
	/* With 51 columns row 2 (last column 50) still fits; row 3 (columns
	 * 15, 31, 47, 63, 64) does not, and its first element past the end
	 * is named. */
	bad = m;
	bad.cols = 51;
	expect_invalid(&bad, "m.npz: row 3: element 3 falls in column 63 of 51");

	struct sp_err e;
	assert_int_equal(macko_validate(&m, "m.npz", &e), 0);
	macko_free(&m);
}

/* --- SpMV ------------------------------------------------------------------ */

/* y = alpha A x + beta y_in through the dense matrix, columns in order: the
 * same double sums as the sparse walk plus exact zeros, so equal to the bit. */
static void dense_gemv(const uint16_t *a, int64_t rows, int64_t cols, const float *x, int nvec,
		       double alpha, double beta, const float *y_in, double *y)
{
	for (int v = 0; v < nvec; v++) {
		for (int64_t r = 0; r < rows; r++) {
			double acc = 0;
			for (int64_t c = 0; c < cols; c++)
				acc += (double)half_to_float(a[r * cols + c]) * x[v * cols + c];
			double prior = beta != 0 ? beta * y_in[v * rows + r] : 0;
			y[v * rows + r] = alpha * acc + prior;
		}
	}
}

static void test_spmv_ref_against_dense(void **state)
{
	int64_t rows = 300, cols = 1001;
	uint16_t *a = random_dense(rows, cols, 0.3, 42);
	for (int64_t i = 0; i < rows * cols; i++) /* keep the sums finite */
		if ((a[i] & 0x7c00) > 0x5000)
			a[i] &= 0x83ff;
	struct macko m;
	compress_ok(a, rows, cols, &m);
	const int nvecs[] = {1, 3, 16, 17};
	const double ab[][2] = {{1, 0}, {0.5, 2}, {-1.25, -0.5}, {2, 1}};
	struct rng r;
	rng_init(&r, 43, 0);
	float *x = malloc(17 * cols * sizeof *x), *y_in = malloc(17 * rows * sizeof *y_in);
	double *y = malloc(17 * rows * sizeof *y), *want = malloc(17 * rows * sizeof *want);
	for (int64_t i = 0; i < 17 * cols; i++)
		x[i] = (float)rng_normal(&r);
	for (int64_t i = 0; i < 17 * rows; i++)
		y_in[i] = (float)rng_normal(&r);
	for (size_t n = 0; n < sizeof nvecs / sizeof *nvecs; n++) {
		for (size_t k = 0; k < sizeof ab / sizeof *ab; k++) {
			dense_gemv(a, rows, cols, x, nvecs[n], ab[k][0], ab[k][1], y_in, want);
			macko_spmv_ref(&m, x, nvecs[n], ab[k][0], ab[k][1], y_in, y);
			for (int64_t i = 0; i < nvecs[n] * rows; i++)
				if (y[i] != want[i])
					fail_msg("nvec %d, alpha %g, beta %g: y[%lld] = %.17g, want %.17g",
						 nvecs[n], ab[k][0], ab[k][1], (long long)i, y[i],
						 want[i]);
		}
	}
	/* beta = 0: y_in is not read, so NaN there does not leak, and it may be NULL */
	for (int64_t i = 0; i < 3 * rows; i++)
		y_in[i] = NAN;
	dense_gemv(a, rows, cols, x, 3, 1.5, 0, NULL, want);
	macko_spmv_ref(&m, x, 3, 1.5, 0, y_in, y);
	for (int64_t i = 0; i < 3 * rows; i++) {
		assert_false(isnan(y[i]));
		assert_true(y[i] == want[i]);
	}
	macko_spmv_ref(&m, x, 3, 1.5, 0, NULL, y);
	assert_memory_equal(y, want, 3 * rows * sizeof *y);
	free(x);
	free(y_in);
	free(y);
	free(want);
	macko_free(&m);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_example_bytes),
		cmocka_unit_test(test_hand_example_stats),
		cmocka_unit_test(test_tiny_and_empty),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_block_boundaries_mid_byte),
		cmocka_unit_test(test_chunk_at_array_end),
		cmocka_unit_test(test_thread_count_invariance),
		cmocka_unit_test(test_csr_matches_dense),
		cmocka_unit_test(test_csr_rounding),
		cmocka_unit_test(test_csr_rejects),
		cmocka_unit_test(test_too_many_elements),
		cmocka_unit_test(test_shape_errors),
		cmocka_unit_test(test_validate_rejects),
		cmocka_unit_test(test_spmv_ref_against_dense),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
