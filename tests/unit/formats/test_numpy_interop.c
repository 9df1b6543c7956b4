/* Cross-checks with the real NumPy and SciPy (Debian's, in /usr/bin/python3):
 * they write, we read and check the values against formulas both sides
 * compute; we write, they read and compare with their own files.
 * tests/interop/make_inputs.py makes the inputs, check_outputs.py checks
 * ours; make_gnn_dataset.py writes GNN datasets (a folder and OGB's raw
 * layout, gzipped by Python) for gnn_data_load. Run from the repository
 * root (as `make test` does). Without NumPy or SciPy the tests fail: CI
 * must install python3-numpy and python3-scipy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sparse/csr_npz.h"
#include "gnn/gnn_data.h"
#include "core/half.h"
#include "formats/npy.h"
#include "formats/npz.h"
#include "testutil.h"

#define PYTHON "/usr/bin/python3"
#define SCRIPTS "tests/interop"

static void python(const char *script, const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s %s/%s %s %s 1>&2", PYTHON, SCRIPTS, script, args, test_dir);
	int rc = system(cmd);
	if (rc != 0)
		fail_msg("'%s' failed (status %d)", cmd, rc);
}

/* The formulas of make_inputs.py, element i of each kind. */
static const char *const kinds[] = {"b1", "u1", "i4", "i8", "f2", "f4", "f8", "S5"};
static const enum npy_dtype kind_dtypes[] = {NPY_BOOL, NPY_U1, NPY_I4, NPY_I8,
					     NPY_F2,   NPY_F4, NPY_F8, NPY_BYTES};

static void expected(enum npy_dtype dt, int64_t i, unsigned char *out)
{
	union {
		uint8_t u1;
		int32_t i4;
		int64_t i8;
		uint16_t f2;
		float f4;
		double f8;
		char s[6];
	} v;
	memset(&v, 0, sizeof v);
	switch (dt) {
	case NPY_BOOL:
		v.u1 = i % 3 == 0;
		break;
	case NPY_U1:
		v.u1 = (uint8_t)((i * 37 + 11) % 256);
		break;
	case NPY_I4:
		v.i4 = (int32_t)((i * 7919) % 2001 - 1000);
		break;
	case NPY_I8:
		v.i8 = (i - 12) * 3000000000LL;
		break;
	case NPY_F2:
		v.f2 = half_from_float((float)((i - 12) * 0.375));
		break;
	case NPY_F4:
		v.f4 = (float)((i - 12) / 8.0 + 0.1);
		break;
	case NPY_F8:
		v.f8 = (i - 12) / 3.0;
		break;
	default:
		snprintf(v.s, sizeof v.s, "s%d", (int)i);
	}
	memcpy(out, &v, dt == NPY_BYTES ? 5 : npy_dtype_size(dt));
}

static void expect_formula(const struct npy_array *a, enum npy_dtype dt, int ndim,
			   const int64_t *shape, const char *what)
{
	if (a->dtype != dt || a->ndim != ndim)
		fail_msg("%s: dtype %s, %d dimensions", what, npy_dtype_name(a->dtype), a->ndim);
	for (int d = 0; d < ndim; d++)
		assert_int_equal(a->shape[d], shape[d]);
	for (int64_t i = 0; i < npy_count(a); i++) {
		unsigned char want[8];
		expected(dt, i, want);
		if (memcmp((char *)a->data + i * a->itemsize, want, a->itemsize) != 0)
			fail_msg("%s: element %lld differs", what, (long long)i);
	}
}

static const int64_t shape_3d[] = {2, 3, 4}, shape_1d[] = {5};

static void test_python_has_numpy_and_scipy(void **state)
{
	if (access(SCRIPTS "/make_inputs.py", R_OK) != 0)
		fail_msg("%s/make_inputs.py not found: run from the repository root", SCRIPTS);
	if (system(PYTHON " -c 'import numpy, scipy.sparse' 1>&2") != 0)
		fail_msg("%s cannot import numpy and scipy: apt-get install python3-numpy "
			 "python3-scipy", PYTHON);
	python("make_inputs.py", "");
}

static void test_npy_both_ways(void **state)
{
	static const char *const dims[] = {"0d", "1d", "3d"};
	static const int ndims[] = {0, 1, 3};
	struct npy_array a;
	struct sp_err e;
	for (int k = 0; k < 8; k++) {
		for (int s = 0; s < 3; s++) {
			const char *in = test_path("%s_%s.npy", kinds[k], dims[s]);
			if (npy_read(in, &a, &e))
				fail_msg("%s", e.msg);
			expect_formula(&a, kind_dtypes[k], ndims[s], s == 1 ? shape_1d : shape_3d,
				       in);
			if (npy_write(test_path("out_%s_%s.npy", kinds[k], dims[s]), &a, &e))
				fail_msg("%s", e.msg);
			npy_free(&a);
		}
	}
	for (int v = 2; v <= 3; v++) {
		if (npy_read(test_path("f4_v%d.npy", v), &a, &e))
			fail_msg("%s", e.msg);
		expect_formula(&a, NPY_F4, 3, shape_3d, "f4 v2/v3");
		assert_int_equal(npy_write(test_path("out_f4_v%d.npy", v), &a, &e), 0);
		npy_free(&a);
		if (npy_read(test_path("i8_v%d.npy", v), &a, &e))
			fail_msg("%s", e.msg);
		expect_formula(&a, NPY_I8, 1, shape_1d, "i8 v2/v3");
		assert_int_equal(npy_write(test_path("out_i8_v%d.npy", v), &a, &e), 0);
		npy_free(&a);
	}
	python("check_outputs.py", "npy");
}

static void read_savez(const char *path, int method, struct npy_array *m)
{
	struct npz z;
	struct sp_err e;
	if (npz_open(&z, path, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(z.zip.count, 3);
	for (size_t i = 0; i < z.zip.count; i++)
		assert_int_equal(z.zip.entries[i].method, method);
	/* Out of order: each member is found and read on its own. */
	if (npz_read(&z, "c", &m[2], &e) || npz_read(&z, "a", &m[0], &e) ||
	    npz_read(&z, "b", &m[1], &e))
		fail_msg("%s", e.msg);
	npz_close(&z);
	expect_formula(&m[0], NPY_F4, 3, shape_3d, "savez a");
	expect_formula(&m[1], NPY_I8, 1, shape_1d, "savez b");
	expect_formula(&m[2], NPY_BYTES, 0, NULL, "savez c");
}

static void write_ours(const char *name, int compress, int zip64, const struct npy_array *m)
{
	struct npz_writer w;
	struct sp_err e;
	if (npz_writer_open(&w, test_path("%s", name), compress, &e))
		fail_msg("%s", e.msg);
	if (zip64)
		w.zip.limit32 = w.zip.limit16 = 0;
	if (npz_writer_add(&w, "a", &m[0], &e) || npz_writer_add(&w, "b", &m[1], &e) ||
	    npz_writer_add(&w, "c", &m[2], &e) || npz_writer_commit(&w, &e))
		fail_msg("%s", e.msg);
}

static void test_npz_both_ways(void **state)
{
	struct npy_array stored[3], deflated[3];
	read_savez(test_path("savez.npz"), ZIP_STORED, stored);
	read_savez(test_path("savez_compressed.npz"), ZIP_DEFLATED, deflated);
	write_ours("out_stored.npz", 0, 0, stored);
	write_ours("out_deflated.npz", 1, 0, deflated);
	write_ours("out_zip64.npz", 1, 1, deflated);
	for (int i = 0; i < 3; i++) {
		npy_free(&stored[i]);
		npy_free(&deflated[i]);
	}
	python("check_outputs.py", "npz");
}

static void expect_reference(const struct csr *g, const char *what)
{
	struct npy_array ip, ix, dv;
	struct sp_err e;
	if (npy_read(test_path("ref_indptr.npy"), &ip, &e) ||
	    npy_read(test_path("ref_indices.npy"), &ix, &e) ||
	    npy_read(test_path("ref_data.npy"), &dv, &e))
		fail_msg("%s", e.msg);
	if (g->nrows != 50 || g->ncols != 40 || g->nnz != ix.shape[0])
		fail_msg("%s: %lld x %lld with %lld entries", what, (long long)g->nrows,
			 (long long)g->ncols, (long long)g->nnz);
	assert_memory_equal(g->indptr, ip.data, npy_nbytes(&ip));
	assert_memory_equal(g->indices, ix.data, npy_nbytes(&ix));
	assert_memory_equal(g->values, dv.data, npy_nbytes(&dv));
	npy_free(&ip);
	npy_free(&ix);
	npy_free(&dv);
}

static void test_scipy_matrices_both_ways(void **state)
{
	static const char *const names[] = {"csr.npz", "csr_raw.npz", "coo.npz", "coo_raw.npz",
					    "csr_f8_i8.npz"};
	struct csr g;
	struct sp_err e;
	for (int i = 0; i < 5; i++) {
		const char *path = test_path("%s", names[i]);
		if (csr_npz_load(path, &g, &e))
			fail_msg("%s", e.msg);
		expect_reference(&g, path);
		int64_t *ip, nrows, ncols, nnz;
		if (csr_npz_load_indptr(path, &ip, &nrows, &ncols, &nnz, &e))
			fail_msg("%s", e.msg);
		assert_true(nrows == g.nrows && ncols == g.ncols && nnz == g.nnz);
		assert_memory_equal(ip, g.indptr, (nrows + 1) * sizeof *ip);
		free(ip);
		csr_free(&g);
	}
	if (csr_npz_load(test_path("csr.npz"), &g, &e))
		fail_msg("%s", e.msg);
	if (csr_npz_save(test_path("out_csr_0.npz"), &g, 0, &e) ||
	    csr_npz_save(test_path("out_csr_1.npz"), &g, 1, &e))
		fail_msg("%s", e.msg);
	csr_free(&g);
	python("check_outputs.py", "sparse");
}

/* What make_gnn_dataset.py writes, by its formulas: node i's edges go to
 * (7i + 3) mod 50 and, in the folder, to (13i + 1) mod 50; the OGB folder's
 * are made symmetric. */
static void expect_gnn_dataset(const struct gnn_dataset *d, int ogb)
{
	enum { N = 50 };
	static unsigned char adj[N][N];
	memset(adj, 0, sizeof adj);
	for (int i = 0; i < N; i++) {
		adj[i][(7 * i + 3) % N] = 1;
		if (ogb)
			adj[(7 * i + 3) % N][i] = 1;
		else
			adj[i][(13 * i + 1) % N] = 1;
	}
	assert_int_equal(d->n, N);
	for (int i = 0, j = 0; i < N; i++) {
		int64_t e = d->graph.indptr[i];
		for (j = 0; j < N; j++)
			if (adj[i][j])
				assert_int_equal(d->graph.indices[e++], j);
		assert_int_equal(d->graph.indptr[i + 1], e);
	}
	assert_int_equal(d->nfeat, 6);
	for (int i = 0; i < N; i++)
		for (int k = 0; k < 6; k++)
			assert_true(d->features[i * 6 + k] == (float)((i - 25) / 4.0 + k / 8.0));
	assert_int_equal(d->nclass, 7);
	for (int i = 0; i < N; i++) {
		assert_int_equal(d->labels[i], i % 7);
		assert_int_equal(d->split[i], i % 10 < 6 ? GNN_TRAIN : i % 10 < 8 ? GNN_VAL : GNN_TEST);
	}
}

static void test_gnn_datasets_from_python(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	python("make_gnn_dataset.py", "");
	if (gnn_data_load(test_path("gnn_folder"), &d, &e))
		fail_msg("%s", e.msg);
	expect_gnn_dataset(&d, 0);
	gnn_data_free(&d);
	if (gnn_data_load(test_path("gnn_ogb"), &d, &e))
		fail_msg("%s", e.msg);
	expect_gnn_dataset(&d, 1);
	gnn_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_has_numpy_and_scipy),
		cmocka_unit_test(test_npy_both_ways),
		cmocka_unit_test(test_npz_both_ways),
		cmocka_unit_test(test_scipy_matrices_both_ways),
		cmocka_unit_test(test_gnn_datasets_from_python),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
