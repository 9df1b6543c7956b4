/* .npy: round trips of every dtype and shape, hand-built v1/v2/v3 headers,
 * every kind of malformed file, and checked dtype conversion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/half.h"
#include "formats/npy.h"
#include "testutil.h"

/* A .npy file from its parts: magic, version, length field, text, data. */
static size_t build(unsigned char *buf, int version, const char *text, const void *data,
		    size_t ndata)
{
	size_t t = strlen(text), n = 0;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)version;
	buf[7] = 0;
	n = 8;
	int lenbytes = version == 1 ? 2 : 4;
	for (int i = 0; i < lenbytes; i++)
		buf[n++] = (unsigned char)(t >> (8 * i));
	memcpy(buf + n, text, t);
	n += t;
	memcpy(buf + n, data, ndata);
	return n + ndata;
}

/* The reader fails and its message names the file and contains `what`. */
static void expect_error(const void *buf, size_t n, const char *what)
{
	struct npy_array a;
	struct sp_err e;
	const char *path = test_path("bad.npy");
	test_spit(path, buf, n);
	if (npy_read(path, &a, &e) == 0)
		fail_msg("accepted a file that should fail with '%s'", what);
	if (!strstr(e.msg, path) || !strstr(e.msg, what))
		fail_msg("message '%s' lacks '%s'", e.msg, what);
	assert_null(a.data);
	/* The memory reader says the same, under its own name. */
	assert_int_equal(npy_read_mem(buf, n, "mem.npy", &a, &e), -1);
	assert_non_null(strstr(e.msg, "mem.npy"));
	assert_non_null(strstr(e.msg, what));
}

static void expect_header_error(int version, const char *text, const char *what)
{
	unsigned char buf[1024];
	static const float data[64];
	expect_error(buf, build(buf, version, text, data, 12), what);
}

static void fill_pattern(struct npy_array *a)
{
	unsigned char *p = a->data;
	size_t n = npy_nbytes(a);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 37 + 11);
	/* Keep bools 0/1 so the array means what NumPy would read. */
	if (a->dtype == NPY_BOOL)
		for (size_t i = 0; i < n; i++)
			p[i] &= 1;
}

static void test_round_trip_dtypes_and_shapes(void **state)
{
	static const struct {
		int ndim;
		int64_t shape[3];
	} shapes[] = {{0, {0}}, {1, {5}}, {3, {2, 3, 4}}, {2, {0, 3}}, {1, {0}}};
	for (int dt = 0; dt <= NPY_BYTES; dt++) {
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
			struct npy_array a = {.dtype = dt, .ndim = shapes[s].ndim};
			struct npy_array b;
			struct sp_err e;
			a.itemsize = dt == NPY_BYTES ? 7 : npy_dtype_size(dt);
			memcpy(a.shape, shapes[s].shape, sizeof shapes[s].shape);
			assert_int_equal(npy_alloc(&a, "a", &e), 0);
			fill_pattern(&a);
			const char *path = test_path("rt.npy");
			if (npy_write(path, &a, &e))
				fail_msg("%s", e.msg);
			struct stat st;
			assert_int_equal(stat(path, &st), 0);
			/* NumPy aligns the data to 64 bytes. */
			assert_int_equal((st.st_size - npy_nbytes(&a)) % 64, 0);
			if (npy_read(path, &b, &e))
				fail_msg("%s", e.msg);
			assert_int_equal(b.dtype, a.dtype);
			assert_int_equal(b.itemsize, a.itemsize);
			assert_int_equal(b.ndim, a.ndim);
			assert_memory_equal(b.shape, a.shape, a.ndim * sizeof a.shape[0]);
			assert_int_equal(npy_nbytes(&b), npy_nbytes(&a));
			if (npy_nbytes(&a))
				assert_memory_equal(b.data, a.data, npy_nbytes(&a));
			npy_free(&a);
			npy_free(&b);
		}
	}
}

static void test_header_bytes_match_numpy(void **state)
{
	/* What np.save writes for np.zeros((3, 4), np.float32). */
	const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
	struct npy_array a = {.dtype = NPY_F4, .itemsize = 4, .ndim = 2, .shape = {3, 4}};
	char buf[NPY_HEADER_MAX];
	size_t len;
	struct sp_err e;
	assert_int_equal(npy_header_encode(&a, buf, &len, "a", &e), 0);
	assert_int_equal(len, 128);
	assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
	assert_memory_equal(buf + 10, want, strlen(want));
	for (size_t i = 10 + strlen(want); i < len - 1; i++)
		assert_int_equal(buf[i], ' ');
	assert_int_equal(buf[len - 1], '\n');
	/* 0-d: "()" and no growth padding; 1-d: "(5,)". */
	a.ndim = 0;
	assert_int_equal(npy_header_encode(&a, buf, &len, "a", &e), 0);
	assert_non_null(strstr(buf + 10, "'shape': (), }"));
	assert_int_equal(len, 128);
	a.ndim = 1;
	a.shape[0] = 5;
	a.dtype = NPY_BYTES;
	a.itemsize = 3;
	assert_int_equal(npy_header_encode(&a, buf, &len, "a", &e), 0);
	assert_non_null(
		strstr(buf + 10, "{'descr': '|S3', 'fortran_order': False, 'shape': (5,), }"));
}

static void expect_parsed(int version, const char *text, enum npy_dtype dt, size_t itemsize,
			  int ndim, const int64_t *shape, size_t ndata)
{
	unsigned char buf[1024], data[256] = {1, 2, 3};
	struct npy_array a;
	struct sp_err e;
	size_t n = build(buf, version, text, data, ndata);
	if (npy_read_mem(buf, n, "h.npy", &a, &e))
		fail_msg("v%d header %s: %s", version, text, e.msg);
	assert_int_equal(a.dtype, dt);
	assert_int_equal(a.itemsize, itemsize);
	assert_int_equal(a.ndim, ndim);
	for (int i = 0; i < ndim; i++)
		assert_int_equal(a.shape[i], shape[i]);
	assert_memory_equal(a.data, data, ndata ? ndata : 1);
	npy_free(&a);
}

static void test_hand_built_headers(void **state)
{
	const int64_t s34[] = {3, 4}, s3[] = {3};
	for (int v = 1; v <= 3; v++) {
		expect_parsed(v, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }  \n",
			      NPY_F4, 4, 2, s34, 48);
		expect_parsed(v, "{\"shape\":(3,4),\"descr\":\"<i4\",\"fortran_order\":False}",
			      NPY_I4, 4, 2, s34, 48);
		expect_parsed(
			v, " { 'fortran_order' : False , 'shape' : ( 3 , ) , 'descr' : '|u1' , } ",
			NPY_U1, 1, 1, s3, 3);
		expect_parsed(v, "{'descr': '=f8', 'fortran_order': False, 'shape': ()}\n", NPY_F8,
			      8, 0, NULL, 8);
		expect_parsed(v, "{'descr': '|i8', 'fortran_order': False, 'shape': (3,)}", NPY_I8,
			      8, 1, s3, 24);
		expect_parsed(v, "{'descr': '|S12', 'fortran_order': False, 'shape': (3,)}",
			      NPY_BYTES, 12, 1, s3, 36);
		expect_parsed(v, "{'descr': '>b1', 'fortran_order': False, 'shape': (3,)}",
			      NPY_BOOL, 1, 1, s3, 3);
		/* One dimension: Fortran order is the same bytes. */
		expect_parsed(v, "{'descr': '<f2', 'fortran_order': True, 'shape': (3,)}", NPY_F2,
			      2, 1, s3, 6);
	}
	/* Python 2 wrote long integers with an L; only versions 1 and 2 can be that old. */
	expect_parsed(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }", NPY_F4, 4,
		      2, s34, 48);
	expect_header_error(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }",
			    "expected ',' or ')' in shape");
}

static void test_bad_preamble(void **state)
{
	unsigned char buf[1024];
	size_t n =
		build(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "", 0);
	buf[1] = 'X';
	expect_error(buf, n, "not a .npy file");
	expect_error("\x93NUMPY\x01", 7, "truncated: 7 bytes is too short");
	expect_error("", 0, "truncated: 0 bytes");
	expect_error("\x93NUMPY\x02\x00\x10\x00", 10, "truncated: 10 bytes is too short");
	n = build(buf, 4, "{}", "", 0);
	expect_error(buf, n, "unsupported .npy format version 4.0");
	n = build(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "", 0);
	buf[7] = 1;
	expect_error(buf, n, "unsupported .npy format version 1.1");
	/* The length field claims more header than the file holds. */
	memcpy(buf, "\x93NUMPY\x01\x00\x00\x01{'descr'", 17);
	expect_error(buf, 17, "truncated: header claims 266 bytes, file holds 17");
	/* Version 2 length over the limit: refused before allocating. */
	memcpy(buf, "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
	expect_error(buf, 12, "header length 2147483647 is over the limit");
}

static void test_bad_data_size(void **state)
{
	unsigned char buf[1024];
	float data[3] = {1, 2, 3};
	const char *text = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
	size_t n = build(buf, 1, text, data, sizeof data);
	expect_error(buf, n - 4, "truncated: header claims 12 bytes of data, file holds 8");
	buf[n] = 0;
	expect_error(buf, n + 1, "header claims 12 bytes of data, file holds 13");
	/* Large but representable: still no allocation, just the size check. */
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000)}",
		  data, sizeof data);
	expect_error(buf, n, "truncated: header claims 80000000000 bytes of data, file holds 12");
}

static void test_bad_shapes(void **state)
{
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
			    "negative dimension in shape");
	expect_header_error(
		1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
		"shape is too large");
	expect_header_error(
		1,
		"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }",
		"shape is too large");
	expect_header_error(
		1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
		"dimension too large");
	expect_header_error(
		1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
		"more than 8 dimensions");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }",
			    "is not a tuple (a 1-tuple needs a comma)");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [3], }",
			    "shape is not a tuple");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3.5,), }",
			    "expected ',' or ')' in shape");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }",
			    "expected a dimension in shape");
}

static void test_bad_dtypes(void **state)
{
	const char *bad[] = {"<U3", "<i2", "|O", "<c8", "<f16", "|S0", "|S", "f4", "", "<f4 ",
			     "<i4x"};
	char text[200], want[64];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text,
			 "{'descr': '%s', 'fortran_order': False, 'shape': (3,)}", bad[i]);
		snprintf(want, sizeof want, "unsupported dtype '%s'", bad[i]);
		expect_header_error(1, text, want);
	}
	expect_header_error(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,)}",
			    "unsupported dtype '>f4'");
	expect_header_error(1, "{'descr': '>i8', 'fortran_order': False, 'shape': (3,)}",
			    "unsupported dtype '>i8'");
	expect_header_error(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
			    "structured arrays are not supported");
}

static void test_bad_dict_syntax(void **state)
{
	expect_header_error(
		1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }",
		"Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
			    "fortran_order is not True or False");
	expect_header_error(1, "{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}",
			    "expected ':' after 'descr' (at byte 19)");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
			    "expected ',' or '}'");
	expect_header_error(1, "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}",
			    "expected ',' or '}' (at byte 26)");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
			    "unexpected key 'x'");
	expect_header_error(
		1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
		"key 'descr' appears twice");
	expect_header_error(1, "{'descr': '<f4', 'shape': (3,)}", "no 'fortran_order' key");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False}", "no 'shape' key");
	expect_header_error(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
			    "unexpected text after the dict");
	expect_header_error(1, "('descr', '<f4')", "expected '{'");
	expect_header_error(1, "{descr: '<f4'}", "expected a quoted string");
	expect_header_error(1, "{'descr: '<f4'}", "unexpected key 'descr: ' (at byte 11)");
	expect_header_error(1, "{'descr': '<f4", "unterminated string");
	expect_header_error(1, "{'de\\x63r': '<f4'}", "unsupported character in string");
	/* Found by fuzz_gnn_folder: a key with a carriage return was quoted
	 * into the message, which then took two lines. */
	expect_header_error(1, "{'shap\re': (5,)}", "unsupported character in string");
	expect_header_error(1, "", "expected '{'");
}

static void test_paths(void **state)
{
	struct npy_array a;
	struct sp_err e;
	assert_int_equal(npy_read(test_dir, &a, &e), -1);
	assert_non_null(strstr(e.msg, "is a directory"));
	assert_non_null(strstr(e.msg, test_dir));
	const char *missing = test_path("missing.npy");
	assert_int_equal(npy_read(missing, &a, &e), -1);
	assert_non_null(strstr(e.msg, missing));
	assert_non_null(strstr(e.msg, "No such file"));

	/* An output folder that does not exist: an error and no file anywhere. */
	float v[2] = {1, 2};
	a = (struct npy_array){.dtype = NPY_F4, .itemsize = 4, .ndim = 1, .shape = {2}, .data = v};
	const char *out = test_path("nodir/out.npy");
	assert_int_equal(npy_write(out, &a, &e), -1);
	assert_non_null(strstr(e.msg, out));
	assert_int_equal(access(out, F_OK), -1);
	/* A bad array is refused, and the temporary is gone. */
	a.itemsize = 8;
	out = test_path("bad-out.npy");
	assert_int_equal(npy_write(out, &a, &e), -1);
	assert_non_null(strstr(e.msg, "itemsize 8 does not fit dtype f4"));
	assert_int_equal(access(out, F_OK), -1);
	assert_false(test_dir_has_temporaries());
	a.itemsize = 4;
	a.shape[0] = -1;
	assert_int_equal(npy_write(out, &a, &e), -1);
	assert_non_null(strstr(e.msg, "negative dimension -1"));
}

static void convert_to(const struct npy_array *src, enum npy_dtype to, void *dst,
		       const char *what)
{
	struct sp_err e;
	int rc = npy_convert(src, to, dst, "c.npy", &e);
	if (what == NULL && rc)
		fail_msg("%s", e.msg);
	if (what && (rc == 0 || !strstr(e.msg, what) || !strstr(e.msg, "c.npy")))
		fail_msg("converting %s to %s: '%s', wanted '%s'", npy_dtype_name(src->dtype),
			 npy_dtype_name(to), rc ? e.msg : "success", what);
}

static void test_convert(void **state)
{
	int64_t i8[4] = {0, -5, 2147483647, 2147483648LL};
	struct npy_array a = {.dtype = NPY_I8, .itemsize = 8, .ndim = 1, .shape = {3}, .data = i8};
	int32_t i4[4];
	float f4[4];
	double f8[4];
	uint8_t u1[4];
	uint16_t f2[4];
	convert_to(&a, NPY_I4, i4, NULL);
	assert_true(i4[0] == 0 && i4[1] == -5 && i4[2] == 2147483647);
	a.shape[0] = 4;
	convert_to(&a, NPY_I4, i4, "element 3 (2147483648) does not fit in i4");
	convert_to(&a, NPY_U1, u1, "element 1 (-5) does not fit in u1");
	convert_to(&a, NPY_BOOL, u1, "element 1 (-5) does not fit in bool");
	convert_to(&a, NPY_F8, f8, NULL);
	assert_true(f8[1] == -5 && f8[3] == 2147483648.0);

	double d[4] = {1, -2, 3.5, NAN};
	a = (struct npy_array){.dtype = NPY_F8, .itemsize = 8, .ndim = 1, .shape = {2}, .data = d};
	convert_to(&a, NPY_I8, i8, NULL);
	assert_true(i8[0] == 1 && i8[1] == -2);
	a.shape[0] = 3;
	convert_to(&a, NPY_I4, i4, "element 2 (3.5) is not an integer");
	d[2] = 1e30;
	convert_to(&a, NPY_I8, i8, "element 2 (1e+30) is out of range");
	convert_to(&a, NPY_I4, i4, "is out of range");
	d[2] = 1e300;
	convert_to(&a, NPY_F4, f4, "element 2 (1.0000000000000001e+300) overflows f4");
	d[2] = 65520;
	convert_to(&a, NPY_F2, f2, "element 2 (65520) overflows f2");
	d[2] = 65504;
	convert_to(&a, NPY_F2, f2, NULL);
	assert_int_equal(f2[2], 0x7bff);
	a.shape[0] = 4;
	convert_to(&a, NPY_I4, i4, "element 3 (nan) is not an integer");
	d[2] = INFINITY;
	a.shape[0] = 3;
	convert_to(&a, NPY_I4, i4, "element 2 (inf) is not an integer");
	convert_to(&a, NPY_F4, f4, NULL); /* infinity stays infinity */
	assert_true(isinf(f4[2]));

	uint8_t b[3] = {1, 0, 1};
	a = (struct npy_array){
		.dtype = NPY_BOOL, .itemsize = 1, .ndim = 1, .shape = {3}, .data = b};
	convert_to(&a, NPY_F4, f4, NULL);
	assert_true(f4[0] == 1 && f4[1] == 0 && f4[2] == 1);
	convert_to(&a, NPY_I8, i8, NULL);
	assert_true(i8[0] == 1 && i8[1] == 0);

	uint16_t h[2] = {0x3c00, 0xc100};
	a = (struct npy_array){.dtype = NPY_F2, .itemsize = 2, .ndim = 1, .shape = {2}, .data = h};
	convert_to(&a, NPY_F4, f4, NULL);
	assert_true(f4[0] == 1 && f4[1] == -2.5);
	convert_to(&a, NPY_I4, i4, "element 1 (-2.5) is not an integer");

	a = (struct npy_array){.dtype = NPY_BYTES, .itemsize = 3, .ndim = 0, .data = "csr"};
	convert_to(&a, NPY_I8, i8, "cannot convert S to i8");

	/* In place; a block boundary inside the array. */
	enum { N = 5000 };
	struct npy_array big = {.dtype = NPY_I4, .itemsize = 4, .ndim = 1, .shape = {N}};
	struct sp_err e;
	assert_int_equal(npy_alloc(&big, "big", &e), 0);
	for (int i = 0; i < N; i++)
		((int32_t *)big.data)[i] = i - 7;
	assert_int_equal(npy_cast(&big, NPY_F4, "big", &e), 0);
	assert_int_equal(big.dtype, NPY_F4);
	assert_int_equal(big.itemsize, 4);
	for (int i = 0; i < N; i++)
		assert_true(((float *)big.data)[i] == i - 7);
	((float *)big.data)[4500] = 0.25f;
	assert_int_equal(npy_cast(&big, NPY_I8, "big", &e), -1);
	assert_non_null(strstr(e.msg, "big: element 4500 (0.25) is not an integer"));
	assert_int_equal(big.dtype, NPY_F4); /* unchanged on failure */
	npy_free(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_dtypes_and_shapes),
		cmocka_unit_test(test_header_bytes_match_numpy),
		cmocka_unit_test(test_hand_built_headers),
		cmocka_unit_test(test_bad_preamble),
		cmocka_unit_test(test_bad_data_size),
		cmocka_unit_test(test_bad_shapes),
		cmocka_unit_test(test_bad_dtypes),
		cmocka_unit_test(test_bad_dict_syntax),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_convert),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
