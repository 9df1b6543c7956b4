/* ksmm-tune's best tables and sweep: the reduction to the fastest ok row,
 * the table's rules for untuned patterns and batches, and the tune sweep
 * driven by a fake runner (no GPU): rows per runnable configuration,
 * failures recorded, a killed sweep resumed with no row lost or repeated,
 * parts that cover the jobs once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_tune.h"
#include "testutil.h"

#define HEADER                                                                             \
	"batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows,"     \
	"thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status\n"

static const char *write_csv(const char *name, const char *rows)
{
	const char *path = test_path("%s", name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(HEADER, f);
	fputs(rows, f);
	fclose(f);
	return path;
}

static void test_best_reduce(void **state)
{
	const char *p1 = write_csv("p1.csv",
				   "100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0,0,ok\n"
				   "100,2,16,16,2,fp32,bsf,simt,64,8,64,4,4,1,2,0,1,0.1,0,0.5,wrong\n"
				   "100,4,8,8,4,fp16,bsl,mma,64,32,128,32,64,8,2,0,1,nan,nan,nan,"
				   "launch: boom\n");
	const char *p2 = write_csv("p2.csv",
				   "100,2,16,16,2,fp32,bsf,simt,32,16,64,4,4,1,2,0,1,0.3,0,0,ok\n"
				   "100,2,16,16,2,fp32,bsl,simt,32,16,64,4,4,1,2,0,1,0.7,0,0,ok\n");
	const char *paths[] = {p1, p2};
	struct ksmm_result *r;
	size_t n, skipped;
	struct sp_err e;
	assert_int_equal(ksmm_best_reduce(paths, 2, &r, &n, &skipped, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(skipped, 1);
	assert_int_equal(r[0].layout, KSMM_BS_FIRST);
	assert_int_equal(r[0].cfg.tile_k, 16); /* 0.3 beats 0.5; the wrong 0.1 never counts */
	assert_true(r[0].ms == 0.3);
	assert_int_equal(r[1].layout, KSMM_BS_LAST);
	const char *out = test_path("best.csv");
	assert_int_equal(ksmm_best_write(out, r, n, &e), 0);
	free(r);
	struct ksmm_table t;
	assert_int_equal(ksmm_table_read(out, &t, &e), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.rows[0].cfg.tile_k, 16);
	ksmm_table_free(&t);

	/* a foreign file among the parts fails the whole reduction */
	FILE *f = fopen(test_path("foreign.csv"), "w");
	fputs("m,n\n1,2\n", f);
	fclose(f);
	const char *bad[] = {p1, test_path("foreign.csv")};
	assert_int_equal(ksmm_best_reduce(bad, 2, &r, &n, &skipped, &e), -1);
	assert_non_null(strstr(e.msg, "foreign.csv: not a ksmm-tune CSV"));
}

/* A runnable test: configurations whose vec is 8 cannot run anything, and
 * tile_rows 128 cannot run patterns with b < 128. */
static int fake_runnable(void *ctx, const struct ksmm_pattern *p, int64_t batch,
			 enum ksmm_dtype t, enum ksmm_layout l, const struct ksmm_config *cfg,
			 char *why, size_t n)
{
	if (cfg->vec == 8) {
		snprintf(why, n, "vec 8 never runs here");
		return 1;
	}
	if (cfg->tile_rows == 128 && p->b < 128) {
		snprintf(why, n, "tile_rows 128 over b = %d", (int)p->b);
		return 1;
	}
	return 0;
}

static struct ksmm_result table_row(struct ksmm_pattern p, int64_t batch, int tile_rows,
				    int vec)
{
	struct ksmm_result r = {.batch = batch, .p = p, .line = 2};
	r.cfg = (struct ksmm_config){KSMM_SIMT, tile_rows, 8, 64, 4, 4, vec, 2, 0, 1};
	r.ms = 1;
	strcpy(r.status, "ok");
	return r;
}

static void test_table_rules(void **state)
{
	struct ksmm_pattern p = {4, 64, 64, 16}, q = {4, 256, 256, 16}, far = {1, 48, 192, 64};
	struct ksmm_result rows[] = {
		table_row(p, 1024, 32, 1),  table_row(p, 4096, 64, 1),  table_row(q, 25088, 128, 1),
		table_row(far, 25088, 16, 1), table_row(q, 2048, 16, 8),
	};
	struct ksmm_table t = {.path = "t.csv", .rows = rows, .n = 5};
	struct ksmm_config c;
	enum ksmm_rule rule;
	const struct ksmm_result *from;
	struct sp_err e;
	/* exact */
	assert_int_equal(ksmm_table_choose(&t, &p, 4096, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(rule, KSMM_RULE_EXACT);
	assert_int_equal(c.tile_rows, 64);
	/* nearest batch: 3000 is nearer 4096 than 1024 on a log scale */
	assert_int_equal(ksmm_table_choose(&t, &p, 3000, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(rule, KSMM_RULE_NEAREST_BATCH);
	assert_int_equal(c.tile_rows, 64);
	assert_ptr_equal(from, &rows[1]);
	assert_int_equal(ksmm_table_choose(&t, &p, 1500, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(c.tile_rows, 32);
	/* a tie (2048 is as far from 1024 as from 4096): the larger batch */
	assert_int_equal(ksmm_table_choose(&t, &p, 2048, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_ptr_equal(from, &rows[1]);
	/* nearest pattern: 4,128,128,16 takes q's row (tile_rows 128 runs
	 * b = 128); 4,96,96,16 cannot take that row and gets p's nearest */
	struct ksmm_pattern r1 = {4, 128, 128, 16}, r2 = {4, 96, 96, 16};
	assert_int_equal(ksmm_table_choose(&t, &r1, 25088, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(rule, KSMM_RULE_NEAREST_PATTERN);
	assert_ptr_equal(from, &rows[2]);
	assert_int_equal(ksmm_table_choose(&t, &r2, 25088, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(rule, KSMM_RULE_NEAREST_PATTERN);
	assert_ptr_equal(from, &rows[1]);
	/* another dtype or layout: nothing in the table, the default */
	c.tile_rows = -7;
	assert_int_equal(ksmm_table_choose(&t, &p, 4096, KSMM_F16, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(rule, KSMM_RULE_DEFAULT);
	assert_null(from);
	assert_int_equal(c.tile_rows, -7);
	assert_int_equal(ksmm_table_choose(NULL, &p, 4096, KSMM_F32, KSMM_BS_LAST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 0);
	assert_int_equal(rule, KSMM_RULE_DEFAULT);
	/* an exact row that cannot run its own pattern is an error */
	assert_int_equal(ksmm_table_choose(&t, &q, 2048, KSMM_F32, KSMM_BS_FIRST, fake_runnable,
					   NULL, &c, &rule, &from, &e),
			 -1);
	assert_string_equal(e.msg, "t.csv:2: the row for pattern 4,256,256,16 at batch 2048 cannot "
				   "run it: vec 8 never runs here");
	assert_string_equal(ksmm_rule_name(KSMM_RULE_NEAREST_BATCH), "nearest batch");
}

/* The fake runner: records the jobs begun, the configurations prepared
 * and run; a configuration with tile_k 16 "fails to compile"; fail_after
 * stops the sweep (as a kill would) after that many runs; fail_begin fails
 * the first job's begin (its inputs cannot be made). */
struct fake {
	int begun, ran, fail_after, prepared, fail_begin;
};

static void fake_prepare(void *ctx, const struct ksmm_tune_item *items, size_t n,
			 const struct sp_report *report)
{
	for (size_t i = 0; i < n; i++) /* only what can run: never vec 8 */
		assert_int_equal(items[i].cfg.vec, 1);
	((struct fake *)ctx)->prepared += (int)n;
}

static int fake_begin(void *ctx, const struct ksmm_tune_job *job, struct sp_err *err)
{
	struct fake *f = ctx;
	if (f->fail_begin)
		return sp_fail(err, "out of memory for the inputs");
	f->begun++;
	return 0;
}

static int fake_run(void *ctx, const struct ksmm_config *cfg, struct ksmm_result *r,
		    struct sp_err *err)
{
	struct fake *f = ctx;
	if (f->fail_after && f->ran == f->fail_after)
		return sp_fail(err, "killed");
	f->ran++;
	r->ms = cfg->tile_rows / 100.0;
	r->std = 0.001;
	r->rel_err = 1e-7;
	strcpy(r->status, cfg->tile_k == 16 ? "compile: error: no" : "ok");
	return 0;
}

static void fake_end(void *ctx)
{
}

static void test_tune_sweep(void **state)
{
	const char *yaml = "simt: {tile_rows: [32, 64, 128], tile_k: [8, 16], tile_batch: 64, "
			   "thread_rows: 4, thread_batch: 4, vec: [1, 8], stages: 2, tf32: 0}\n";
	struct ksmm_space space;
	struct sp_err e;
	assert_int_equal(ksmm_space_read_buffer(yaml, strlen(yaml), "s.yaml", &space, &e), 0);
	struct ksmm_pattern_list pl = {0};
	struct ksmm_pattern_entry pe = {{2, 64, 64, 2}, 0, "--pattern"};
	assert_int_equal(ksmm_pattern_list_add(&pl, &pe, &e), 0);
	pe.p = (struct ksmm_pattern){1, 256, 64, 1};
	assert_int_equal(ksmm_pattern_list_add(&pl, &pe, &e), 0);
	const int64_t batches[] = {100};
	const enum ksmm_dtype dtypes[] = {KSMM_F32, KSMM_F16};
	const enum ksmm_layout layouts[] = {KSMM_BS_LAST};
	struct ksmm_tune_opts o = {&pl, batches, 1, dtypes, 2, layouts, 1, &space, 1, 1, 0, NULL};
	/* per job: 3 x 2 x 2 = 12 configurations, vec 8 never runs (6), and
	 * tile_rows 128 not for b = 64 (2 more): 4 and 6 runnable */
	struct fake f = {.fail_after = 7};
	struct ksmm_runner rn = {fake_runnable, fake_begin, fake_run, fake_end, &f, fake_prepare};
	struct ksmm_tune_stats st;
	const char *out = test_path("r.csv");
	assert_int_equal(ksmm_tune_run(&o, &rn, out, &st, &e), -1); /* killed after 7 */
	assert_string_equal(e.msg, "killed");
	assert_int_equal(f.prepared, 2 * (4 + 6)); /* all of it, before the first run */
	struct ksmm_result *r;
	size_t n;
	assert_int_equal(ksmm_results_read(out, &r, &n, &e), 0);
	assert_int_equal(n, 7);
	free(r);
	/* rerun: the rest, nothing twice */
	f = (struct fake){0};
	assert_int_equal(ksmm_tune_run(&o, &rn, out, &st, &e), 0);
	assert_int_equal(st.resumed, 7);
	assert_int_equal(st.run, 2 * (4 + 6) - 7);
	assert_int_equal(f.prepared, 2 * (4 + 6) - 7); /* not what the file holds */
	assert_int_equal(st.skipped, 2 * (8 + 6));
	assert_int_equal(f.begun, 3); /* jobs 2..4; job 1 was done */
	assert_int_equal(ksmm_results_read(out, &r, &n, &e), 0);
	assert_int_equal(n, 20);
	int compile_failures = 0;
	for (size_t i = 0; i < n; i++) {
		compile_failures += strncmp(r[i].status, "compile: ", 9) == 0;
		for (size_t j = 0; j < i; j++) {
			struct ksmm_result_key a, b;
			ksmm_result_key(&r[i], &a);
			ksmm_result_key(&r[j], &b);
			int same = 1;
			for (int k = 0; k < KSMM_RESULT_KEYS; k++)
				same &= strcmp(a.v[k], b.v[k]) == 0;
			assert_false(same);
		}
	}
	assert_int_equal(compile_failures, 10); /* half the runnable ones have tile_k 16 */
	free(r);
	/* a third run does nothing and begins no job */
	f = (struct fake){0};
	assert_int_equal(ksmm_tune_run(&o, &rn, out, &st, &e), 0);
	assert_int_equal(st.run, 0);
	assert_int_equal(f.begun, 0);
	assert_int_equal(f.prepared, 0);

	/* parts: 4 jobs dealt to 3 parts, each job in exactly one */
	int total = 0;
	for (int part = 1; part <= 3; part++) {
		o.parts = 3;
		o.part = part;
		f = (struct fake){0};
		assert_int_equal(ksmm_tune_run(&o, &rn, test_path("part%d.csv", part), &st, &e), 0);
		assert_int_equal(st.jobs, part == 1 ? 2 : 1);
		total += (int)st.run;
	}
	assert_int_equal(total, 20);
	/* --ncu: one configuration */
	o.parts = o.part = 1;
	o.max_runs = 1;
	f = (struct fake){0};
	assert_int_equal(ksmm_tune_run(&o, &rn, test_path("ncu.csv"), &st, &e), 0);
	assert_int_equal(f.ran, 1);
	assert_int_equal(f.prepared, 1);
	ksmm_pattern_list_free(&pl);
	ksmm_space_free(&space);
}

/* ksmm_tune_run over a one-point space, pattern p (from `where`) at one
 * batch, f32 bsl, into out, with the fake runner f. */
static int tune_one(struct ksmm_pattern p, const char *where, int64_t batch, struct fake *f,
		    const char *out, struct sp_err *e)
{
	const char *yaml = "simt: {tile_rows: 32, tile_k: 8, tile_batch: 64, thread_rows: 4, "
			   "thread_batch: 4, vec: 1, stages: 2, tf32: 0}\n";
	struct ksmm_space space;
	assert_int_equal(ksmm_space_read_buffer(yaml, strlen(yaml), "s.yaml", &space, e), 0);
	struct ksmm_pattern_list pl = {0};
	struct ksmm_pattern_entry pe = {p, 0, ""};
	snprintf(pe.where, sizeof pe.where, "%s", where);
	assert_int_equal(ksmm_pattern_list_add(&pl, &pe, e), 0);
	const int64_t batches[] = {batch};
	const enum ksmm_dtype dtypes[] = {KSMM_F32};
	const enum ksmm_layout layouts[] = {KSMM_BS_LAST};
	struct ksmm_tune_opts o = {&pl, batches, 1, dtypes, 1, layouts, 1, &space, 1, 1, 0, NULL};
	struct ksmm_runner rn = {fake_runnable, fake_begin, fake_run, fake_end, f, NULL};
	struct ksmm_tune_stats st;
	int rc = ksmm_tune_run(&o, &rn, out, &st, e);
	ksmm_pattern_list_free(&pl);
	ksmm_space_free(&space);
	return rc;
}

static void test_tune_bad_pattern(void **state)
{
	struct fake f = {0};
	struct sp_err e;
	const char *out = test_path("never.csv");
	assert_int_equal(tune_one((struct ksmm_pattern){128, 1024, 64, 64}, "p.in:3", 25088, &f,
				  out, &e),
			 -1);
	assert_string_equal(e.msg, "p.in:3: pattern 128,1024,64,64 at batch 25088: a*b*d*batch "
				   "reaches 2^31, past 32-bit indexing");
	assert_false(test_exists(out));
}

/* A sweep that fails before its first row leaves no CSV of a header alone,
 * as a kill there does not; an empty file there before stays empty. */
static void test_tune_fails_before_first_row(void **state)
{
	const struct ksmm_pattern p = {2, 64, 64, 2};
	struct fake f = {.fail_begin = 1};
	struct sp_err e;
	const char *out = test_path("early.csv");
	assert_int_equal(tune_one(p, "--pattern", 100, &f, out, &e), -1);
	assert_string_equal(e.msg, "out of memory for the inputs");
	assert_false(test_exists(out));
	test_spit(out, "", 0);
	assert_int_equal(tune_one(p, "--pattern", 100, &f, out, &e), -1);
	char *text = test_read(out);
	assert_string_equal(text, "");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_best_reduce),
		cmocka_unit_test(test_table_rules),
		cmocka_unit_test(test_tune_sweep),
		cmocka_unit_test(test_tune_bad_pattern),
		cmocka_unit_test(test_tune_fails_before_first_row),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
