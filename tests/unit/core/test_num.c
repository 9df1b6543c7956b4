/* The small helpers under the CSV and YAML code: numbers as text (num.h),
 * growable buffers (buf.h), the string hash map (strmap.h) and file text
 * in messages: cut to fit (sp_clip) and escaped to one line (sp_quote, in
 * err.h), and in reports for people (text_out.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/num.h"
#include "core/strmap.h"
#include "core/text_out.h"

static void test_parse_int(void **state)
{
	int64_t v;
	assert_int_equal(num_parse_int("42", &v), NUM_OK);
	assert_int_equal(v, 42);
	assert_int_equal(num_parse_int(" -7\t", &v), NUM_OK);
	assert_int_equal(v, -7);
	assert_int_equal(num_parse_int("+0", &v), NUM_OK);
	assert_int_equal(num_parse_int("9223372036854775807", &v), NUM_OK);
	assert_true(v == INT64_MAX);
	assert_int_equal(num_parse_int("-9223372036854775808", &v), NUM_OK);
	assert_true(v == INT64_MIN);
	assert_int_equal(num_parse_int("9223372036854775808", &v), NUM_RANGE);
	const char *bad[] = {"", " ", "-", "1.5", "1e3", "0x10", "12abc", "1 2", "abc", "--1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(num_parse_int(bad[i], &v), NUM_SYNTAX);
}

static void test_parse_double(void **state)
{
	double v;
	assert_int_equal(num_parse_double("1e-3", 0, &v), NUM_OK);
	assert_true(v == 1e-3);
	assert_int_equal(num_parse_double(".5", 0, &v), NUM_OK);
	assert_true(v == 0.5);
	assert_int_equal(num_parse_double("-2.", 0, &v), NUM_OK);
	assert_true(v == -2.0);
	assert_int_equal(num_parse_double(" 3 ", 0, &v), NUM_OK);
	assert_int_equal(num_parse_double("1e999", 0, &v), NUM_RANGE);
	assert_int_equal(num_parse_double("1e-400", 0, &v), NUM_OK); /* underflow rounds */
	const char *bad[] = {"", ".", "e5", "1e", "1e+", "0x1p3", "1.2.3", "abc", "1,5", "- 1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(num_parse_double(bad[i], 1, &v), NUM_SYNTAX);
	/* Non-finite values only when asked, in C's and YAML's spellings. */
	const char *nonfinite[] = {"nan",  "NaN",  ".nan",  ".NaN",  "inf",
				   "-inf", ".inf", "-.Inf", "+.INF", "Infinity"};
	for (size_t i = 0; i < sizeof nonfinite / sizeof *nonfinite; i++) {
		assert_int_equal(num_parse_double(nonfinite[i], 0, &v), NUM_SYNTAX);
		assert_int_equal(num_parse_double(nonfinite[i], 1, &v), NUM_OK);
		assert_false(isfinite(v));
	}
	assert_int_equal(num_parse_double("-.inf", 1, &v), NUM_OK);
	assert_true(isinf(v) && v < 0);
	assert_int_equal(num_parse_double("nanx", 1, &v), NUM_SYNTAX);
	assert_int_equal(num_parse_double("in", 1, &v), NUM_SYNTAX);
}

static void test_format_double(void **state)
{
	char b[NUM_DOUBLE_MAX];
	assert_string_equal(num_format_double(b, 0.1, 0), "0.1");
	assert_string_equal(num_format_double(b, 3.0, 0), "3");
	assert_string_equal(num_format_double(b, 1.0 / 3, 0), "0.3333333333333333");
	assert_string_equal(num_format_double(b, 0.1 + 0.2, 0), "0.30000000000000004");
	assert_string_equal(num_format_double(b, 1e300, 0), "1e+300");
	assert_string_equal(num_format_double(b, NAN, 0), "nan");
	assert_string_equal(num_format_double(b, -NAN, 6), "nan");
	assert_string_equal(num_format_double(b, -INFINITY, 0), "-inf");
	assert_string_equal(num_format_double(b, 1.0 / 3, 6), "0.333333");
	assert_string_equal(num_format_double(b, 12345678.0, 6), "1.23457e+07");
	/* Shortest round trip: every value reads back exactly. */
	double probes[] = {5e-324,
			   2.2250738585072014e-308,
			   1.7976931348623157e308,
			   -0.0,
			   123456.789,
			   9007199254740993.0,
			   0.1 * 3};
	for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
		double back;
		assert_int_equal(num_parse_double(num_format_double(b, probes[i], 0), 0, &back),
				 NUM_OK);
		assert_memory_equal(&back, &probes[i], sizeof back);
	}
}

static void test_buf(void **state)
{
	struct buf b = {0};
	for (int i = 0; i < 1000; i++)
		assert_int_equal(buf_addc(&b, (char)('a' + i % 26)), 0);
	assert_int_equal(buf_add(&b, "xyz", 3), 0);
	assert_int_equal(b.len, 1003);
	assert_memory_equal(b.data + 1000, "xyz", 3);
	assert_true(b.cap >= b.len);
	size_t cap = 0;
	assert_null(buf_grow_array(NULL, &cap, SIZE_MAX / 2, 16)); /* overflow is refused */
	assert_int_equal(cap, 0);
	buf_free(&b);
	assert_null(b.data);
}

/* Inserting a key that is there already is a lookup: it never grows the
 * table, so it cannot fail for want of memory (graph-partition looked a
 * tensor's name up again, got "out of memory" as a value index and freed
 * garbage; found by tests/bats/faults.bats). */
static void test_strmap_insert_existing_does_not_grow(void **state)
{
	struct strmap m = {0};
	int added;
	char k[16];
	for (int i = 0; i < 8; i++) /* 8 of 16 slots: the next new key grows */
		*strmap_insert(&m, k, (size_t)snprintf(k, sizeof k, "k%d", i), &added) = (size_t)i;
	assert_int_equal(m.nslots, 16);
	const struct strmap_slot *slots = m.slots;
	size_t *v = strmap_insert(&m, "k3", 2, &added);
	assert_false(added);
	assert_int_equal(*v, 3);
	assert_ptr_equal(m.slots, slots);
	assert_int_equal(m.nslots, 16);
	strmap_free(&m);
}

static void test_strmap(void **state)
{
	struct strmap m = {0};
	int added;
	assert_null(strmap_find(&m, "a", 1));
	*strmap_insert(&m, "a", 1, &added) = 10;
	assert_true(added);
	*strmap_insert(&m, "a\0b", 3, &added) = 11; /* embedded NUL: lengths matter */
	assert_true(added);
	*strmap_insert(&m, "", 0, &added) = 12;
	assert_true(added);
	size_t *v = strmap_insert(&m, "a", 1, &added);
	assert_false(added);
	assert_int_equal(*v, 10);
	assert_int_equal(*strmap_find(&m, "a\0b", 3), 11);
	assert_int_equal(*strmap_find(&m, "", 0), 12);
	assert_null(strmap_find(&m, "a\0c", 3));
	assert_int_equal(m.count, 3);
	/* Many keys, through several rehashes. */
	char k[32];
	for (size_t i = 0; i < 50000; i++) {
		int n = snprintf(k, sizeof k, "key-%zu", i);
		*strmap_insert(&m, k, (size_t)n, &added) = i;
		assert_true(added);
	}
	for (size_t i = 0; i < 50000; i++) {
		int n = snprintf(k, sizeof k, "key-%zu", i);
		assert_int_equal(*strmap_find(&m, k, (size_t)n), i);
	}
	assert_null(strmap_find(&m, "key-50000", 9));
	assert_int_equal(m.count, 50003);
	strmap_free(&m);
	assert_int_equal(m.count, 0);
	assert_null(strmap_find(&m, "a", 1));
}

/* What sp_clip and sp_quote share: text that fits is kept, and longer
 * text is cut with "..." to fit, never inside a character. */
static void test_clip_and_quote_cut(void **state)
{
	const char *(*const cut[])(char *, size_t, const char *) = {sp_clip, sp_quote};
	char b[16];
	for (int i = 0; i < 2; i++) {
		assert_string_equal(cut[i](b, sizeof b, "plain"), "plain");
		assert_string_equal(cut[i](b, sizeof b, "exactly 15 byte"), "exactly 15 byte");
		assert_string_equal(cut[i](b, sizeof b, "sixteen bytes!!!"), "sixteen byte...");
		assert_string_equal(cut[i](b, sizeof b, "0123456789\xe6\x97\xa5\xe6\x97\xa5"),
				    "0123456789...");
		assert_string_equal(cut[i](b, 4, "abcdef"), "...");
		assert_string_equal(cut[i](b, 1, "abcdef"), "");
	}
}

static void test_clip(void **state)
{
	char b[16];
	/* Kept as it is: the escaping is the writer's of the whole line. */
	assert_string_equal(sp_clip(b, sizeof b, "a\nb\\c\x1b\xe9"), "a\nb\\c\x1b\xe9");
	/* A character is kept whole; a byte that is not UTF-8 counts as one. */
	assert_string_equal(sp_clip(b, sizeof b, "012345\xe6\x97\xa5" "abcdefg"),
			    "012345\xe6\x97\xa5" "abc...");
	assert_string_equal(sp_clip(b, sizeof b, "0123456789\xe6\x97\xe6\x97\xe6\x97"),
			    "0123456789\xe6\x97...");
}

static void test_quote(void **state)
{
	char b[16];
	assert_string_equal(sp_quote(b, sizeof b, "a\nb\tc\r\x01"), "a\\nb\\tc\\r\\x01");
	/* The backslash too, so that the text \x1b shows apart from the byte. */
	assert_string_equal(sp_quote(b, sizeof b, "\\x1b \x1b"), "\\\\x1b \\x1b");
	assert_string_equal(sp_quote(b, sizeof b, "C:\\a\\"), "C:\\\\a\\\\");
	assert_string_equal(sp_quote(b, sizeof b, "0123456789ab\\\\"), "0123456789ab...");
	/* An escape is never cut in half. */
	assert_string_equal(sp_quote(b, sizeof b, "0123456789\n\n\n"), "0123456789\\n...");
	assert_string_equal(sp_quote(b, sizeof b, "\x7f\x7f\x7f\x7f"), "\\x7f\\x7f\\x7f...");
	assert_string_equal(sp_quote(b, sizeof b, "caf\xc3\xa9"), "caf\xc3\xa9"); /* UTF-8 kept */
	assert_string_equal(sp_quote(b, sizeof b, "\xf0\x9f\x9a\x80!"), "\xf0\x9f\x9a\x80!");
	/* Bytes that are not UTF-8 are escaped: Latin-1, a stray continuation
	 * byte, a cut sequence, an overlong form, a surrogate, a C1 control. */
	assert_string_equal(sp_quote(b, sizeof b, "caf\xe9"), "caf\\xe9");
	assert_string_equal(sp_quote(b, sizeof b, "\x80" "a"), "\\x80a");
	assert_string_equal(sp_quote(b, sizeof b, "\xe6\x97"), "\\xe6\\x97");
	assert_string_equal(sp_quote(b, sizeof b, "\xc0\xaf"), "\\xc0\\xaf");
	assert_string_equal(sp_quote(b, sizeof b, "\xed\xa0\x80"), "\\xed\\xa0\\x80");
	assert_string_equal(sp_quote(b, sizeof b, "\xc2\x9b"), "\\xc2\\x9b");
}

/* text_put writes what sp_quote writes, text_width counts it, and the
 * padding goes where printf's %*s puts it, by bytes written. */
static void test_text_put(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int width;
		const char *out;
	} cases[] = {
		{"a\nb\x1b[1m", 0, "a\\nb\\x1b[1m"},
		{"ab", 5, "   ab"},
		{"ab", -5, "ab   "},
		{"a\tb", -6, "a\\tb  "},
		{"caf\xc3\xa9\xc2\x9b", 0, "caf\xc3\xa9\\xc2\\x9b"},
		{"toolong", 3, "toolong"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char got[64] = {0};
		FILE *fp = fmemopen(got, sizeof got - 1, "w");
		assert_non_null(fp);
		text_put(fp, cases[i].text, cases[i].width);
		fclose(fp);
		assert_string_equal(got, cases[i].out);
		char q[64];
		assert_int_equal(text_width(cases[i].text), strlen(sp_quote(q, sizeof q, cases[i].text)));
	}
}

static void test_sort_median(void **state)
{
	double odd[] = {3, -1, 2.5, 7, 0};
	num_sort(odd, 5);
	assert_true(odd[0] == -1 && odd[1] == 0 && odd[2] == 2.5 && odd[3] == 3 && odd[4] == 7);
	assert_true(num_median_sorted(odd, 5) == 2.5);
	double even[] = {4, 1, 3, 2};
	num_sort(even, 4);
	assert_true(num_median_sorted(even, 4) == 2.5);
	assert_true(num_median_sorted(even, 1) == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_int),     cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_format_double), cmocka_unit_test(test_buf),
		cmocka_unit_test(test_strmap),
		cmocka_unit_test(test_strmap_insert_existing_does_not_grow),     cmocka_unit_test(test_sort_median),
		cmocka_unit_test(test_clip_and_quote_cut),
		cmocka_unit_test(test_clip),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_text_put),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
