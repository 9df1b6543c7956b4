/* The CPU reference of a Kronecker-sparse factor against the factor built
 * densely (K[al*b*d + be*d + de, al*c*d + ga*d + de] = W[al,be,ga,de]) and
 * multiplied the plain way, in both layouts and all three dtypes; and the
 * pattern checks (sizes, 32-bit indexing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "ksmm/ksmm.h"
#include "ksmm/ksmm_value.h"

/* n random values in dtype t's storage, and the same values as doubles. */
static void *random_values(struct rng *r, enum ksmm_dtype t, int64_t n, double *exact)
{
	void *v = malloc((size_t)n * ksmm_dtype_size(t));
	for (int64_t i = 0; i < n; i++) {
		ksmm_value_store(t, v, i, rng_uniform(r) * 2 - 1);
		exact[i] = ksmm_value(t, v, i);
	}
	return v;
}

static void check_against_dense(struct ksmm_pattern p, int64_t batch, enum ksmm_layout layout,
				enum ksmm_dtype t, uint64_t stream)
{
	struct rng r;
	rng_init(&r, 7, stream);
	const int64_t a = p.a, b = p.b, c = p.c, d = p.d;
	const int64_t rows = ksmm_rows(&p), cols = ksmm_cols(&p), nw = a * b * c * d;
	double *we = malloc(nw * sizeof *we), *xe = malloc(cols * batch * sizeof *xe);
	void *w = random_values(&r, t, nw, we), *x = random_values(&r, t, cols * batch, xe);
	double *k = calloc(rows * cols, sizeof *k);
	for (int64_t al = 0; al < a; al++)
		for (int64_t be = 0; be < b; be++)
			for (int64_t ga = 0; ga < c; ga++)
				for (int64_t de = 0; de < d; de++)
					k[(al * b * d + be * d + de) * cols + al * c * d + ga * d + de] =
						we[((al * b + be) * c + ga) * d + de];
	double *y = malloc(rows * batch * sizeof *y);
	ksmm_ref_factor(&p, layout, t, batch, w, x, y);
	for (int64_t i = 0; i < rows; i++)
		for (int64_t n = 0; n < batch; n++) {
			double s = 0;
			for (int64_t j = 0; j < cols; j++)
				s += k[i * cols + j] *
				     (layout == KSMM_BS_LAST ? xe[j * batch + n] : xe[n * cols + j]);
			double got = layout == KSMM_BS_LAST ? y[i * batch + n] : y[n * rows + i];
			if (fabs(got - s) > 1e-12 * (1 + fabs(s)))
				fail_msg("pattern %ld,%ld,%ld,%ld batch %ld %s %s: y[%ld,%ld] = %g, "
					 "dense %g",
					 (long)a, (long)b, (long)c, (long)d, (long)batch,
					 ksmm_layout_name(layout), ksmm_dtype_name(t), (long)i, (long)n,
					 got, s);
		}
	free(we), free(xe), free(w), free(x), free(k), free(y);
}

static void test_ref_matches_dense(void **state)
{
	/* a = 1, d = 1, b != c both ways, batches past one chunk and not a
	 * multiple of it. */
	static const struct ksmm_pattern ps[] = {
		{1, 4, 4, 1}, {2, 3, 5, 2}, {3, 8, 2, 1}, {1, 2, 8, 4}, {4, 4, 16, 3}, {2, 6, 6, 5},
	};
	static const int64_t batches[] = {1, 7, 130};
	uint64_t stream = 0;
	for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
		for (size_t nb = 0; nb < 3; nb++)
			for (int l = 0; l < 2; l++)
				for (int t = 0; t < 3; t++)
					check_against_dense(ps[i], batches[nb], (enum ksmm_layout)l,
							    (enum ksmm_dtype)t, stream++);
}

static void test_pattern_check(void **state)
{
	struct sp_err e;
	struct ksmm_pattern ok = {4, 64, 64, 16};
	assert_int_equal(ksmm_pattern_check(&ok, 25088, "--pattern", &e), 0);
	struct ksmm_pattern zero = {4, 0, 64, 16};
	assert_int_equal(ksmm_pattern_check(&zero, 1, "p.in line 3", &e), -1);
	assert_string_equal(e.msg, "p.in line 3: pattern 4,0,64,16: b must be at least 1");
	assert_int_equal(ksmm_pattern_check(&ok, 0, "--batch", &e), -1);
	assert_string_equal(e.msg, "--batch: batch 0: must be at least 1");
	/* rows = 128*1024*64 = 2^23; times 256 is exactly 2^31: refused;
	 * one less batch column fits. */
	struct ksmm_pattern big = {128, 1024, 64, 64};
	assert_int_equal(ksmm_pattern_check(&big, 255, "--pattern", &e), 0);
	assert_int_equal(ksmm_pattern_check(&big, 256, "--pattern", &e), -1);
	assert_string_equal(e.msg, "--pattern: pattern 128,1024,64,64 at batch 256: "
				   "a*b*d*batch reaches 2^31, past 32-bit indexing");
	/* sizes whose plain product overflows int64 */
	struct ksmm_pattern huge = {INT64_MAX, INT64_MAX, 2, 2};
	assert_int_equal(ksmm_pattern_check(&huge, 1, "x", &e), -1);
	assert_non_null(strstr(e.msg, "a*b*c*d reaches 2^31"));
}

static void test_names(void **state)
{
	enum ksmm_dtype t;
	enum ksmm_layout l;
	assert_int_equal(ksmm_dtype_parse("bf16", &t), 0);
	assert_int_equal(t, KSMM_BF16);
	assert_string_equal(ksmm_dtype_name(t), "bf16");
	assert_int_equal(ksmm_dtype_parse("float", &t), -1);
	assert_int_equal(ksmm_layout_parse("bsl", &l), 0);
	assert_string_equal(ksmm_layout_name(l), "bsl");
	assert_int_equal(ksmm_layout_parse("BSL", &l), -1);
	assert_string_equal(ksmm_variant_name(KSMM_MMA), "mma");
	assert_int_equal(ksmm_dtype_size(KSMM_F16), 2);
	struct ksmm_pattern p = {2, 3, 5, 7};
	assert_int_equal(ksmm_rows(&p), 42);
	assert_int_equal(ksmm_cols(&p), 70);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_matches_dense),
		cmocka_unit_test(test_pattern_check),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
