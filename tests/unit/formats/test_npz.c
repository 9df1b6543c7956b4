/* ZIP and .npz: round trips stored and deflated, streaming members, ZIP64
 * records, and every kind of damaged archive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bytes.h"
#include "formats/npz.h"
#include "testutil.h"
#include "formats/zipfile.h"

static size_t find_bytes(const unsigned char *buf, size_t n, const char *what, int nth)
{
	size_t len = strlen(what);
	for (size_t i = 0; i + len <= n; i++)
		if (memcmp(buf + i, what, len) == 0 && nth-- == 0)
			return i;
	fail_msg("'%s' not found", what);
	return 0;
}

/* Offsets of a member's local header and central directory entry: its name
 * appears first in the one, then in the other. */
static size_t local_header(const unsigned char *buf, size_t n, const char *name)
{
	return find_bytes(buf, n, name, 0) - 30;
}

static size_t central_entry(const unsigned char *buf, size_t n, const char *name)
{
	return find_bytes(buf, n, name, 1) - 46;
}

/* Arrays for the round trips. */
static float f4[2][3][4];
static int64_t i8[5] = {-1, 0, 1, INT64_MAX, INT64_MIN};
static struct npy_array arr_f4 = {NPY_F4, 4, 3, {2, 3, 4}, f4};
static struct npy_array arr_i8 = {NPY_I8, 8, 1, {5}, i8};
static struct npy_array arr_s3 = {NPY_BYTES, 3, 0, {0}, "csr"};
static struct npy_array arr_empty = {NPY_BOOL, 1, 2, {0, 7}, ""};

static void write_sample(const char *path, int compress)
{
	struct npz_writer w;
	struct sp_err e;
	for (int i = 0; i < 24; i++)
		(&f4[0][0][0])[i] = (float)i / 4 - 2;
	if (npz_writer_open(&w, path, compress, &e) || npz_writer_add(&w, "alpha", &arr_f4, &e) ||
	    npz_writer_add(&w, "beta", &arr_i8, &e) || npz_writer_add(&w, "format", &arr_s3, &e) ||
	    npz_writer_add(&w, "empty", &arr_empty, &e) || npz_writer_commit(&w, &e))
		fail_msg("%s", e.msg);
}

static void expect_same(const struct npy_array *a, const struct npy_array *b)
{
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->itemsize, b->itemsize);
	assert_int_equal(a->ndim, b->ndim);
	assert_memory_equal(a->shape, b->shape, a->ndim * sizeof a->shape[0]);
	if (npy_nbytes(a))
		assert_memory_equal(a->data, b->data, npy_nbytes(a));
}

static void read_sample(const char *path)
{
	struct npz z;
	struct npy_array a;
	struct sp_err e;
	const struct npy_array *want[] = {&arr_f4, &arr_i8, &arr_s3, &arr_empty};
	const char *names[] = {"alpha", "beta", "format", "empty"};
	if (npz_open(&z, path, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(z.zip.count, 4);
	/* In reverse, so reading one member never depends on the last. */
	for (int i = 3; i >= 0; i--) {
		assert_true(npz_has(&z, names[i]));
		if (npz_read(&z, names[i], &a, &e))
			fail_msg("%s", e.msg);
		expect_same(&a, want[i]);
		npy_free(&a);
		assert_int_equal(npz_member_shape(&z, names[i], &a, &e), 0);
		assert_null(a.data);
		assert_int_equal(a.ndim, want[i]->ndim);
		assert_int_equal(a.dtype, want[i]->dtype);
	}
	assert_false(npz_has(&z, "gamma"));
	assert_false(npz_has(&z, "alpha.npy"));
	assert_int_equal(npz_read(&z, "gamma", &a, &e), -1);
	char want_msg[300];
	snprintf(want_msg, sizeof want_msg, "%s: member 'gamma' is missing", path);
	assert_string_equal(e.msg, want_msg);
	assert_int_equal(npz_member_shape(&z, "gamma", &a, &e), -1);
	npz_close(&z);
}

static void test_round_trip(void **state)
{
	for (int compress = 0; compress <= 1; compress++) {
		const char *path = test_path("%s", compress ? "deflated.npz" : "stored.npz");
		write_sample(path, compress);
		read_sample(path);
		/* The same arrays give the same bytes. */
		size_t n1, n2;
		unsigned char *a = test_slurp(path, &n1);
		write_sample(test_path("again.npz"), compress);
		unsigned char *b = test_slurp(test_path("again.npz"), &n2);
		assert_int_equal(n1, n2);
		assert_memory_equal(a, b, n1);
		free(a);
		free(b);
	}
}

static void test_large_deflated_member(void **state)
{
	/* Several inflate input buffers' worth, read in pieces that straddle them. */
	enum { N = 3 << 20 };
	unsigned char *data = malloc(N), *back = malloc(N);
	uint32_t x = 1;
	for (size_t i = 0; i < N; i++) {
		x = x * 1664525 + 1013904223;
		data[i] = (unsigned char)((x >> 24) & 0x0f); /* compressible, not trivially */
	}
	struct zip_writer w;
	struct sp_err e;
	const char *path = test_path("raw.zip");
	assert_int_equal(zip_writer_open(&w, path, &e), 0);
	for (int deflate = 0; deflate <= 1; deflate++) {
		assert_int_equal(zip_writer_begin(&w, deflate ? "d.bin" : "s.bin", deflate, &e), 0);
		for (size_t at = 0; at < N; at += N / 3)
			assert_int_equal(zip_writer_write(&w, data + at, N / 3, &e), 0);
		assert_int_equal(zip_writer_end(&w, &e), 0);
	}
	assert_int_equal(zip_writer_commit(&w, &e), 0);

	struct zip_reader z;
	struct zip_member m;
	assert_int_equal(zip_open(&z, path, &e), 0);
	for (int deflate = 0; deflate <= 1; deflate++) {
		const struct zip_entry *ent = zip_find(&z, deflate ? "d.bin" : "s.bin");
		assert_non_null(ent);
		assert_int_equal(ent->method, deflate ? ZIP_DEFLATED : ZIP_STORED);
		assert_true(deflate ? ent->csize < N * 6 / 10 : ent->csize == N);
		memset(back, 0xff, N);
		assert_int_equal(zip_member_open(&m, &z, ent, "label", &e), 0);
		size_t pieces[] = {1,	   100,	    262143,
				   262145, 1 << 20, N - 2 - 100 - 262143 - 262145 - (1 << 20)};
		size_t at = 0;
		for (int i = 0; i < 6; i++) {
			if (zip_member_read(&m, back + at, pieces[i], &e))
				fail_msg("%s", e.msg);
			at += pieces[i];
		}
		assert_int_equal(zip_member_read(&m, back + at, 2, &e), -1);
		assert_string_equal(e.msg,
				    "label: member holds 3145728 bytes, reading 2 at byte 3145727");
		if (zip_member_read(&m, back + at, 1, &e))
			fail_msg("%s", e.msg);
		assert_int_equal(zip_member_finish(&m, &e), 0);
		zip_member_close(&m);
		assert_memory_equal(back, data, N);
	}
	zip_close(&z);
	free(data);
	free(back);
}

static void test_zip64_records(void **state)
{
	/* Lowered limits make the writer use every ZIP64 field a 4 GiB archive would. */
	const char *path = test_path("zip64.npz");
	struct npz_writer w;
	struct sp_err e;
	assert_int_equal(npz_writer_open(&w, path, 1, &e), 0);
	w.zip.limit32 = 0;
	w.zip.limit16 = 0;
	assert_int_equal(npz_writer_add(&w, "alpha", &arr_f4, &e), 0);
	assert_int_equal(npz_writer_add(&w, "beta", &arr_i8, &e), 0);
	assert_int_equal(npz_writer_commit(&w, &e), 0);
	size_t n;
	unsigned char *buf = test_slurp(path, &n);
	size_t eocd = n - 22;
	assert_memory_equal(buf + eocd, "PK\5\6", 4);
	assert_int_equal(le16(buf + eocd + 10), 0xffff);
	assert_int_equal(le32(buf + eocd + 16), 0xffffffff);
	assert_memory_equal(buf + eocd - 20, "PK\6\7", 4);
	size_t cd = central_entry(buf, n, "beta.npy");
	assert_int_equal(le32(buf + cd + 20), 0xffffffff);
	assert_int_equal(le32(buf + cd + 42), 0xffffffff);
	free(buf);

	struct npz z;
	struct npy_array a;
	assert_int_equal(npz_open(&z, path, &e), 0);
	assert_int_equal(npz_read(&z, "beta", &a, &e), 0);
	expect_same(&a, &arr_i8);
	npy_free(&a);
	assert_int_equal(npz_read(&z, "alpha", &a, &e), 0);
	expect_same(&a, &arr_f4);
	npy_free(&a);
	npz_close(&z);
}

static void test_writer_errors(void **state)
{
	struct npz_writer w;
	struct sp_err e;
	const char *path = test_path("nodir/x.npz");
	assert_int_equal(npz_writer_open(&w, path, 0, &e), -1);
	assert_non_null(strstr(e.msg, path));
	assert_int_equal(access(path, F_OK), -1);

	path = test_path("w.npz");
	assert_int_equal(npz_writer_open(&w, path, 1, &e), 0);
	assert_int_equal(npz_writer_add(&w, "alpha", &arr_f4, &e), 0);
	assert_int_equal(npz_writer_add(&w, "alpha", &arr_f4, &e), -1);
	assert_non_null(strstr(e.msg, "member 'alpha.npy' added twice"));
	npz_writer_abort(&w);
	assert_int_equal(access(path, F_OK), -1);

	assert_int_equal(npz_writer_open(&w, path, 0, &e), 0);
	assert_int_equal(npz_writer_begin(&w, "beta", &arr_i8, &e), 0);
	assert_int_equal(npz_writer_write(&w, i8, 16, &e), 0);
	assert_int_equal(npz_writer_end(&w, &e), -1);
	assert_non_null(
		strstr(e.msg, "w.npz: member 'beta': 24 bytes short of what its header says"));
	assert_int_equal(npz_writer_write(&w, i8, 32, &e), -1);
	assert_non_null(strstr(e.msg, "member 'beta': more data than its header says"));
	npz_writer_abort(&w);

	struct npy_array bad = arr_i8;
	bad.shape[0] = -2;
	assert_int_equal(npz_writer_open(&w, path, 0, &e), 0);
	assert_int_equal(npz_writer_add(&w, "beta", &bad, &e), -1);
	assert_non_null(strstr(e.msg, "w.npz: member 'beta': negative dimension -2"));
	npz_writer_abort(&w);
	assert_int_equal(access(path, F_OK), -1);
	assert_false(test_dir_has_temporaries());
}

/* Damage a copy of `src` with fn, then expect reading member `name` to fail
 * with a message naming the file and containing `what`. */
static void expect_damage(const char *src, const char *name, const char *what,
			  void (*fn)(unsigned char *buf, size_t *n))
{
	size_t n;
	unsigned char *buf = test_slurp(src, &n);
	fn(buf, &n);
	const char *path = test_path("damaged.npz");
	test_spit(path, buf, n);
	free(buf);
	struct npz z;
	struct npy_array a;
	struct sp_err e;
	int rc = npz_open(&z, path, &e);
	if (rc == 0) {
		rc = npz_read(&z, name, &a, &e);
		npz_close(&z);
		if (rc == 0)
			npy_free(&a);
	}
	if (rc == 0)
		fail_msg("damaged archive read without error (wanted '%s')", what);
	if (!strstr(e.msg, path) || !strstr(e.msg, what))
		fail_msg("message '%s' lacks '%s'", e.msg, what);
}

static void corrupt_deflate(unsigned char *b, size_t *n)
{
	size_t lh = local_header(b, *n, "alpha.npy");
	b[lh + 30 + 9 + 20] = 0xff; /* first block header: reserved type 3 */
}

static void corrupt_deflate_late(unsigned char *b, size_t *n)
{
	size_t lh = local_header(b, *n, "alpha.npy"), cd = central_entry(b, *n, "alpha.npy");
	uint32_t csize = le32(b + cd + 20);
	for (size_t i = csize / 2; i < csize; i++)
		b[lh + 30 + 9 + 20 + i] ^= 0x5a;
}

static void flip_stored_byte(unsigned char *b, size_t *n)
{
	size_t lh = local_header(b, *n, "beta.npy");
	b[lh + 30 + 8 + 20 + 128 + 3] ^= 1; /* in the data, past the .npy header */
}

static void truncate_half(unsigned char *b, size_t *n)
{
	*n /= 2;
}

static void drop_last_byte(unsigned char *b, size_t *n)
{
	(*n)--;
}

static void shorten_deflated(unsigned char *b, size_t *n)
{
	size_t cd = central_entry(b, *n, "alpha.npy");
	le_store(b + cd + 20, le32(b + cd + 20) / 2, 4);
}

static void grow_stored(unsigned char *b, size_t *n)
{
	size_t cd = central_entry(b, *n, "empty.npy");
	le_store(b + cd + 20, le32(b + cd + 20) + 100, 4);
	le_store(b + cd + 24, le32(b + cd + 24) + 100, 4);
}

static void mismatch_stored_sizes(unsigned char *b, size_t *n)
{
	size_t cd = central_entry(b, *n, "beta.npy");
	le_store(b + cd + 24, le32(b + cd + 24) + 1, 4);
}

static void break_local_signature(unsigned char *b, size_t *n)
{
	b[local_header(b, *n, "beta.npy")] = 'X';
}

static void rename_local(unsigned char *b, size_t *n)
{
	b[local_header(b, *n, "beta.npy") + 30] = 'z';
}

static void break_central_signature(unsigned char *b, size_t *n)
{
	b[central_entry(b, *n, "alpha.npy")] = 'X';
}

static void set_encrypted(unsigned char *b, size_t *n)
{
	b[central_entry(b, *n, "beta.npy") + 8] |= 1;
}

static void set_method_12(unsigned char *b, size_t *n)
{
	b[central_entry(b, *n, "alpha.npy") + 10] = 12;
}

static void absurd_usize(unsigned char *b, size_t *n)
{
	le_store(b + central_entry(b, *n, "alpha.npy") + 24, 0xfffffff0, 4);
}

static void bad_crc(unsigned char *b, size_t *n)
{
	b[central_entry(b, *n, "alpha.npy") + 16] ^= 0x10;
}

static void wrong_npy_magic(unsigned char *b, size_t *n)
{
	b[local_header(b, *n, "beta.npy") + 30 + 8 + 20 + 1] = 'X';
}

static void directory_past_end(unsigned char *b, size_t *n)
{
	size_t eocd = *n - 22;
	le_store(b + eocd + 16, le32(b + eocd + 16) + 1000, 4);
}

static void too_many_entries(unsigned char *b, size_t *n)
{
	size_t eocd = *n - 22;
	le_store(b + eocd + 8, 5000, 2);
	le_store(b + eocd + 10, 5000, 2);
}

static void test_damaged_archives(void **state)
{
	static const struct {
		int deflated;
		const char *member, *what;
		void (*damage)(unsigned char *buf, size_t *n);
	} cases[] = {
		{1, "alpha", "member 'alpha': corrupt deflate stream (at byte 59)",
		 corrupt_deflate},
		{1, "alpha", "member 'alpha': ", corrupt_deflate_late},
		{1, "alpha", "member 'alpha': deflate stream is truncated (at byte",
		 shorten_deflated},
		{1, "alpha", "member 'alpha': CRC-32 mismatch (directory says", bad_crc},
		{1, "alpha", "member 'alpha': unsupported compression method 12", set_method_12},
		{1, "alpha", "member 'alpha': directory claims 4294967280 bytes from",
		 absurd_usize},
		{0, "beta", "member 'beta': CRC-32 mismatch", flip_stored_byte},
		{0, "beta",
		 "member 'beta': stored member is 168 bytes but the directory says 169 "
		 "uncompressed",
		 mismatch_stored_sizes},
		{0, "empty", "member 'empty': data (228 bytes at byte", grow_stored},
		{0, "beta", "member 'beta': no local header at byte", break_local_signature},
		{0, "beta", "member 'beta': local header at byte", rename_local},
		{0, "beta", "member 'beta': encrypted members are not supported", set_encrypted},
		{0, "beta", "member 'beta': not a .npy file", wrong_npy_magic},
		{0, "alpha", "central directory entry 0 is corrupt (at byte",
		 break_central_signature},
		{0, "alpha", "no end-of-central-directory record (not a zip file, or truncated)",
		 truncate_half},
		{0, "alpha", "no end-of-central-directory record", drop_last_byte},
		{0, "alpha", "overruns its end record", directory_past_end},
		{0, "alpha", "5000 members cannot fit a central directory", too_many_entries},
	};
	char stored[512], deflated[512];
	snprintf(stored, sizeof stored, "%s", test_path("s.npz"));
	snprintf(deflated, sizeof deflated, "%s", test_path("d.npz"));
	write_sample(stored, 0);
	write_sample(deflated, 1);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_damage(cases[i].deflated ? deflated : stored, cases[i].member, cases[i].what,
			      cases[i].damage);
}

static void test_zip_member_sizes(void **state)
{
	/* A raw deflated member whose directory sizes are wrong either way. */
	char data[1000];
	for (int i = 0; i < 1000; i++)
		data[i] = (char)(i % 7);
	struct zip_writer w;
	struct sp_err e;
	const char *path = test_path("sizes.zip");
	assert_int_equal(zip_writer_open(&w, path, &e), 0);
	assert_int_equal(zip_writer_begin(&w, "raw.bin", 1, &e), 0);
	assert_int_equal(zip_writer_write(&w, data, sizeof data, &e), 0);
	assert_int_equal(zip_writer_end(&w, &e), 0);
	assert_int_equal(zip_writer_commit(&w, &e), 0);
	size_t n;
	unsigned char *orig = test_slurp(path, &n), *buf = malloc(n);
	size_t cd = central_entry(orig, n, "raw.bin");
	char back[2000];
	for (int delta = -10; delta <= 10; delta += 20) {
		memcpy(buf, orig, n);
		le_store(buf + cd + 24, 1000 + delta, 4);
		test_spit(path, buf, n);
		struct zip_reader z;
		struct zip_member m;
		assert_int_equal(zip_open(&z, path, &e), 0);
		assert_int_equal(zip_member_open(&m, &z, &z.entries[0], "raw", &e), 0);
		if (delta > 0) {
			assert_int_equal(zip_member_read(&m, back, 1010, &e), -1);
			assert_string_equal(e.msg, "raw: deflate stream ends after 1000 bytes, the "
				"directory says 1010");
		} else {
			assert_int_equal(zip_member_read(&m, back, 990, &e), 0);
			assert_int_equal(zip_member_finish(&m, &e), -1);
			assert_string_equal(e.msg, "raw: deflate stream holds more than the "
				"directory's 990 bytes");
		}
		zip_member_close(&m);
		zip_close(&z);
	}
	free(orig);
	free(buf);
}

static void test_not_archives(void **state)
{
	struct npz z;
	struct sp_err e;
	assert_int_equal(npz_open(&z, test_dir, &e), -1);
	assert_non_null(strstr(e.msg, "is a directory"));
	const char *path = test_path("missing.npz");
	assert_int_equal(npz_open(&z, path, &e), -1);
	assert_non_null(strstr(e.msg, path));
	assert_non_null(strstr(e.msg, "No such file"));
	path = test_path("plain.npz");
	test_spit(path, "\x93NUMPY\x01\x00 this is no zip at all", 30);
	assert_int_equal(npz_open(&z, path, &e), -1);
	assert_non_null(strstr(e.msg, "no end-of-central-directory record"));
	test_spit(path, "", 0);
	assert_int_equal(npz_open(&z, path, &e), -1);
	assert_non_null(strstr(e.msg, "no end-of-central-directory record"));
	/* An empty archive is fine and has no members. */
	test_spit(path, "PK\5\6\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 22);
	assert_int_equal(npz_open(&z, path, &e), 0);
	assert_int_equal(z.zip.count, 0);
	npz_close(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_large_deflated_member),
		cmocka_unit_test(test_zip64_records),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_damaged_archives),
		cmocka_unit_test(test_zip_member_sizes),
		cmocka_unit_test(test_not_archives),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
