/* JSON text (json_writer.h): numbers that read back as the very double
 * written, in the fewest digits, null where JSON has no number; strings
 * escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "formats/json_writer.h"

static void test_number_shortest(void **state)
{
	char b[NUM_DOUBLE_MAX];
	assert_string_equal(json_writer_number_text(b, 0.1), "0.1");
	assert_string_equal(json_writer_number_text(b, 13.9375), "13.9375");
	assert_string_equal(json_writer_number_text(b, 66.9e12), "66900000000000");
	assert_string_equal(json_writer_number_text(b, 66.9 * 1e12), "66900000000000.01");
	assert_string_equal(json_writer_number_text(b, 1.0 / 3), "0.3333333333333333");
	assert_string_equal(json_writer_number_text(b, 0.1 + 0.2), "0.30000000000000004");
	assert_string_equal(json_writer_number_text(b, 5e-324), "5e-324");
	assert_string_equal(json_writer_number_text(b, -2.5), "-2.5");
	assert_string_equal(json_writer_number_text(b, NAN), "null");
	assert_string_equal(json_writer_number_text(b, INFINITY), "null");
	assert_string_equal(json_writer_number_text(b, -INFINITY), "null");
}

/* Random bit patterns: every finite double reads back exactly, written
 * with the fewest significant digits that do (found here by trying 1 to 17). */
static void test_number_round_trip(void **state)
{
	struct rng r;
	rng_init(&r, 29, 0);
	char b[NUM_DOUBLE_MAX], want[NUM_DOUBLE_MAX];
	for (int i = 0; i < 20000; i++) {
		uint64_t bits = rng_u64(&r);
		double v;
		memcpy(&v, &bits, sizeof v);
		if (i % 2) /* and numbers of everyday sizes */
			v = (rng_uniform(&r) - 0.5) * pow(10, (int)rng_below(&r, 30) - 15);
		if (!isfinite(v))
			continue;
		json_writer_number_text(b, v);
		assert_true(strtod(b, NULL) == v);
		for (int p = 1; p <= 17; p++) {
			snprintf(want, sizeof want, "%.*g", p, v);
			if (strtod(want, NULL) == v)
				break;
		}
		assert_string_equal(b, want);
	}
}

static void test_string_escapes(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	json_writer_string(fp, "a\"b\\c\n\x01");
	fputc(' ', fp);
	json_writer_number(fp, 0.5);
	fclose(fp);
	assert_string_equal(text, "\"a\\\"b\\\\c\\n\\u0001\" 0.5");
	free(text);
}

/* A byte that is not part of a valid UTF-8 character (Latin-1 text, a
 * stray continuation byte, a cut, overlong or surrogate sequence) would
 * make the whole document invalid JSON: it is written as the code point of
 * the same number, \u00XX. Valid UTF-8 passes through. */
static void test_string_invalid_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"caf\xe9", "\"caf\\u00e9\""},
		{"caf\xc3\xa9", "\"caf\xc3\xa9\""},
		{"\x80" "a", "\"\\u0080a\""},
		{"\xe6\x97", "\"\\u00e6\\u0097\""},
		{"\xc0\xaf", "\"\\u00c0\\u00af\""},
		{"\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\""},
		{"\xf0\x9f\x9a\x80!", "\"\xf0\x9f\x9a\x80!\""},
		{"\xff", "\"\\u00ff\""},
		{"\xc2\x85", "\"\xc2\x85\""}, /* a C1 control is valid UTF-8 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&text, &len);
		json_writer_string(fp, cases[i].in);
		fclose(fp);
		assert_string_equal(text, cases[i].out);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_number_shortest),
		cmocka_unit_test(test_number_round_trip),
		cmocka_unit_test(test_string_escapes),
		cmocka_unit_test(test_string_invalid_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
