/* The shape grid (sample_grid.h) against the order estimate-train-time's
 * ShapeGenerator produces: the expected walks below are what its next_dims
 * printed for the same starts, steps, ends and operators, including a 'mul'
 * dimension that does not start at a power of its step (where the
 * original's log-based count is wrong and its walk is right). Then the
 * original's collect grids' sizes, and the parts dealt round-robin by
 * 1-based position as its controller deals them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sample/sample_grid.h"

static struct sample_grid grid(int n, const int64_t *start, const int64_t *step,
			       const int64_t *end, const char *grow)
{
	struct sample_grid g = {.ndims = n};
	for (int i = 0; i < n; i++) {
		g.start[i] = start[i], g.step[i] = step[i], g.end[i] = end[i];
		g.grow[i] = grow[i] == 'm' ? SAMPLE_MUL : SAMPLE_ADD;
	}
	return g;
}

/* Walk g and compare with want (count shapes of g.ndims values). */
static void assert_walk(const struct sample_grid *g, const int64_t *want, size_t count)
{
	int64_t shape[SAMPLE_MAX_DIMS];
	size_t k = 0;
	sample_grid_first(g, shape);
	do {
		assert_true(k < count);
		assert_memory_equal(shape, want + k * (size_t)g->ndims,
				    (size_t)g->ndims * sizeof *shape);
		k++;
	} while (sample_grid_next(g, shape));
	assert_int_equal(k, count);
	assert_int_equal(sample_grid_count(g), count);
}

static void test_two_dims(void **state)
{
	/* mp: 1, 2, 4 (mul 2 to 4); b: 2, 5, 8 (add 3 to 9: 9 is not reached) */
	struct sample_grid g = grid(2, (int64_t[]){1, 2}, (int64_t[]){2, 3}, (int64_t[]){4, 9}, "ma");
	static const int64_t want[] = {1, 2, 1, 5, 1, 8, 2, 2, 2, 5, 2, 8, 4, 2, 4, 5, 4, 8};
	assert_walk(&g, want, 9);
}

static void test_mul_from_odd_start(void **state)
{
	/* 3, 6, 12 up to 16; a dimension of one value; 10, 15, 20 inclusive */
	struct sample_grid g = grid(3, (int64_t[]){3, 1, 10}, (int64_t[]){2, 2, 5},
				    (int64_t[]){16, 1, 20}, "mma");
	static const int64_t want[] = {3, 1, 10, 3, 1, 15, 3, 1, 20, 6, 1, 10, 6, 1, 15,
				       6, 1, 20, 12, 1, 10, 12, 1, 15, 12, 1, 20};
	assert_walk(&g, want, 9);
	assert_int_equal(sample_grid_axis_len(&g, 0), 3);
	assert_int_equal(sample_grid_axis_len(&g, 1), 1);
}

static void test_single_shape(void **state)
{
	struct sample_grid g = grid(1, (int64_t[]){7}, (int64_t[]){1}, (int64_t[]){7}, "a");
	assert_walk(&g, (const int64_t[]){7}, 1);
}

/* The original's collect grids: layernorm (b, l, dim) and bmm (mp, b, h,
 * l, dim), their first, 1001st and last shapes as next_dims gave them. */
static void test_collect_grids(void **state)
{
	struct sample_grid ln = grid(3, (int64_t[]){2, 1024, 2048}, (int64_t[]){2, 512, 512},
				     (int64_t[]){8, 5120, 8192}, "maa");
	assert_int_equal(sample_grid_count(&ln), 351);

	struct sample_grid bmm = grid(5, (int64_t[]){1, 4, 16, 1024, 2048},
				      (int64_t[]){2, 2, 8, 512, 512},
				      (int64_t[]){16, 8, 80, 5120, 8192}, "mmaaa");
	assert_int_equal(sample_grid_count(&bmm), 10530);
	int64_t s[SAMPLE_MAX_DIMS];
	sample_grid_first(&bmm, s);
	assert_memory_equal(s, ((int64_t[]){1, 4, 16, 1024, 2048}), 5 * sizeof *s);
	uint64_t n = 1;
	while (n < 1001 && sample_grid_next(&bmm, s))
		n++;
	assert_memory_equal(s, ((int64_t[]){1, 4, 80, 3072, 8192}), 5 * sizeof *s);
	while (sample_grid_next(&bmm, s))
		n++;
	assert_int_equal(n, 10530);
	/* after the last, the walk stays ended: the last shape was the ends */
	int64_t last[5] = {16, 8, 80, 5120, 8192};
	memcpy(s, last, sizeof last);
	assert_false(sample_grid_next(&bmm, s));
}

/* A 'mul' dimension whose next value would overflow 64 bits ends cleanly. */
static void test_mul_near_limit(void **state)
{
	struct sample_grid g = grid(1, (int64_t[]){SAMPLE_MAX_VALUE / 2},
				    (int64_t[]){SAMPLE_MAX_VALUE}, (int64_t[]){SAMPLE_MAX_VALUE},
				    "m");
	assert_int_equal(sample_grid_axis_len(&g, 0), 1);
	int64_t s[1];
	sample_grid_first(&g, s);
	assert_false(sample_grid_next(&g, s));
}

static void test_parts(void **state)
{
	/* 10 shapes in 4 parts: part 1 takes positions 4 and 8, part 2 1, 5, 9 */
	static const int owner[11] = {0, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3};
	for (uint64_t n = 1; n <= 10; n++)
		for (int p = 1; p <= 4; p++)
			assert_int_equal(sample_grid_owns(n, 4, p), owner[n] == p);
	/* the counts agree with owns for every total and split */
	for (uint64_t total = 0; total <= 40; total++) {
		for (int parts = 1; parts <= 9; parts++) {
			uint64_t sum = 0;
			for (int p = 1; p <= parts; p++) {
				uint64_t c = 0;
				for (uint64_t n = 1; n <= total; n++)
					c += (uint64_t)sample_grid_owns(n, parts, p);
				assert_int_equal(sample_grid_part_count(total, parts, p), c);
				sum += c;
			}
			assert_int_equal(sum, total);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_dims),
		cmocka_unit_test(test_mul_from_odd_start),
		cmocka_unit_test(test_single_shape),
		cmocka_unit_test(test_collect_grids),
		cmocka_unit_test(test_mul_near_limit),
		cmocka_unit_test(test_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
