/* Matrix Market reader: every variant entry by entry, every malformed input
 * with its message, the karate club against its edge list, and SciPy's
 * mmread on random matrices as the reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/edgelist.h"
#include "sparse/mtx.h"
#include "testutil.h"

/* A valid file and the CSR it must give, entry by entry (values NULL: a
 * pattern). Each runs as its own test, named after it. */
struct valid_case {
	const char *name, *text;
	int64_t nrows, ncols, nnz;
	const int64_t *indptr;
	const int32_t *indices;
	const float *values;
};

#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define I32(...) ((const int32_t[]){__VA_ARGS__})
#define F32(...) ((const float[]){__VA_ARGS__})

static const struct valid_case valid_cases[] = {
	{"real_general.mtx",
	 "%%MatrixMarket matrix coordinate real general\n% a comment\n3 4 5\n"
	 "3 4 -2.5\n1 3 1e3\n1 1 0.125\n3 1 7\n2 2 -0\n",
	 3, 4, 5, I64(0, 2, 3, 5), I32(0, 2, 1, 0, 3), F32(0.125f, 1000, -0.0f, 7, -2.5f)},
	/* float rounds 2^24 + 1 to 2^24 */
	{"integer_general.mtx",
	 "%%MatrixMarket matrix coordinate integer general\n2 3 3\n2 3 -7\n1 2 +12\n2 1 16777217\n",
	 2, 3, 3, I64(0, 1, 3), I32(1, 0, 2), F32(12, 16777216, -7)},
	{"pattern_general.mtx",
	 "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n2 2\n1 2\n2 1\n",
	 2, 2, 3, I64(0, 1, 3), I32(1, 0, 1), NULL},
	/* Diagonal entries once, the others twice. */
	{"real_symmetric.mtx",
	 "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1.5\n2 1 2\n3 2 -3\n3 3 4\n",
	 3, 3, 6, I64(0, 2, 4, 6), I32(0, 1, 0, 2, 1, 2), F32(1.5f, 2, 2, -3, -3, 4)},
	{"integer_symmetric.mtx",
	 "%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n2 1 5\n2 2 -1\n",
	 2, 2, 3, I64(0, 1, 3), I32(1, 0, 1), F32(5, 5, -1)},
	{"pattern_symmetric.mtx",
	 "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n3 1\n2 2\n3 2\n",
	 3, 3, 5, I64(0, 1, 3, 5), I32(2, 1, 2, 0, 1), NULL},
	/* The mirror is negated; a (zero) diagonal entry is kept once. */
	{"real_skew.mtx",
	 "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 2.5\n3 1 -1\n3 3 0\n",
	 3, 3, 5, I64(0, 2, 3, 5), I32(1, 2, 0, 0, 2), F32(-2.5f, 1, 2.5f, -1, 0)},
	{"integer_skew.mtx",
	 "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n",
	 2, 2, 2, I64(0, 1, 2), I32(1, 0), F32(-3, 3)},
	/* Case, blank lines, comments anywhere, CRLF, tabs, runs of spaces, no
	 * final newline. */
	{"layout.mtx",
	 "%%matrixmarket MATRIX Coordinate REAL General\r\n%\r\n\r\n  2   2\t2  \r\n"
	 "% between\r\n\r\n1\t2\t  1.5\r\n  2 1 -4.0E-1",
	 2, 2, 2, I64(0, 1, 2), I32(1, 0), F32(1.5f, -0.4f)},
	/* Duplicates stay, in file order, each row sorted by column ... */
	{"duplicates.mtx",
	 "%%MatrixMarket matrix coordinate real general\n2 3 5\n"
	 "1 3 1\n1 2 2\n1 3 3\n1 2 4\n2 1 5\n",
	 2, 3, 5, I64(0, 4, 5), I32(1, 1, 2, 2, 0), F32(2, 4, 1, 3, 5)},
	/* ... and a mirror follows its entry. */
	{"duplicates_symmetric.mtx",
	 "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 2\n",
	 2, 2, 4, I64(0, 2, 4), I32(1, 1, 0, 0), F32(1, 2, 1, 2)},
	{"zero.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n",
	 0, 0, 0, I64(0), NULL, F32(0)},
	{"no_entries.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 5 0\n",
	 3, 5, 0, I64(0, 0, 0, 0), NULL, NULL},
};

static struct csr read_ok(const char *name, const char *text)
{
	struct csr g;
	struct sp_err e = {""};
	if (mtx_read(test_write(name, text), &g, &e))
		fail_msg("%s: unexpected error: %s", name, e.msg);
	return g;
}

static void test_valid(void **state)
{
	const struct valid_case *c = *state;
	struct csr g = read_ok(c->name, c->text);
	assert_csr(&g, c->nrows, c->ncols, c->nnz, c->indptr, c->indices, c->values);
	csr_free(&g);
}

/* A long unsorted row exercises the merge sort past insertion-sort runs. */
static void test_long_row_sorted(void **state)
{
	enum { N = 1000 };
	char *text = malloc(64 * (N + 2));
	int at = sprintf(text, "%%%%MatrixMarket matrix coordinate real general\n1 %d %d\n", N, N);
	for (int k = 0; k < N; k++) {
		int col = (k * 7919) % N; /* a permutation: 7919 is prime to 1000 */
		at += sprintf(text + at, "1 %d %d\n", col + 1, col);
	}
	struct csr g = read_ok("long.mtx", text);
	free(text);
	assert_int_equal(g.nnz, N);
	for (int k = 0; k < N; k++) {
		assert_int_equal(g.indices[k], k);
		assert_true(g.values[k] == (float)k);
	}
	csr_free(&g);
}

static void test_parse_from_memory(void **state)
{
	/* Not NUL-terminated: the parser must stop at len. */
	const char text[] = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n9";
	struct csr g;
	struct sp_err e;
	assert_int_equal(mtx_parse(text, sizeof text - 2, "mem", &g, &e), 0);
	assert_int_equal(g.nnz, 1);
	csr_free(&g);
	assert_int_equal(mtx_parse(text, sizeof text - 1, "mem", &g, &e), -1);
	assert_string_equal(e.msg, "mem:4: more entries than the 1 the size line declares");

	struct mtx_header h;
	assert_int_equal(mtx_parse_header(text, sizeof text - 1, "mem", &h, &e), 0);
	assert_int_equal(h.field, MTX_PATTERN);
	assert_int_equal(h.symmetry, MTX_GENERAL);
	assert_int_equal(h.rows, 2);
	assert_int_equal(h.cols, 2);
	assert_int_equal(h.entries, 1);
}

static int read_mtx(const char *path, const void *opts, struct csr *g, struct sp_err *e)
{
	return mtx_read(path, g, e);
}

/* Each malformed file: the message names the file, the line, the problem. */
static void test_malformed(void **state)
{
	static const struct {
		const char *text, *where, *problem;
	} cases[] = {
		{"", ":", "empty file, expected a %%MatrixMarket banner"},
		{"3 3 1\n1 1 1\n", ":1:", "missing %%MatrixMarket banner"},
		{"%MatrixMarket matrix coordinate real general\n", ":1:", "missing %%MatrixMarket"},
		{"%%MatrixMarket matrix coordinate real\n", ":1:", "banner must read"},
		{"%%MatrixMarket matrix coordinate real general extra\n", ":1:", "banner must read"},
		{"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", ":1:",
		 "unsupported format 'array'"},
		{"%%MatrixMarket matrix coordinate complex general\n", ":1:",
		 "unsupported field 'complex'"},
		{"%%MatrixMarket matrix coordinate real hermitian\n", ":1:",
		 "unsupported symmetry 'hermitian'"},
		{"%%MatrixMarket vector coordinate real general\n", ":1:", "unsupported object 'vector'"},
		{"%%MatrixMarket matrix coordinate double general\n", ":1:", "unknown field 'double'"},
		{"%%MatrixMarket matrix coordinate real upper\n", ":1:", "unknown symmetry 'upper'"},
		{"%%MatrixMarket matrix coordinate pattern skew-symmetric\n", ":1:",
		 "pattern matrix cannot be skew-symmetric"},
		{"%%MatrixMarket matrix coordinate real general\n% only comments\n", ":2:",
		 "missing the size line"},
		{"%%MatrixMarket matrix coordinate real general\n3 x 1\n", ":2:",
		 "field 2: expected a column count, found 'x'"},
		{"%%MatrixMarket matrix coordinate real general\n3 3\n", ":2:",
		 "size line: expected 'rows columns entries', found 2 fields"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1 1\n", ":2:",
		 "size line: more than 3 fields"},
		{"%%MatrixMarket matrix coordinate real general\n-3 3 1\n", ":2:",
		 "size line: negative number of rows (-3)"},
		{"%%MatrixMarket matrix coordinate real general\n3000000000 3 1\n", ":2:",
		 "3000000000 rows exceed the limit of 2147483647"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 2000000000000\n", ":2:",
		 "2000000000000 entries exceed the limit"},
		{"%%MatrixMarket matrix coordinate real general\n3 99999999999999999999 1\n", ":2:",
		 "field 2: '99999999999999999999' is out of range for a column count"},
		{"%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n", ":2:",
		 "symmetric matrix must be square, not 3 x 4"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n0 2 1\n", ":4:",
		 "row index 0 out of range [1, 3]"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n\n1 4 1\n", ":5:",
		 "column index 4 out of range [1, 3]"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n-1 1 1\n", ":3:",
		 "row index -1 out of range"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 b 1\n", ":3:",
		 "field 2: expected a column index, found 'b'"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", ":3:",
		 "field 3: expected a value, found 'abc'"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.5x\n", ":3:",
		 "field 3: expected a value, found '1.5x'"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 NaN\n", ":3:",
		 "field 3: 'NaN' is not a finite float"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 -inf\n", ":3:",
		 "field 3: '-inf' is not a finite float"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e39\n", ":3:",
		 "field 3: '1e39' is not a finite float"},
		{"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n", ":3:",
		 "field 3: expected an integer value, found '2.5'"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", ":3:",
		 "expected 3 fields (row column value), found 2"},
		{"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1\n", ":3:",
		 "expected 2 fields (row column), found 1"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 junk\n", ":3:",
		 "unexpected 'junk' after the entry"},
		{"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", ":3:",
		 "unexpected '1' after the entry"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n", ":4:",
		 "expected 3 entries, found 2"},
		{"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n", ":4:",
		 "more entries than the 1 the size line declares"},
		/* A size line that claims far more than the file holds fails at the
		 * end, without allocating for the claim. */
		{"%%MatrixMarket matrix coordinate real general\n9 9 1000000000000\n1 1 1\n", ":3:",
		 "expected 1000000000000 entries, found 1"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
		assert_malformed(read_mtx, NULL, "mtx", k, cases[k].text, cases[k].where,
				 cases[k].problem);
}

static void test_file_errors(void **state)
{
	struct csr g;
	struct sp_err e;
	assert_int_equal(mtx_read(test_dir, &g, &e), -1);
	assert_msg_has(&e, test_dir, ": is a directory", NULL);
	assert_int_equal(mtx_read("/no/such/file.mtx", &g, &e), -1);
	assert_string_equal(e.msg, "/no/such/file.mtx: cannot open: No such file or directory");
}

static void assert_karate(const struct csr *g)
{
	static const int degree[34] = {16, 9, 10, 6, 3, 4, 4, 4, 5, 2, 3, 1, 2, 5, 2, 2, 2,
				       2,  2, 3,  2, 2, 2, 5, 3, 3, 2, 4, 3, 4, 4, 6, 12, 17};
	struct sp_err e;
	assert_int_equal(g->nrows, 34);
	assert_int_equal(g->nnz, 156);
	assert_int_equal(csr_validate(g, CSR_CHECK_UNIQUE, "karate", &e), 0);
	for (int r = 0; r < 34; r++)
		assert_int_equal(g->indptr[r + 1] - g->indptr[r], degree[r]);
	/* 45 triangles, each counted once as u < v < w. */
	int triangles = 0;
	for (int u = 0; u < 34; u++) {
		for (int64_t a = g->indptr[u]; a < g->indptr[u + 1]; a++) {
			int v = g->indices[a];
			if (v <= u)
				continue;
			for (int64_t b = g->indptr[v]; b < g->indptr[v + 1]; b++) {
				int w = g->indices[b];
				for (int64_t c = g->indptr[u]; c < g->indptr[u + 1] && w > v; c++)
					triangles += g->indices[c] == w;
			}
		}
	}
	assert_int_equal(triangles, 45);
}

static void test_karate(void **state)
{
	struct csr m, l;
	struct sp_err e;
	struct edgelist_opts undirected = {.undirected = 1};
	if (mtx_read("data/karate.mtx", &m, &e) ||
	    edgelist_read("data/karate.csv", &undirected, &l, &e))
		fail_msg("%s (run from the repository root)", e.msg);
	assert_null(m.values);
	assert_karate(&m);
	assert_csr_same(&l, &m);
	csr_free(&m);
	csr_free(&l);
}

/* SciPy writes random matrices with mmwrite and dumps mmread(...).tocsr()
 * with sorted indices; ours must match exactly, values as (float) of the
 * double SciPy read. No SciPy at /usr/bin/python3 is a failure. */
static const char scipy_script[] =
	"import sys\n"
	"import numpy as np, scipy.io as sio, scipy.sparse as sp\n"
	"d = sys.argv[1]\n"
	"rng = np.random.default_rng(20240607)\n"
	"def rand(m, n, density):\n"
	"    a = sp.random(m, n, density=density, random_state=rng, format='coo')\n"
	"    exp = rng.uniform(-42, 37, a.nnz)\n"
	"    a.data = rng.choice([-1.0, 1.0], a.nnz) * rng.uniform(1, 10, a.nnz) * 10.0 ** exp\n"
	"    return a.tocsr()\n"
	"def ints(a):\n"
	"    a = a.copy(); a.data = rng.integers(1, 100000, a.nnz) * rng.choice([-1, 1], a.nnz)\n"
	"    return a\n"
	"r = rand(120, 120, 0.05)\n"
	"big = rand(9000, 9000, 0.0004)\n"
	"cases = {\n"
	"    'real_general': (rand(300, 200, 0.03), {}),\n"
	"    'real_wide': (rand(5, 1000, 0.2), {}),\n"
	"    'real_symmetric': (r + r.T, {'symmetry': 'symmetric'}),\n"
	"    'real_skew': (r - r.T, {'symmetry': 'skew-symmetric'}),\n"
	"    'integer_general': (ints(rand(80, 90, 0.1)), {'field': 'integer'}),\n"
	"    'integer_symmetric': (ints(r + r.T), {'field': 'integer', 'symmetry': 'symmetric'}),\n"
	"    'pattern_general': (rand(50, 70, 0.1), {'field': 'pattern'}),\n"
	"    'pattern_symmetric': (r + r.T, {'field': 'pattern', 'symmetry': 'symmetric'}),\n"
	"    'real_empty': (sp.csr_matrix((10, 12)), {}),\n"
	"    'real_tall': (rand(20000, 40, 0.02), {}),\n"
	"    'real_symmetric_big': (big + big.T, {'symmetry': 'symmetric'}),\n"
	"}\n"
	"for name, (a, kw) in cases.items():\n"
	"    sio.mmwrite(f'{d}/{name}.mtx', a, **kw)\n"
	"    b = sio.mmread(f'{d}/{name}.mtx').tocsr()\n"
	"    b.sort_indices()\n"
	"    with open(f'{d}/{name}.csr', 'w') as f:\n"
	"        f.write(f\"{b.shape[0]} {b.shape[1]} {b.nnz} {int(kw.get('field') != 'pattern')}\\n\")\n"
	"        f.write(' '.join(map(str, b.indptr)) + '\\n')\n"
	"        f.write(' '.join(map(str, b.indices)) + '\\n')\n"
	"        f.write(' '.join(repr(float(x)) for x in b.data) + '\\n')\n"
	"    print(name)\n";

static void compare_with_scipy(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.csr", test_dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("SciPy wrote no %s", path);
	long long nrows, ncols, nnz;
	int with_values;
	assert_int_equal(fscanf(f, "%lld %lld %lld %d", &nrows, &ncols, &nnz, &with_values), 4);
	struct csr want;
	struct sp_err e;
	assert_int_equal(csr_alloc(&want, nrows, ncols, nnz, with_values, name, &e), 0);
	for (long long r = 0; r <= nrows; r++)
		assert_int_equal(fscanf(f, "%" SCNd64, &want.indptr[r]), 1);
	for (long long j = 0; j < nnz; j++)
		assert_int_equal(fscanf(f, "%" SCNd32, &want.indices[j]), 1);
	for (long long j = 0; j < nnz; j++) {
		double v;
		assert_int_equal(fscanf(f, "%lf", &v), 1);
		if (with_values)
			want.values[j] = (float)v;
	}
	fclose(f);

	struct csr got;
	snprintf(path, sizeof path, "%s/%s.mtx", test_dir, name);
	if (mtx_read(path, &got, &e))
		fail_msg("%s", e.msg);
	assert_csr_same(&got, &want);
	csr_free(&got);
	csr_free(&want);
}

static void test_against_scipy(void **state)
{
	char script[512], cmd[1024];
	snprintf(script, sizeof script, "%s/write_mtx.py", test_dir);
	FILE *f = fopen(script, "w");
	assert_non_null(f);
	fputs(scipy_script, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' > /dev/null", script, test_dir);
	if (system(cmd) != 0)
		fail_msg("'%s' failed: /usr/bin/python3 needs numpy and scipy (python3-scipy)", cmd);
	static const char *const names[] = {
		"real_general",	     "real_wide",	"real_symmetric",
		"real_skew",	     "integer_general", "integer_symmetric",
		"pattern_general",   "pattern_symmetric", "real_empty",
		"real_tall",	     "real_symmetric_big",
	};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		compare_with_scipy(names[k]);
}

int main(void)
{
	enum { NVALID = sizeof valid_cases / sizeof *valid_cases };
	const struct CMUnitTest others[] = {
		cmocka_unit_test(test_long_row_sorted),
		cmocka_unit_test(test_parse_from_memory),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_karate),
		cmocka_unit_test(test_against_scipy),
	};
	enum { NOTHERS = sizeof others / sizeof *others };
	struct CMUnitTest tests[NVALID + NOTHERS];
	for (size_t k = 0; k < NVALID; k++)
		tests[k] = (struct CMUnitTest){.name = valid_cases[k].name,
					       .test_func = test_valid,
					       .initial_state = (void *)&valid_cases[k]};
	memcpy(tests + NVALID, others, sizeof others);
	return _cmocka_run_group_tests("test_mtx", tests, NVALID + NOTHERS, test_dir_setup,
				       test_dir_teardown);
}
