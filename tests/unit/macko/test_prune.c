/* Magnitude pruning: prune_to_density keeps exactly round(d n) entries, the
 * largest, ties by position; prune_below against a direct float comparison
 * over every half. */
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

/* Entries with few distinct magnitudes (many ties), both signs, zeros of
 * both signs, and some inf and NaN. */
static uint16_t *random_halves(int64_t n, uint64_t seed)
{
	struct rng r;
	rng_init(&r, seed, 0);
	uint16_t *a = malloc((size_t)n * sizeof *a);
	assert_non_null(a);
	for (int64_t i = 0; i < n; i++) {
		uint64_t u = rng_u64(&r);
		uint16_t mag = (uint16_t)(0x3c00 + (u % 64) * 3);
		switch (u >> 60) {
		case 0:
			mag = 0;
			break;
		case 1:
			mag = (u >> 20) % 7 == 0 ? 0x7e00 : 0x7c00;
			break;
		case 2:
			mag = (uint16_t)((u >> 20) & 0x3ff); /* subnormal */
			break;
		}
		a[i] = (uint16_t)(mag | ((u >> 40) & 1 ? 0x8000 : 0));
	}
	return a;
}

static int64_t count_nonzero(const uint16_t *a, int64_t n)
{
	int64_t k = 0;
	for (int64_t i = 0; i < n; i++)
		k += !half_is_zero(a[i]);
	return k;
}

/* Every kept entry is unchanged, every dropped one is +0; no dropped
 * magnitude beats a kept one; at equal magnitude the kept come first. */
static void check_selection(const uint16_t *before, const uint16_t *after, int64_t n)
{
	uint16_t min_kept = 0xffff, max_dropped = 0;
	int64_t first_dropped_at_min = -1, last_kept_at = -1;
	for (int64_t i = 0; i < n; i++) {
		uint16_t mag = before[i] & HALF_ABS;
		if (after[i] == before[i] && !(after[i] == 0 && mag == 0)) {
			if (mag < min_kept)
				min_kept = mag;
		} else {
			assert_int_equal(after[i], 0);
			if (mag > max_dropped)
				max_dropped = mag;
		}
	}
	assert_true(min_kept >= max_dropped);
	for (int64_t i = 0; i < n; i++) {
		if ((before[i] & HALF_ABS) != min_kept || min_kept == 0)
			continue;
		if (after[i] == before[i])
			last_kept_at = i;
		else if (first_dropped_at_min < 0)
			first_dropped_at_min = i;
	}
	if (first_dropped_at_min >= 0)
		assert_true(last_kept_at < first_dropped_at_min);
}

static void test_prune_to_density(void **state)
{
	const double densities[] = {1.0, 0.9, 0.5, 0.3, 0.1, 0.01, 1e-4};
	int64_t n = 100003;
	uint16_t *before = random_halves(n, 5);
	uint16_t *a = malloc((size_t)n * sizeof *a);
	int64_t nonzeros = count_nonzero(before, n);
	for (size_t d = 0; d < sizeof densities / sizeof *densities; d++) {
		memcpy(a, before, (size_t)n * sizeof *a);
		struct sp_err e;
		assert_int_equal(prune_to_density(a, n, densities[d], &e), 0);
		int64_t keep = llround(densities[d] * (double)n);
		assert_int_equal(count_nonzero(a, n), keep < nonzeros ? keep : nonzeros);
		check_selection(before, a, n);
	}
	free(a);
	free(before);
}

/* Over 2^22 entries the work is cut into chunks, each with its histogram:
 * the entries at the cut that are kept must still be the first ones by
 * position across the chunks, whatever the thread count. Few magnitudes, so
 * the cut's ties span every chunk. */
static void test_prune_to_density_chunks(void **state)
{
	int64_t n = 3 * ((int64_t)1 << 22) + 12345;
	uint16_t *before = malloc((size_t)n * sizeof *before);
	uint16_t *one = malloc((size_t)n * sizeof *one), *three = malloc((size_t)n * sizeof *three);
	assert_true(before && one && three);
	struct rng r;
	rng_init(&r, 9, 0);
	for (int64_t i = 0; i < n; i++)
		before[i] = (uint16_t)((0x3c00 + rng_below(&r, 5)) | (rng_below(&r, 2) << 15));
	memcpy(one, before, (size_t)n * sizeof *one);
	memcpy(three, before, (size_t)n * sizeof *three);
	struct sp_err e;
	setenv("SPKIT_THREADS", "1", 1);
	assert_int_equal(prune_to_density(one, n, 0.5, &e), 0);
	setenv("SPKIT_THREADS", "3", 1);
	assert_int_equal(prune_to_density(three, n, 0.5, &e), 0);
	unsetenv("SPKIT_THREADS");
	assert_memory_equal(one, three, (size_t)n * sizeof *one);
	assert_int_equal(count_nonzero(one, n), llround(0.5 * (double)n));
	check_selection(before, one, n);
	free(before);
	free(one);
	free(three);
}

static void test_prune_to_density_by_hand(void **state)
{
	/* magnitudes 1, 3, 2, 3, 3, inf, NaN, 0.5: keep 4 = NaN, inf, then the
	 * first two 3s by position */
	uint16_t a[] = {0x3c00, 0xc200, 0x4000, 0x4200, 0xc200, 0xfc00, 0x7e00, 0x3800};
	uint16_t want[] = {0, 0xc200, 0, 0x4200, 0, 0xfc00, 0x7e00, 0};
	struct sp_err e;
	assert_int_equal(prune_to_density(a, 8, 0.5, &e), 0);
	assert_memory_equal(a, want, sizeof want);

	uint16_t b[] = {0x3c00, 0x4000, 0x4200};
	assert_int_equal(prune_to_density(b, 3, 0.1, &e), 0); /* round(0.3) = 0 */
	assert_int_equal(count_nonzero(b, 3), 0);
	uint16_t c[] = {0x3c00, 0x8000, 0x4200};
	assert_int_equal(prune_to_density(c, 3, 1.0, &e), 0);
	assert_int_equal(c[0], 0x3c00);
	assert_int_equal(c[2], 0x4200);
	assert_int_equal(prune_to_density(NULL, 0, 0.5, &e), 0);
}

static void test_prune_to_density_rejects(void **state)
{
	uint16_t a[2] = {0x3c00, 0x4000};
	const double bad[] = {0, -0.5, 1.0001, NAN, INFINITY};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct sp_err e;
		assert_int_equal(prune_to_density(a, 2, bad[i], &e), -1);
		assert_non_null(strstr(e.msg, "is outside (0, 1]"));
		assert_int_equal(a[0], 0x3c00); /* untouched */
	}
	struct sp_err e;
	prune_to_density(a, 2, 0, &e);
	assert_string_equal(e.msg, "density 0 is outside (0, 1]");
}

static void test_prune_below_every_half(void **state)
{
	uint16_t *all = malloc(65536 * sizeof *all), *a = malloc(65536 * sizeof *a);
	for (uint32_t h = 0; h < 65536; h++)
		all[h] = (uint16_t)h;
	const double thresholds[] = {0.5, 1e-3, 0x1p-24, 0x1.8p-24, 1.0009765625, 1.0005,
				     65504, 65505, 1e9, INFINITY, 0, -1, NAN};
	for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++) {
		memcpy(a, all, 65536 * sizeof *a);
		prune_below(a, 65536, thresholds[t]);
		for (uint32_t h = 0; h < 65536; h++) {
			int drop = fabs((double)half_to_float((uint16_t)h)) < thresholds[t];
			if (a[h] != (drop ? 0 : h))
				fail_msg("threshold %g: 0x%04x became 0x%04x", thresholds[t], h, a[h]);
		}
	}
	free(all);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prune_to_density),
		cmocka_unit_test(test_prune_to_density_chunks),
		cmocka_unit_test(test_prune_to_density_by_hand),
		cmocka_unit_test(test_prune_to_density_rejects),
		cmocka_unit_test(test_prune_below_every_half),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
