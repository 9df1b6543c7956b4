/* Edge-list reader: each separator, headers, comments, weights, 1-based
 * ids, undirected graphs, a fixed node count, and every malformed input
 * with its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/edgelist.h"
#include "testutil.h"

static struct csr read_ok(const char *name, const char *text, const struct edgelist_opts *opts)
{
	struct csr g;
	struct sp_err e = {""};
	if (edgelist_read(test_write(name, text), opts, &g, &e))
		fail_msg("%s: unexpected error: %s", name, e.msg);
	return g;
}

/* The same directed graph in each separator: 0->1, 2->1, 2->0, 0->1 again. */
static void test_separators(void **state)
{
	static const char *const texts[] = {
		"0,1\n2,1\n2,0\n0,1\n",
		"0, 1\n 2 ,1 \n2,\t0\n0,1",
		"0\t1\n2\t1\n2\t0\n0\t1\n",
		"0 \t1\n2\t 1\n2\t0 \n0\t1\n",
		"0 1\n2  1\n  2 0\n0\t 1\n",
	};
	const int64_t p[] = {0, 2, 2, 4};
	const int32_t i[] = {1, 1, 0, 1};
	for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
		char name[32];
		snprintf(name, sizeof name, "sep%zu.txt", k);
		struct csr g = read_ok(name, texts[k], NULL);
		assert_csr(&g, 3, 3, 4, p, i, NULL);
		csr_free(&g);
	}
}

static void test_header_comments_blank_lines(void **state)
{
	struct csr g = read_ok("hdr.csv", "# a comment\n"
					  "% another\n"
					  "\n"
					  "source,target\r\n"
					  "1,0\r\n"
					  "   # indented comment\n"
					  "\t\n"
					  "0,1\r\n",
			       NULL);
	const int64_t p[] = {0, 1, 2};
	const int32_t i[] = {1, 0};
	assert_csr(&g, 2, 2, 2, p, i, NULL);
	csr_free(&g);
	/* A header in another separator than the edges is still a header. */
	g = read_ok("hdr.tsv", "src dst weight\n0\t1\t2.5\n", NULL);
	const int64_t p2[] = {0, 1, 1};
	const int32_t i2[] = {1};
	const float v2[] = {2.5f};
	assert_csr(&g, 2, 2, 1, p2, i2, v2);
	csr_free(&g);
}

static void test_weights(void **state)
{
	struct csr g = read_ok("w.csv", "src,dst,w\n2,0,-1.5\n0,2,1e-3\n0,1,4\n0,2,+2\n", NULL);
	const int64_t p[] = {0, 3, 3, 4};
	const int32_t i[] = {1, 2, 2, 0};
	const float v[] = {4, 1e-3f, 2, -1.5f};
	assert_csr(&g, 3, 3, 4, p, i, v);
	csr_free(&g);
}

static void test_one_based_and_nodes(void **state)
{
	struct edgelist_opts one = {.one_based = 1};
	struct csr g = read_ok("one.txt", "1 3\n3 2\n", &one);
	const int64_t p[] = {0, 1, 1, 2};
	const int32_t i[] = {2, 1};
	assert_csr(&g, 3, 3, 2, p, i, NULL);
	csr_free(&g);

	/* Isolated nodes past the largest id. */
	struct edgelist_opts five = {.one_based = 1, .nodes = 5};
	g = read_ok("five.txt", "1 3\n3 2\n", &five);
	const int64_t p5[] = {0, 1, 1, 2, 2, 2};
	assert_csr(&g, 5, 5, 2, p5, i, NULL);
	csr_free(&g);

	/* No edges at all is fine once the node count is known. */
	struct edgelist_opts four = {.nodes = 4};
	g = read_ok("noedges.txt", "# nothing\n", &four);
	const int64_t p4[] = {0, 0, 0, 0, 0};
	assert_csr(&g, 4, 4, 0, p4, NULL, NULL);
	csr_free(&g);
}

static void test_undirected(void **state)
{
	/* The reverse of every edge but the self-loop; duplicates stay. */
	struct edgelist_opts und = {.undirected = 1};
	struct csr g = read_ok("und.csv", "0,1,0.5\n2,2,3\n1,2,-1\n0,1,7\n", &und);
	const int64_t p[] = {0, 2, 5, 7};
	const int32_t i[] = {1, 1, 0, 0, 2, 1, 2};
	const float v[] = {0.5f, 7, 0.5f, 7, -1, -1, 3};
	assert_csr(&g, 3, 3, 7, p, i, v);
	csr_free(&g);
}

static void test_parse_from_memory(void **state)
{
	/* Not NUL-terminated: the parser must stop at len. */
	const char text[] = "0,1\n1,2\n2,x";
	struct csr g;
	struct sp_err e;
	assert_int_equal(edgelist_parse(text, sizeof text - 4, "mem", NULL, &g, &e), 0);
	assert_int_equal(g.nrows, 3);
	assert_int_equal(g.nnz, 2);
	csr_free(&g);
	assert_int_equal(edgelist_parse(text, sizeof text - 1, "mem", NULL, &g, &e), -1);
	assert_string_equal(e.msg, "mem:3: field 2: expected a node id, found 'x'");
}

static int read_edgelist(const char *path, const void *opts, struct csr *g, struct sp_err *e)
{
	return edgelist_read(path, opts, g, e);
}

static void test_malformed(void **state)
{
	static const struct edgelist_opts plain, one = {.one_based = 1}, ten = {.nodes = 10};
	static const struct {
		const char *text;
		const struct edgelist_opts *opts;
		const char *where, *problem;
	} cases[] = {
		{"src,dst\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n0,1\n"
		 "5,abc\n",
		 &plain, ":17:", "field 2: expected a node id, found 'abc'"},
		{"0,1\nx,1\n", &plain, ":2:", "field 1: expected a node id, found 'x'"},
		{"0,1\n1.5,1\n", &plain, ":2:", "field 1: expected a node id, found '1.5'"},
		{"1.5,1\n", &plain, ":1:", "field 1: expected a node id, found '1.5'"},
		{"0,1\n0,-3\n", &plain, ":2:", "field 2: negative node id -3"},
		{"1 2\n0 1\n", &one, ":2:", "field 1: node id 0 in a 1-based edge list"},
		{"0,1\n3,10\n", &ten, ":2:", "field 2: node id 10 out of range for 10 nodes"},
		{"0,2147483647\n", &plain, ":1:", "node id 2147483647 exceeds the limit of 2147483646"},
		{"0,99999999999999999999\n", &plain, ":1:",
		 "field 2: '99999999999999999999' is out of range for a node id"},
		{"0,1,2,3\n", &plain, ":1:", "4 fields, expected source, target and an optional weight"},
		{"0\t1\n0\t1\t2\t3\t4\n", &plain, ":2:", "5 fields"},
		{"0,1\n0,1,2\n", &plain, ":2:", "3 fields, but the first edge (line 1) has 2"},
		{"#c\n0 1 1\n\n0 1\n", &plain, ":4:", "2 fields, but the first edge (line 2) has 3"},
		{"0,1\n0 1\n", &plain, ":2:", "expected 2 or 3 fields separated by commas, found 1"},
		{"0\t1\n0 1\n", &plain, ":2:", "expected 2 or 3 fields separated by tabs, found 1"},
		{"0 1\n7\n", &plain, ":2:", "expected 2 or 3 fields separated by spaces, found 1"},
		{"0,1\n,1\n", &plain, ":2:", "field 1: expected a node id, found ''"},
		{"0,1\n0,,1\n", &plain, ":2:", "3 fields, but the first edge (line 1) has 2"},
		{"0,1,1\n0,1,\n", &plain, ":2:", "field 3: expected a weight, found ''"},
		{"0,1,1\n0,1,heavy\n", &plain, ":2:", "field 3: expected a weight, found 'heavy'"},
		{"0,1,1\n0,1,nan\n", &plain, ":2:", "field 3: 'nan' is not a finite float"},
		{"0,1,1\n0,1,1e40\n", &plain, ":2:", "field 3: '1e40' is not a finite float"},
		{"", &plain, ":", "no edges"},
		{"# only a comment\n\n", &plain, ":", "no edges"},
		{"src,dst\n", &plain, ":", "no edges (line 1 was taken for a header)"},
		{"src,dst\nsrc,dst\n", &plain, ":2:", "field 1: expected a node id, found 'src'"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
		assert_malformed(read_edgelist, cases[k].opts, "csv", k, cases[k].text, cases[k].where,
				 cases[k].problem);
}

static void test_bad_options_and_files(void **state)
{
	struct csr g;
	struct sp_err e;
	struct edgelist_opts neg = {.nodes = -1};
	assert_int_equal(edgelist_read(test_write("o.csv", "0,1\n"), &neg, &g, &e), -1);
	assert_msg_has(&e, "o.csv: node count -1 outside [0, 2147483647]", NULL);
	assert_int_equal(edgelist_read(test_dir, NULL, &g, &e), -1);
	assert_msg_has(&e, test_dir, ": is a directory", NULL);
	assert_int_equal(edgelist_read("/no/such/g.csv", NULL, &g, &e), -1);
	assert_string_equal(e.msg, "/no/such/g.csv: cannot open: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separators),
		cmocka_unit_test(test_header_comments_blank_lines),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_one_based_and_nodes),
		cmocka_unit_test(test_undirected),
		cmocka_unit_test(test_parse_from_memory),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bad_options_and_files),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
