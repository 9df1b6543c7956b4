#include "ksmm/ksmm_bench_csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/csv_writer.h"
#include "ksmm/ksmm_tune_gpu.h"

/* batch..layout, rule, then ms/rel_err/status per method, then the sums. */
#define FIXED_COLS 8
#define SUM_COLS 5
#define BENCH_COLS (FIXED_COLS + 3 * KSMM_M_COUNT + SUM_COLS)

static void columns(const char *cols[BENCH_COLS], char names[3 * KSMM_M_COUNT][40])
{
	static const char *const fixed[FIXED_COLS] = {"batch", "a",	 "b",	   "c",
						      "d",     "dtype", "layout", "config"};
	static const char *const sums[SUM_COLS] = {"best_baseline", "speedup", "floor_ms",
						   "floor_ratio", "copy_gbs"};
	memcpy(cols, fixed, sizeof fixed);
	for (int m = 0; m < KSMM_M_COUNT; m++) {
		const char *name = ksmm_method_name((enum ksmm_method)m);
		snprintf(names[3 * m], sizeof names[0], "%s_ms", name);
		snprintf(names[3 * m + 1], sizeof names[0], "%s_rel_err", name);
		snprintf(names[3 * m + 2], sizeof names[0], "%s_status", name);
		for (int k = 0; k < 3; k++)
			cols[FIXED_COLS + 3 * m + k] = names[3 * m + k];
	}
	memcpy(cols + FIXED_COLS + 3 * KSMM_M_COUNT, sums, sizeof sums);
}

static void write_row(struct csv_writer *w, const struct ksmm_tune_job *j, enum ksmm_rule rule,
		      const struct ksmm_bench_result *r)
{
	struct ksmm_result key = {.batch = j->batch, .p = j->p, .dtype = j->dtype,
				  .layout = j->layout};
	struct ksmm_result_key k;
	ksmm_result_key(&key, &k);
	for (int i = 0; i < 7; i++)
		csv_writer_str(w, k.v[i]);
	csv_writer_str(w, ksmm_rule_name(rule));
	int best = -1;
	for (int m = 0; m < KSMM_M_COUNT; m++) {
		csv_writer_double(w, r->ms[m], 6);
		csv_writer_double(w, r->rel_err[m], 4);
		csv_writer_str(w, r->status[m]);
		if (m != KSMM_M_KERNEL && strcmp(r->status[m], "ok") == 0 &&
		    (best < 0 || r->ms[m] < r->ms[best]))
			best = m;
	}
	int kernel_ok = strcmp(r->status[KSMM_M_KERNEL], "ok") == 0;
	csv_writer_str(w, best < 0 ? "" : ksmm_method_name((enum ksmm_method)best));
	csv_writer_double(w, best >= 0 && kernel_ok ? r->ms[best] / r->ms[KSMM_M_KERNEL] : NAN,
			  4);
	csv_writer_double(w, r->floor_ms, 6);
	csv_writer_double(w, kernel_ok ? r->ms[KSMM_M_KERNEL] / r->floor_ms : NAN, 4);
	csv_writer_double(w, r->copy_gbs, 5);
}

int ksmm_bench_csv(const struct ksmm_tune_opts *o, const struct ksmm_table *table,
		   const struct ksmm_bench_opts *bo, const char *out, struct sp_err *err)
{
	const char *cols[BENCH_COLS];
	char names[3 * KSMM_M_COUNT][40];
	columns(cols, names);
	struct ksmm_tune_job *jobs;
	size_t n;
	if (ksmm_tune_jobs(o, &jobs, &n, err))
		return -1;
	struct csv_writer w;
	if (csv_writer_open(&w, out, cols, BENCH_COLS, err)) {
		free(jobs);
		return -1;
	}
	struct ksmm_bench_opts opts = *bo;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ksmm_tune_job *j = &jobs[i];
		struct ksmm_config cfg;
		enum ksmm_rule rule;
		const struct ksmm_result *from;
		struct ksmm_bench_result r;
		rc = ksmm_table_choose(table, &j->p, j->batch, j->dtype, j->layout, ksmm_runnable,
				       NULL, &cfg, &rule, &from, err);
		if (!rc && rule == KSMM_RULE_DEFAULT)
			ksmm_config_default(&j->p, j->batch, j->dtype, j->layout, &cfg);
		if (!rc)
			rc = ksmm_bench_pattern(&j->p, j->batch, j->dtype, j->layout, &cfg, &opts,
						&r, err);
		if (!rc) {
			opts.copy_gbs = r.copy_gbs; /* measured once, for every row */
			write_row(&w, j, rule, &r);
			rc = csv_writer_end_row(&w, err);
		}
		sp_report_progress(o->report, "ksmm-tune bench", i + 1, n);
	}
	free(jobs);
	if (rc) {
		csv_writer_abort(&w);
		return -1;
	}
	return csv_writer_commit(&w, err);
}
