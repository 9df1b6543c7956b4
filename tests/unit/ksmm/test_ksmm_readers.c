/* The files a ksmm-tune user writes or keeps: pattern lists, tuning spaces
 * and tuning CSVs, read from buffers, good and bad. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ksmm/ksmm_patterns.h"
#include "ksmm/ksmm_results.h"
#include "ksmm/ksmm_space.h"

static int read_patterns(const char *text, struct ksmm_pattern_list *l, struct sp_err *e)
{
	*l = (struct ksmm_pattern_list){0};
	return ksmm_patterns_read_buffer(text, strlen(text), "p.in", l, e);
}

static void test_patterns_good(void **state)
{
	struct ksmm_pattern_list l;
	struct sp_err e;
	assert_int_equal(read_patterns("# grid\n\n1,48,48,4\r\n 2 , 64,256 ,16,1024\n\t# end\n"
				       "128,128,128,4",
				       &l, &e),
			 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.v[0].p.a, 1);
	assert_int_equal(l.v[0].p.d, 4);
	assert_int_equal(l.v[0].batch, 0);
	assert_string_equal(l.v[0].where, "p.in:3");
	assert_int_equal(l.v[1].p.c, 256);
	assert_int_equal(l.v[1].batch, 1024);
	assert_int_equal(l.v[2].p.b, 128);
	assert_string_equal(l.v[2].where, "p.in:6");
	ksmm_pattern_list_free(&l);

	struct ksmm_pattern_entry one;
	assert_int_equal(ksmm_pattern_parse("4,64,64,16", "--pattern", &one, &e), 0);
	assert_int_equal(one.p.b, 64);
	assert_string_equal(one.where, "--pattern");
}

static void test_patterns_bad(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"1,2,3\n", "p.in:1: expected a,b,c,d or a,b,c,d,batch, found 3 fields"},
		{"1,2,3,4\n1,2,3,4,5,6\n", "p.in:2: expected a,b,c,d or a,b,c,d,batch, found 6 fields"},
		{"1,2,x,4\n", "p.in:1: c: expected a whole number, found 'x'"},
		{"1,2,3.5,4\n", "p.in:1: c: expected a whole number, found '3.5'"},
		{"0,2,3,4\n", "p.in:1: a = 0 is out of range (1 to 2^31 - 1)"},
		{"1,2,3,-4\n", "p.in:1: d = -4 is out of range (1 to 2^31 - 1)"},
		{"1,2,3,2147483648\n", "p.in:1: d = 2147483648 is out of range (1 to 2^31 - 1)"},
		{"1,2,3,4,0\n", "p.in:1: batch = 0 is out of range (1 to 2^31 - 1)"},
		{"1,2,3,99999999999999999999\n",
		 "p.in:1: d = 99999999999999999999 is out of range (1 to 2^31 - 1)"},
		{"1,,3,4\n", "p.in:1: b: expected a whole number, found ''"},
		{"# nothing\n\n", "p.in: no pattern in the file"},
		{"", "p.in: no pattern in the file"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ksmm_pattern_list l;
		struct sp_err e;
		assert_int_equal(read_patterns(cases[i].text, &l, &e), -1);
		assert_string_equal(e.msg, cases[i].msg);
		ksmm_pattern_list_free(&l);
	}
	struct ksmm_pattern_entry one;
	struct sp_err e;
	assert_int_equal(ksmm_pattern_parse("1,2\n3,4", "--pattern", &one, &e), -1);
	assert_string_equal(e.msg, "--pattern: expected a,b,c,d, found a line break");
}

#define SIMT_KEYS                                                                       \
	"tile_rows: [16, 32]\n  tile_k: {from: 8, to: 64, times: 2}\n  tile_batch: 64\n" \
	"  thread_rows: {from: 2, to: 6, step: 2}\n  thread_batch: [4]\n  vec: [1, 2]\n"  \
	"  stages: 2\n  tf32: 0\n"

/* The same keys, one a line, indented by `in` after the first (for a list
 * item). */
#define SIMT_KEYS_AT(in)                                                                 \
	"tile_rows: [16, 32]\n" in "tile_k: {from: 8, to: 64, times: 2}\n" in             \
	"tile_batch: 64\n" in "thread_rows: {from: 2, to: 6, step: 2}\n" in               \
	"thread_batch: [4]\n" in "vec: [1, 2]\n" in "stages: 2\n" in "tf32: 0\n"

static int read_space(const char *text, struct ksmm_space *s, struct sp_err *e)
{
	return ksmm_space_read_buffer(text, strlen(text), "s.yaml", s, e);
}

static void test_space_enumeration(void **state)
{
	struct ksmm_space s;
	struct sp_err e;
	assert_int_equal(read_space("simt:\n  " SIMT_KEYS, &s, &e), 0);
	/* 2 x 4 x 1 x 3 x 1 x 2 */
	assert_int_equal(s.count, 48);
	struct ksmm_config c;
	ksmm_space_at(&s, 0, &c);
	assert_int_equal(c.variant, KSMM_SIMT);
	assert_int_equal(c.tile_rows, 16);
	assert_int_equal(c.tile_k, 8);
	assert_int_equal(c.thread_rows, 2);
	assert_int_equal(c.vec, 1);
	ksmm_space_at(&s, 1, &c); /* the last key changes fastest */
	assert_int_equal(c.vec, 2);
	assert_int_equal(c.tile_k, 8);
	ksmm_space_at(&s, 47, &c);
	assert_int_equal(c.tile_rows, 32);
	assert_int_equal(c.tile_k, 64);
	assert_int_equal(c.thread_rows, 6);
	assert_int_equal(c.vec, 2);
	assert_int_equal(c.stages, 2);
	assert_int_equal(c.tile_d, 1); /* optional: one de a block when absent */
	/* every configuration once */
	int seen[48] = {0};
	for (uint64_t i = 0; i < s.count; i++) {
		ksmm_space_at(&s, i, &c);
		int k = (c.tile_rows == 32) * 24 + (c.tile_k == 16 ? 1 : c.tile_k == 32 ? 2 :
							  c.tile_k == 64 ? 3 : 0) * 6 +
			(c.thread_rows / 2 - 1) * 2 + (c.vec - 1);
		seen[k]++;
	}
	for (int k = 0; k < 48; k++)
		assert_int_equal(seen[k], 1);
	ksmm_space_free(&s);

	/* two variants: mma's configurations follow simt's */
	assert_int_equal(read_space("simt:\n  " SIMT_KEYS "mma:\n  " SIMT_KEYS, &s, &e), 0);
	assert_int_equal(s.count, 96);
	ksmm_space_at(&s, 48, &c);
	assert_int_equal(c.variant, KSMM_MMA);
	assert_int_equal(c.tile_rows, 16);
	ksmm_space_free(&s);

	/* tile_d swept like the others, last */
	assert_int_equal(read_space("simt:\n  " SIMT_KEYS "  tile_d: [1, 4]\n", &s, &e), 0);
	assert_int_equal(s.count, 96);
	ksmm_space_at(&s, 1, &c);
	assert_int_equal(c.tile_d, 4);
	assert_int_equal(c.vec, 1);
	ksmm_space_free(&s);

	/* a section as a list of mappings: their union, in order */
	assert_int_equal(read_space("mma:\n  - " SIMT_KEYS_AT("    ") "  - {tile_rows: 8, tile_k: 16, "
				    "tile_batch: 32, thread_rows: 16, thread_batch: 16, vec: 8, "
				    "stages: [2, 3], tf32: 0, tile_d: 4}\n",
				    &s, &e),
			 0);
	assert_int_equal(s.count, 48 + 2);
	ksmm_space_at(&s, 47, &c);
	assert_int_equal(c.variant, KSMM_MMA);
	assert_int_equal(c.tile_rows, 32);
	ksmm_space_at(&s, 49, &c);
	assert_int_equal(c.tile_rows, 8);
	assert_int_equal(c.stages, 3);
	assert_int_equal(c.tile_d, 4);
	/* for every dtype and layout when not said */
	assert_true(ksmm_space_for(&s, 49, KSMM_BF16, KSMM_BS_LAST));
	ksmm_space_free(&s);
	/* whom a mapping's points are for */
	assert_int_equal(read_space("simt:\n  - " SIMT_KEYS_AT("    ") "    dtypes: [fp32]\n"
				    "    layouts: [bsl]\n  - " SIMT_KEYS_AT("    ")
				    "    layouts: [bsf]\n",
				    &s, &e),
			 0);
	assert_int_equal(s.count, 96);
	assert_true(ksmm_space_for(&s, 47, KSMM_F32, KSMM_BS_LAST));
	assert_false(ksmm_space_for(&s, 47, KSMM_F16, KSMM_BS_LAST));
	assert_false(ksmm_space_for(&s, 47, KSMM_F32, KSMM_BS_FIRST));
	assert_true(ksmm_space_for(&s, 48, KSMM_F16, KSMM_BS_FIRST));
	assert_false(ksmm_space_for(&s, 95, KSMM_F16, KSMM_BS_LAST));
	ksmm_space_free(&s);

	assert_int_equal(ksmm_space_default(&s, &e), 0);
	assert_true(s.count > 0);
	ksmm_space_free(&s);
}

static void test_space_bad(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"simt:\n  " SIMT_KEYS "  tile_m: 4\n",
		 "s.yaml:10: unknown key 'tile_m' in section simt (expected tile_rows, tile_k, "
		 "tile_batch, thread_rows, thread_batch, vec, stages, tf32, tile_d, dtypes, layouts)"},
		{"simd:\n  " SIMT_KEYS, "s.yaml:2: unknown key 'simd' in the space (expected simt, mma)"},
		{"simt:\n  tile_rows: 16\n", "s.yaml:2: missing key 'tile_k'"},
		{"simt:\n  " SIMT_KEYS "  vec: 4\n", "s.yaml:"},
		{"{}\n", "s.yaml:1: no section (expected simt, mma or both)"},
		{"", "s.yaml: empty document"},
		{"simt: []\n", "s.yaml:1: section simt: an empty list holds no configuration"},
		{"simt:\n  " SIMT_KEYS "  dtypes: [fp32, fp8]\n", "s.yaml:10: dtypes: unknown 'fp8'"},
		/* a control character of the file, as it is: the program escapes
		 * the line it prints (found by fuzz_ksmm) */
		{"simt:\n  " SIMT_KEYS "  dtypes: [\"f\\rp\"]\n", "s.yaml:10: dtypes: unknown 'f\rp'"},
		{"simt:\n  " SIMT_KEYS "  layouts: []\n", "s.yaml:10: layouts: an empty list"},
		{"simt: [4]\n", "s.yaml:1: section simt: expected a mapping of parameters or a list"},
		{"simt:\n  - " SIMT_KEYS_AT("    ") "  - {tile_rows: 16}\n",
		 "s.yaml:10: missing key 'tile_k'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ksmm_space s;
		struct sp_err e;
		assert_int_equal(read_space(cases[i].text, &s, &e), -1);
		if (strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: '%s', expected '%s'", i, e.msg, cases[i].msg);
	}
	/* ranges that hold nothing or values out of range, each key in turn */
	static const struct {
		const char *from, *to, *msg;
	} ranges[] = {
		{"tile_k: {from: 8, to: 64, times: 2}", "tile_k: {from: 64, to: 8, times: 2}",
		 "s.yaml:3: tile_k: range from 64 to 8 holds no value"},
		{"tile_k: {from: 8, to: 64, times: 2}", "tile_k: {from: 8, to: 64, step: -1}",
		 "s.yaml:3: tile_k: step -1 must be at least 1"},
		{"tile_k: {from: 8, to: 64, times: 2}", "tile_k: {from: 8, to: 64, times: 2, step: 2}",
		 "s.yaml:3: tile_k: a range takes one of 'times' and 'step'"},
		{"tile_k: {from: 8, to: 64, times: 2}", "tile_k: {from: 8, to: 9000, times: 2}",
		 "s.yaml:3: tile_k: 9000 is out of range (1 to 4096)"},
		{"tile_k: {from: 8, to: 64, times: 2}", "tile_k: {from: 8, upto: 64, times: 2}",
		 "s.yaml:3: unknown key 'upto' in tile_k (expected from, to, times, step)"},
		{"stages: 2", "stages: 9", "s.yaml:8: stages: 9 is out of range (1 to 8)"},
		{"stages: 2", "stages: 2\n  tile_d: [4, 0]",
		 "s.yaml:9: tile_d: 0 is out of range (1 to 4096)"},
		{"tile_batch: 64", "tile_batch: [64, -1]",
		 "s.yaml:4: tile_batch: -1 is out of range (1 to 4096)"},
		{"tile_batch: 64", "tile_batch: []", "s.yaml:4: tile_batch: an empty list holds no value"},
		{"tf32: 0", "tf32: [0, 1, 3, 2]", "s.yaml:9: tf32: 2 is not 0, 1 or 3"},
		{"tf32: 0", "tf32: {from: 0, to: 3, step: 1}", "s.yaml:9: tf32: 2 is not 0, 1 or 3"},
		{"tile_batch: 64", "tile_batch: big", "s.yaml:4: tile_batch"},
	};
	for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++) {
		char text[1024];
		const char *base = "simt:\n  " SIMT_KEYS;
		const char *at = strstr(base, ranges[i].from);
		assert_non_null(at);
		snprintf(text, sizeof text, "%.*s%s%s", (int)(at - base), base, ranges[i].to,
			 at + strlen(ranges[i].from));
		struct ksmm_space s;
		struct sp_err e;
		assert_int_equal(read_space(text, &s, &e), -1);
		if (strncmp(e.msg, ranges[i].msg, strlen(ranges[i].msg)) != 0)
			fail_msg("range %zu: '%s', expected '%s'", i, e.msg, ranges[i].msg);
	}
}

#define HEADER                                                                             \
	"batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows,"     \
	"thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status\n"

static void test_results_round_trip(void **state)
{
	const char *text = HEADER "25088,4,64,64,16,fp16,bsl,mma,64,32,128,32,64,8,2,0,1,0.25,0.001,"
				  "0.0004,ok\n"
				  "7,1,2,3,4,fp32,bsf,simt,1,2,3,4,5,1,1,0,4,nan,nan,nan,"
				  "\"compile: error, line 3\"\n";
	struct ksmm_result *r;
	size_t n;
	struct sp_err e;
	assert_int_equal(ksmm_results_read_buffer(text, strlen(text), "r.csv", &r, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].batch, 25088);
	assert_int_equal(r[0].p.d, 16);
	assert_int_equal(r[0].dtype, KSMM_F16);
	assert_int_equal(r[0].layout, KSMM_BS_LAST);
	assert_int_equal(r[0].cfg.variant, KSMM_MMA);
	assert_int_equal(r[0].cfg.thread_batch, 64);
	assert_int_equal(r[0].cfg.vec, 8);
	assert_true(r[0].ms == 0.25);
	assert_string_equal(r[0].status, "ok");
	assert_int_equal(r[0].line, 2);
	assert_string_equal(r[1].status, "compile: error, line 3");
	assert_true(r[1].ms != r[1].ms);
	assert_int_equal(r[1].cfg.tile_d, 4);
	/* keys as the writer writes them */
	struct ksmm_result_key k;
	ksmm_result_key(&r[0], &k);
	const char *want[] = {"25088", "4",  "64", "64", "16", "fp16", "bsl", "mma",
			      "64",    "32", "128", "32", "64", "8",    "2",   "0",  "1"};
	for (int i = 0; i < KSMM_RESULT_KEYS; i++)
		assert_string_equal(k.v[i], want[i]);
	free(r);
}

static void test_results_bad(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"m,n,F_dur(us)\n1,2,3\n", "r.csv: not a ksmm-tune CSV"},
		{HEADER "1,1,1,1,1,fp32,bsf,simt,1,1,1,1,1,1,1,0,1,x,0,0,ok\n",
		 "r.csv:2: column 'ms': expected a number, found 'x'"},
		{HEADER "1,1,1,1,1,fp8,bsf,simt,1,1,1,1,1,1,1,0,1,1,0,0,ok\n",
		 "r.csv:2: column 'dtype': expected fp32, fp16 or bf16, found 'fp8'"},
		{HEADER "1,1,1,1,1,fp32,col,simt,1,1,1,1,1,1,1,0,1,1,0,0,ok\n",
		 "r.csv:2: column 'layout': expected bsf or bsl, found 'col'"},
		{HEADER "1,1,1,1,1,fp32,bsf,wmma,1,1,1,1,1,1,1,0,1,1,0,0,ok\n",
		 "r.csv:2: column 'variant': expected simt or mma, found 'wmma'"},
		{HEADER "0,1,1,1,1,fp32,bsf,simt,1,1,1,1,1,1,1,0,1,1,0,0,ok\n",
		 "r.csv:2: column 'batch': 0 is out of range (1 to 2147483647)"},
		{HEADER "1,1,1,1,1,fp32,bsf,simt,1,1,1,1,1,1,1,2,1,1,0,0,ok\n",
		 "r.csv:2: column 'tf32': 2 is not 0, 1 or 3"},
		{HEADER "1,1,1,1,1,fp32,bsf,simt,1,1,1,1,1,1,1,0,0,1,0,0,ok\n",
		 "r.csv:2: column 'tile_d': 0 is out of range (1 to 4096)"},
		{HEADER "1,1,1,1,1,fp32,bsf,simt,1,1,1,1,1,1,1,0,1,1,0,0,\n",
		 "r.csv:2: column 'status' is empty"},
		{HEADER "1,1,1,1,1,fp32,bsf,simt,1,1,1,1,1,1,1,0,1,-1,0,0,ok\n",
		 "r.csv:2: an ok row with ms = -1"},
		{"", "r.csv: "},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ksmm_result *r = NULL;
		size_t n;
		struct sp_err e;
		assert_int_equal(ksmm_results_read_buffer(cases[i].text, strlen(cases[i].text),
							  "r.csv", &r, &n, &e),
				 -1);
		if (strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: '%s', expected '%s'", i, e.msg, cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns_good),	  cmocka_unit_test(test_patterns_bad),
		cmocka_unit_test(test_space_enumeration), cmocka_unit_test(test_space_bad),
		cmocka_unit_test(test_results_round_trip), cmocka_unit_test(test_results_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
