#include "ksmm/ksmm_tune.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/strmap.h"
#include "sweep/sweep.h"

static void progress(const struct ksmm_tune_opts *o, uint64_t done, uint64_t total)
{
	sp_report_progress(o->report, "ksmm-tune", done, total);
}

int ksmm_tune_jobs(const struct ksmm_tune_opts *o, struct ksmm_tune_job **jobs, size_t *n,
		   struct sp_err *err)
{
	size_t cap = 0, m = 0;
	struct ksmm_tune_job *v = NULL;
	for (size_t i = 0; i < o->patterns->n; i++) {
		const struct ksmm_pattern_entry *e = &o->patterns->v[i];
		size_t nb = e->batch ? 1 : o->nbatches;
		for (size_t b = 0; b < nb; b++) {
			int64_t batch = e->batch ? e->batch : o->batches[b];
			if (ksmm_pattern_check(&e->p, batch, e->where, err)) {
				free(v);
				return -1;
			}
			for (size_t t = 0; t < o->ndtypes; t++)
				for (size_t l = 0; l < o->nlayouts; l++) {
					if (m == cap) {
						cap = cap ? 2 * cap : 64;
						void *g = realloc(v, cap * sizeof *v);
						if (!g) {
							free(v);
							return sp_fail(err, "%s: out of memory", e->where);
						}
						v = g;
					}
					v[m++] = (struct ksmm_tune_job){e->p, batch, o->dtypes[t],
									o->layouts[l], e->where};
				}
		}
	}
	*jobs = v;
	*n = m;
	return 0;
}

static struct ksmm_result job_result(const struct ksmm_tune_job *j, uint64_t c,
				     const struct ksmm_space *s)
{
	struct ksmm_result r = {.batch = j->batch, .p = j->p, .dtype = j->dtype,
				.layout = j->layout};
	ksmm_space_at(s, c, &r.cfg);
	return r;
}

/* Configuration c of the space for r's job: 0 when it can run, else
 * nonzero with the reason (the space says it is for other dtypes or
 * layouts, or the runner's check). */
static int skipped(const struct ksmm_tune_opts *o, ksmm_runnable_fn check, void *ctx, uint64_t c,
		   const struct ksmm_result *r, char *why, size_t n)
{
	if (!ksmm_space_for(o->space, c, r->dtype, r->layout)) {
		snprintf(why, n, "the space lists it for other dtypes or layouts than %s %s",
			 ksmm_dtype_name(r->dtype), ksmm_layout_name(r->layout));
		return 1;
	}
	return check(ctx, &r->p, r->batch, r->dtype, r->layout, &r->cfg, why, n);
}

static int owned(const struct ksmm_tune_opts *o, size_t job)
{
	return (int)(job % (size_t)o->parts) == o->part - 1;
}

/* The jobs of this part and how many configurations each can run. */
struct plan {
	struct ksmm_tune_job *jobs;
	size_t njobs;
	uint64_t runnable, skipped;
};

static int make_plan(const struct ksmm_tune_opts *o, ksmm_runnable_fn check, void *ctx,
		     struct plan *pl, struct sp_err *err)
{
	*pl = (struct plan){0};
	if (ksmm_tune_jobs(o, &pl->jobs, &pl->njobs, err))
		return -1;
	for (size_t j = 0; j < pl->njobs; j++) {
		if (!owned(o, j))
			continue;
		for (uint64_t c = 0; c < o->space->count; c++) {
			struct ksmm_result r = job_result(&pl->jobs[j], c, o->space);
			char why[200];
			if (skipped(o, check, ctx, c, &r, why, sizeof why))
				pl->skipped++;
			else
				pl->runnable++;
		}
	}
	return 0;
}

/* A sweep into a file (resumed) or onto standard output (whole). */
struct out {
	int whole;
	struct sweep s;
	struct csv_writer w;
};

static struct csv_writer *out_writer(struct out *f)
{
	return f->whole ? &f->w : &f->s.w;
}

static int out_open(struct out *f, const char *path, struct sp_err *err)
{
	static const char *const *keys = ksmm_result_columns;
	f->whole = strcmp(path, "-") == 0;
	if (f->whole)
		return csv_writer_open(&f->w, path, ksmm_result_columns, KSMM_RESULT_COLS, err);
	return sweep_open(&f->s, path, ksmm_result_columns, KSMM_RESULT_COLS, keys,
			  KSMM_RESULT_KEYS, err);
}

static int out_done(struct out *f, const struct ksmm_result *r)
{
	if (f->whole)
		return 0;
	struct ksmm_result_key k;
	ksmm_result_key(r, &k);
	return sweep_done(&f->s, k.v);
}

static int out_end_row(struct out *f, struct sp_err *err)
{
	return f->whole ? csv_writer_end_row(&f->w, err) : sweep_end_row(&f->s, err);
}

static int out_close(struct out *f, struct sp_err *err)
{
	return f->whole ? csv_writer_commit(&f->w, err) : sweep_close(&f->s, err);
}

/* Giving up: the rows written stay (they are complete), and a file this
 * run created with no row goes, as a kill before the first row removes it. */
static void out_abort(struct out *f)
{
	if (f->whole)
		csv_writer_abort(&f->w);
	else
		sweep_abort(&f->s);
}

/* One job: every runnable configuration not yet in the file. The runner's
 * begin (inputs, the CPU reference) runs only when there is work. */
static int run_job(const struct ksmm_tune_opts *o, const struct ksmm_runner *rn,
		   const struct ksmm_tune_job *job, struct out *f, uint64_t *done,
		   uint64_t total, struct ksmm_tune_stats *st, struct sp_err *err)
{
	int began = 0, rc = 0;
	for (uint64_t c = 0; c < o->space->count; c++) {
		if (o->max_runs && st->run >= o->max_runs)
			break;
		struct ksmm_result r = job_result(job, c, o->space);
		char why[200];
		if (skipped(o, rn->check, rn->ctx, c, &r, why, sizeof why))
			continue;
		if (out_done(f, &r)) {
			st->resumed++;
			progress(o, ++*done, total);
			continue;
		}
		if (!began) {
			if (rn->begin(rn->ctx, job, err))
				return -1;
			began = 1;
		}
		if ((rc = rn->run(rn->ctx, &r.cfg, &r, err)))
			break;
		st->run++;
		st->ok += strcmp(r.status, "ok") == 0;
		if (strcmp(r.status, "ok") != 0)
			sp_report_msg(o->report, 2, "%s: pattern %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			    " batch %" PRId64 " %s %s: %s", job->where, r.p.a, r.p.b, r.p.c, r.p.d,
			    r.batch, ksmm_dtype_name(r.dtype), ksmm_layout_name(r.layout), r.status);
		ksmm_result_write(out_writer(f), &r);
		if ((rc = out_end_row(f, err)))
			break;
		progress(o, ++*done, total);
	}
	if (began)
		rn->end(rn->ctx);
	return rc;
}

/* What the sweep will run (this part's runnable configurations not in the
 * file yet, up to max_runs) handed to the runner's prepare. */
static int prepare(const struct ksmm_tune_opts *o, const struct ksmm_runner *rn,
		   const struct plan *pl, struct out *f, struct sp_err *err)
{
	if (!rn->prepare)
		return 0;
	struct ksmm_tune_item *items = malloc((pl->runnable ? pl->runnable : 1) * sizeof *items);
	if (!items)
		return sp_fail(err, "out of memory for %" PRIu64 " configurations", pl->runnable);
	size_t n = 0;
	for (size_t j = 0; j < pl->njobs; j++) {
		if (!owned(o, j))
			continue;
		for (uint64_t c = 0; c < o->space->count && n < pl->runnable; c++) {
			if (o->max_runs && n >= o->max_runs)
				break;
			struct ksmm_result r = job_result(&pl->jobs[j], c, o->space);
			char why[200];
			if (skipped(o, rn->check, rn->ctx, c, &r, why, sizeof why) || out_done(f, &r))
				continue;
			items[n++] = (struct ksmm_tune_item){&pl->jobs[j], r.cfg};
		}
	}
	rn->prepare(rn->ctx, items, n, o->report);
	free(items);
	return 0;
}

int ksmm_tune_run(const struct ksmm_tune_opts *o, const struct ksmm_runner *rn, const char *out,
		  struct ksmm_tune_stats *st, struct sp_err *err)
{
	struct plan pl;
	*st = (struct ksmm_tune_stats){0};
	if (make_plan(o, rn->check, rn->ctx, &pl, err))
		return -1;
	struct out f = {0};
	if (out_open(&f, out, err)) {
		free(pl.jobs);
		return -1;
	}
	uint64_t total = o->max_runs && o->max_runs < pl.runnable ? o->max_runs : pl.runnable;
	uint64_t done = 0;
	st->skipped = pl.skipped;
	sp_report_msg(o->report, 1, "%s: %" PRIu64 " configuration%s to run, %" PRIu64
	    " that cannot run skipped (part %d of %d)", out, pl.runnable, sp_plural(pl.runnable),
	    pl.skipped, o->part, o->parts);
	int rc = prepare(o, rn, &pl, &f, err);
	for (size_t j = 0; j < pl.njobs && !rc; j++) {
		if (!owned(o, j))
			continue;
		st->jobs++;
		rc = run_job(o, rn, &pl.jobs[j], &f, &done, total, st, err);
	}
	free(pl.jobs);
	if (rc) {
		out_abort(&f);
		return -1;
	}
	return out_close(&f, err);
}

/* The key columns of every row of a CSV, joined by NULs, as a set. */
static int read_done(const char *path, struct strmap *set, struct sp_err *err)
{
	struct ksmm_result *rows;
	size_t n;
	if (ksmm_results_read(path, &rows, &n, err))
		return -1;
	struct buf key = {0};
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct ksmm_result_key k;
		int added;
		ksmm_result_key(&rows[i], &k);
		key.len = 0;
		for (int c = 0; c < KSMM_RESULT_KEYS && !rc; c++)
			rc = buf_add(&key, k.v[c], strlen(k.v[c]) + 1);
		if (rc || !strmap_insert(set, key.data, key.len, &added))
			rc = sp_fail(err, "%s: out of memory", path);
	}
	buf_free(&key);
	free(rows);
	return rc;
}

static int is_done(const struct strmap *set, const struct ksmm_result *r, struct buf *key)
{
	struct ksmm_result_key k;
	ksmm_result_key(r, &k);
	key->len = 0;
	for (int c = 0; c < KSMM_RESULT_KEYS; c++)
		if (buf_add(key, k.v[c], strlen(k.v[c]) + 1))
			return 0;
	return strmap_find(set, key->data, key->len) != NULL;
}

int ksmm_tune_dry_run(const struct ksmm_tune_opts *o, ksmm_runnable_fn check, void *ctx,
		      const char *resume_csv, const char *out, struct ksmm_tune_stats *st,
		      struct sp_err *err)
{
	static const char *const status_col = "status";
	const char *cols[KSMM_RESULT_KEYS + 1];
	memcpy(cols, ksmm_result_columns, KSMM_RESULT_KEYS * sizeof *cols);
	cols[KSMM_RESULT_KEYS] = status_col;
	*st = (struct ksmm_tune_stats){0};
	struct strmap set = {0};
	struct buf key = {0};
	struct ksmm_tune_job *jobs = NULL;
	size_t njobs;
	struct csv_writer w;
	if ((resume_csv && read_done(resume_csv, &set, err)) ||
	    ksmm_tune_jobs(o, &jobs, &njobs, err) ||
	    csv_writer_open(&w, out, cols, KSMM_RESULT_KEYS + 1, err)) {
		strmap_free(&set);
		free(jobs);
		return -1;
	}
	int rc = 0;
	for (size_t j = 0; j < njobs && !rc; j++) {
		if (!owned(o, j))
			continue;
		st->jobs++;
		for (uint64_t c = 0; c < o->space->count && !rc; c++) {
			struct ksmm_result r = job_result(&jobs[j], c, o->space);
			struct ksmm_result_key k;
			char why[200], status[sizeof why + 8];
			if (skipped(o, check, ctx, c, &r, why, sizeof why)) {
				snprintf(status, sizeof status, "skip: %s", why);
				st->skipped++;
			} else if (is_done(&set, &r, &key)) {
				snprintf(status, sizeof status, "done");
				st->resumed++;
			} else {
				snprintf(status, sizeof status, "run");
				st->run++;
			}
			ksmm_result_key(&r, &k);
			for (int i = 0; i < KSMM_RESULT_KEYS; i++)
				csv_writer_str(&w, k.v[i]);
			csv_writer_str(&w, status);
			rc = csv_writer_end_row(&w, err);
		}
	}
	strmap_free(&set);
	buf_free(&key);
	free(jobs);
	if (rc) {
		csv_writer_abort(&w);
		return -1;
	}
	return csv_writer_commit(&w, err);
}
