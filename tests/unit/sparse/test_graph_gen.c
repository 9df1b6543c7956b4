/* Synthetic graphs: spec parsing, exact edge counts, distinct sorted
 * neighbours without self-loops, a heavy-tailed degree distribution, and
 * output that does not depend on the thread count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/csr.h"
#include "sparse/graph_gen.h"

static void test_spec_parse(void **state)
{
	struct graph_spec s;
	struct sp_err e;
	assert_int_equal(graph_spec_parse("reddit_like", &s, &e), 0);
	assert_int_equal(s.nodes, 232965);
	assert_int_equal(s.edges, 114618749);
	assert_int_equal(graph_spec_parse("products_like:seed=9", &s, &e), 0);
	assert_int_equal(s.nodes, 2449029);
	assert_int_equal(s.seed, 9);
	assert_int_equal(graph_spec_parse("powerlaw:nodes=100,edges=900,sigma=0.5,seed=2", &s, &e), 0);
	assert_int_equal(s.nodes, 100);
	assert_int_equal(s.edges, 900);
	assert_true(s.sigma == 0.5);
	assert_string_equal(s.name, "powerlaw");

	const char *bad[][2] = {
		{"cora", "unknown graph 'cora'"},
		{"powerlaw", "nodes must be"},
		{"powerlaw:nodes=5,edges=21", "do not fit"},
		{"powerlaw:nodes=5,edges", "'edges' is not key=value"},
		{"powerlaw:nodes=-5", "nodes=-5"},
		{"powerlaw:nodes=5,sigma=9", "sigma=9"},
		{"flickr_like:size=3", "unknown key 'size'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(graph_spec_parse(bad[i][0], &s, &e), -1);
		assert_non_null(strstr(e.msg, bad[i][1]));
		assert_non_null(strstr(e.msg, "--synthetic"));
	}
}

static void test_graph_is_valid_and_exact(void **state)
{
	struct graph_spec s;
	struct sp_err e;
	struct csr g;
	assert_int_equal(graph_spec_parse("powerlaw:nodes=20000,edges=400000,seed=4", &s, &e), 0);
	assert_int_equal(graph_gen(&s, &g, &e), 0);
	assert_int_equal(g.nnz, 400000);
	assert_int_equal(csr_validate(&g, CSR_CHECK_UNIQUE | CSR_CHECK_NONEMPTY, "gen", &e), 0);
	int64_t self = 0, maxd = 0;
	for (int64_t r = 0; r < g.nrows; r++) {
		int64_t d = g.indptr[r + 1] - g.indptr[r];
		if (d > maxd)
			maxd = d;
		for (int64_t j = g.indptr[r]; j < g.indptr[r + 1]; j++)
			self += g.indices[j] == r;
	}
	assert_int_equal(self, 0);
	/* Log-normal with sigma 1: the largest of 20,000 degrees is around
	 * exp(3.9 - 0.5) = 30 times the mean; a uniform graph would give ~2. */
	assert_true(maxd > 10 * 20);
	csr_free(&g);
}

static void test_indptr_matches_graph(void **state)
{
	struct graph_spec s;
	struct sp_err e;
	struct csr g;
	int64_t *ip;
	graph_spec_parse("flickr_like", &s, &e);
	assert_int_equal(graph_gen_indptr(&s, &ip, &e), 0);
	assert_int_equal(ip[s.nodes], 991155);
	assert_int_equal(graph_gen(&s, &g, &e), 0);
	assert_memory_equal(ip, g.indptr, (size_t)(s.nodes + 1) * sizeof *ip);
	free(ip);
	csr_free(&g);
}

static void test_dense_rows_and_caps(void **state)
{
	/* 8 nodes, 50 of 56 possible edges: rows hit the cap and take the
	 * selection-sampling path. */
	struct graph_spec s;
	struct sp_err e;
	struct csr g;
	graph_spec_parse("powerlaw:nodes=8,edges=50,sigma=2", &s, &e);
	assert_int_equal(graph_gen(&s, &g, &e), 0);
	assert_true(g.nnz <= 50);
	assert_int_equal(csr_validate(&g, CSR_CHECK_UNIQUE, "gen", &e), 0);
	for (int64_t r = 0; r < g.nrows; r++)
		assert_true(g.indptr[r + 1] - g.indptr[r] <= 7);
	csr_free(&g);
}

static void test_no_edges(void **state)
{
	struct graph_spec s;
	struct sp_err e;
	struct csr g;
	assert_int_equal(graph_spec_parse("powerlaw:nodes=100,edges=0", &s, &e), 0);
	assert_int_equal(graph_gen(&s, &g, &e), 0);
	assert_int_equal(g.nnz, 0);
	for (int64_t r = 0; r <= g.nrows; r++)
		assert_int_equal(g.indptr[r], 0);
	csr_free(&g);
}

static void test_same_for_any_thread_count(void **state)
{
	struct graph_spec s;
	struct sp_err e;
	struct csr a, b;
	graph_spec_parse("powerlaw:nodes=30000,edges=300000,seed=11", &s, &e);
	setenv("SPKIT_THREADS", "1", 1);
	assert_int_equal(graph_gen(&s, &a, &e), 0);
	setenv("SPKIT_THREADS", "7", 1);
	assert_int_equal(graph_gen(&s, &b, &e), 0);
	unsetenv("SPKIT_THREADS");
	assert_memory_equal(a.indptr, b.indptr, (size_t)(a.nrows + 1) * sizeof *a.indptr);
	assert_memory_equal(a.indices, b.indices, (size_t)a.nnz * sizeof *a.indices);
	s.seed = 12;
	csr_free(&b);
	assert_int_equal(graph_gen(&s, &b, &e), 0);
	assert_true(memcmp(a.indices, b.indices, (size_t)(a.nnz < b.nnz ? a.nnz : b.nnz) * 4) != 0);
	csr_free(&a);
	csr_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_parse),
		cmocka_unit_test(test_graph_is_valid_and_exact),
		cmocka_unit_test(test_indptr_matches_graph),
		cmocka_unit_test(test_dense_rows_and_caps),
		cmocka_unit_test(test_no_edges),
		cmocka_unit_test(test_same_for_any_thread_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
