/* kernel-sample predict's regressor (sample_gbt.h): it learns known
 * functions, a power law through its base and a step through its trees,
 * between the points it saw; it is the same for a seed and differs for
 * another; its trees keep their depth and leaf size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample_gbt.h"

enum { SIDE = 12, N = SIDE * SIDE };

/* A grid of two features 2^(i/2), and log of f(x0, x1). */
static void grid(double (*f)(double, double), double *x, double *y)
{
	for (int i = 0; i < SIDE; i++)
		for (int j = 0; j < SIDE; j++) {
			double *r = x + 2 * (i * SIDE + j);
			r[0] = pow(2, i / 2.0);
			r[1] = pow(2, j / 2.0) * 3;
			y[i * SIDE + j] = log(f(r[0], r[1]));
		}
}

/* A GEMM-like time: a launch floor, then work over a throughput. */
static double floor_and_work(double a, double b)
{
	return 5 + a * b / 4;
}

/* As sample_features.h does: the sizes, then their product (the work) for
 * the base, and the trees learn the floor the power law misses. */
static void test_fits_a_known_function_between_its_points(void **state)
{
	double x[2 * N], y[N], x3[3 * N];
	struct gbt g;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	grid(floor_and_work, x, y);
	for (int i = 0; i < N; i++)
		x3[3 * i] = x[2 * i], x3[3 * i + 1] = x[2 * i + 1],
		x3[3 * i + 2] = x[2 * i] * x[2 * i + 1];
	if (gbt_fit(&g, x3, y, N, 3, 1, &p, &e))
		fail_msg("%s", e.msg);
	double worst = 0;
	for (int i = 1; i < SIDE - 1; i++) /* midpoints of the grid, never seen */
		for (int j = 1; j < SIDE - 1; j++) {
			double q[3] = {pow(2, (i + 0.5) / 2), pow(2, (j + 0.5) / 2) * 3, 0};
			q[2] = q[0] * q[1];
			double rel = fabs(exp(gbt_predict(&g, q)) / floor_and_work(q[0], q[1]) - 1);
			worst = rel > worst ? rel : worst;
		}
	if (worst >= 0.08)
		fail_msg("worst relative error between the grid's points %.3f", worst);
	for (int i = 0; i < N; i++) /* and the points it saw, closer */
		assert_true(fabs(gbt_predict(&g, x3 + 3 * i) - y[i]) < 0.05);
	gbt_free(&g);
}

static double power_law(double a, double b)
{
	return 0.5 * pow(a, 1.5) * pow(b, 0.75);
}

static void test_the_base_carries_a_power_law_beyond_the_grid(void **state)
{
	double x[2 * N], y[N];
	struct gbt g, flat;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	grid(power_law, x, y);
	if (gbt_fit(&g, x, y, N, 2, 2, &p, &e))
		fail_msg("%s", e.msg);
	assert_true(fabs(g.base[1] - 1.5) < 0.01);
	assert_true(fabs(g.base[2] - 0.75) < 0.01);
	assert_true(fabs(g.base[0] - log(0.5)) < 0.02);
	/* twice the largest sizes: the power law holds there, trees alone stay flat */
	double q[2] = {2 * x[2 * (N - 1)], 2 * x[2 * (N - 1) + 1]};
	double want = power_law(q[0], q[1]);
	assert_true(fabs(exp(gbt_predict(&g, q)) / want - 1) < 0.02);
	p.base = 0;
	if (gbt_fit(&flat, x, y, N, 2, 2, &p, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(flat.nbase, 0);
	assert_true(exp(gbt_predict(&flat, q)) < 0.5 * want);
	gbt_free(&g);
	gbt_free(&flat);
}

static double step(double a, double b)
{
	return a < 5 ? 100 : 400;
}

static void test_trees_learn_a_step(void **state)
{
	double x[2 * N], y[N];
	struct gbt g;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	p.base = 0;
	grid(step, x, y);
	if (gbt_fit(&g, x, y, N, 2, 2, &p, &e))
		fail_msg("%s", e.msg);
	double lo[2] = {2, 10}, hi[2] = {20, 10};
	assert_true(fabs(exp(gbt_predict(&g, lo)) / 100 - 1) < 0.01);
	assert_true(fabs(exp(gbt_predict(&g, hi)) / 400 - 1) < 0.01);
	/* the first tree splits on feature 0 between 4 and 5.66 */
	assert_int_equal(g.trees[0].nodes[0].feature, 0);
	assert_true(g.trees[0].nodes[0].value > 4 && g.trees[0].nodes[0].value < 5.66);
	gbt_free(&g);
}

static int same_model(const struct gbt *a, const struct gbt *b)
{
	if (a->ntrees != b->ntrees || memcmp(a->base, b->base, sizeof a->base))
		return 0;
	for (int t = 0; t < a->ntrees; t++) {
		if (a->trees[t].n != b->trees[t].n)
			return 0;
		for (int i = 0; i < a->trees[t].n; i++) {
			const struct gbt_node *p = &a->trees[t].nodes[i], *q = &b->trees[t].nodes[i];
			if (p->feature != q->feature || p->value != q->value || p->left != q->left ||
			    p->right != q->right)
				return 0;
		}
	}
	return 1;
}

static void test_deterministic_for_a_seed(void **state)
{
	double x[2 * N], y[N];
	struct gbt a, b, c;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	grid(floor_and_work, x, y);
	p.seed = 7;
	assert_int_equal(gbt_fit(&a, x, y, N, 2, 1, &p, &e), 0);
	assert_int_equal(gbt_fit(&b, x, y, N, 2, 1, &p, &e), 0);
	p.seed = 8;
	assert_int_equal(gbt_fit(&c, x, y, N, 2, 1, &p, &e), 0);
	assert_true(same_model(&a, &b));
	assert_false(same_model(&a, &c)); /* another row sample */
	/* without a sample there is nothing to draw: every seed gives one model */
	gbt_free(&c);
	p.subsample = 1;
	gbt_free(&a);
	assert_int_equal(gbt_fit(&a, x, y, N, 2, 1, &p, &e), 0);
	p.seed = 9;
	assert_int_equal(gbt_fit(&c, x, y, N, 2, 1, &p, &e), 0);
	assert_true(same_model(&a, &c));
	gbt_free(&a);
	gbt_free(&b);
	gbt_free(&c);
}

/* Rows in each leaf, walking the tree with every row. */
static void test_depth_and_leaf_size(void **state)
{
	double x[2 * N], y[N];
	struct gbt g;
	struct sp_err e;
	struct gbt_params p = gbt_default_params();
	p.depth = 3, p.min_leaf = 5, p.subsample = 1, p.trees = 20;
	grid(floor_and_work, x, y);
	assert_int_equal(gbt_fit(&g, x, y, N, 2, 1, &p, &e), 0);
	for (int t = 0; t < g.ntrees; t++) {
		const struct gbt_tree *tr = &g.trees[t];
		int count[15] = {0};
		assert_true(tr->n <= 15);
		for (int i = 0; i < N; i++) {
			int k = 0, depth = 0;
			while (tr->nodes[k].feature >= 0) {
				assert_true(tr->nodes[k].left > k && tr->nodes[k].right > k);
				k = x[2 * i + tr->nodes[k].feature] <= tr->nodes[k].value
					    ? tr->nodes[k].left
					    : tr->nodes[k].right;
				depth++;
			}
			assert_true(depth <= 3);
			count[k]++;
		}
		for (int k = 0; k < tr->n; k++)
			if (tr->nodes[k].feature < 0)
				assert_true(count[k] >= 5);
	}
	gbt_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits_a_known_function_between_its_points),
		cmocka_unit_test(test_the_base_carries_a_power_law_beyond_the_grid),
		cmocka_unit_test(test_trees_learn_a_step),
		cmocka_unit_test(test_deterministic_for_a_seed),
		cmocka_unit_test(test_depth_and_leaf_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
