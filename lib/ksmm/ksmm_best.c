#include "ksmm/ksmm_best.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Order of the table and of the reduction: the key without the config. */
static int key_cmp(const struct ksmm_result *x, const struct ksmm_result *y)
{
	const int64_t u[7] = {x->dtype, x->layout, x->p.a, x->p.b, x->p.c, x->p.d, x->batch};
	const int64_t v[7] = {y->dtype, y->layout, y->p.a, y->p.b, y->p.c, y->p.d, y->batch};
	for (int i = 0; i < 7; i++)
		if (u[i] != v[i])
			return u[i] < v[i] ? -1 : 1;
	return 0;
}

/* Within a key: ok rows first, fastest first. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct ksmm_result *x = pa, *y = pb;
	int c = key_cmp(x, y);
	if (c)
		return c;
	int xok = strcmp(x->status, "ok") == 0, yok = strcmp(y->status, "ok") == 0;
	if (xok != yok)
		return xok ? -1 : 1;
	return x->ms < y->ms ? -1 : x->ms > y->ms ? 1 : 0;
}

int ksmm_best_reduce(const char *const *paths, size_t npaths, struct ksmm_result **out,
		     size_t *n, size_t *nskipped, struct sp_err *err)
{
	struct ksmm_result *all = NULL;
	size_t nall = 0;
	for (size_t f = 0; f < npaths; f++) {
		struct ksmm_result *r;
		size_t m;
		if (ksmm_results_read(paths[f], &r, &m, err)) {
			free(all);
			return -1;
		}
		struct ksmm_result *grown = realloc(all, (nall + m + 1) * sizeof *all);
		if (!grown) {
			free(all), free(r);
			return sp_fail(err, "%s: out of memory", paths[f]);
		}
		all = grown;
		memcpy(all + nall, r, m * sizeof *r);
		nall += m;
		free(r);
	}
	if (nall == 0) {
		free(all);
		return sp_fail(err, "%s: no rows to reduce", npaths ? paths[0] : "(no file)");
	}
	qsort(all, nall, sizeof *all, row_cmp);
	size_t kept = 0, skipped = 0;
	for (size_t i = 0; i < nall; i++) {
		if (i > 0 && key_cmp(&all[i], &all[i - 1]) == 0)
			continue; /* not the first of its key */
		if (strcmp(all[i].status, "ok") == 0)
			all[kept++] = all[i];
		else
			skipped++;
	}
	*out = all;
	*n = kept;
	*nskipped = skipped;
	return 0;
}

int ksmm_best_write(const char *path, const struct ksmm_result *rows, size_t n,
		    struct sp_err *err)
{
	struct csv_writer w;
	if (csv_writer_open(&w, path, ksmm_result_columns, KSMM_RESULT_COLS, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		ksmm_result_write(&w, &rows[i]);
		if (csv_writer_end_row(&w, err)) {
			csv_writer_abort(&w);
			return -1;
		}
	}
	return csv_writer_commit(&w, err);
}

int ksmm_table_read(const char *path, struct ksmm_table *t, struct sp_err *err)
{
	*t = (struct ksmm_table){0};
	if (ksmm_results_read(path, &t->rows, &t->n, err))
		return -1;
	t->path = strdup(path);
	if (!t->path) {
		ksmm_table_free(t);
		return sp_fail(err, "%s: out of memory", path);
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct ksmm_result *r = &t->rows[i];
		if (strcmp(r->status, "ok") != 0) {
			sp_fail(err, "%s:%zu: status '%s': a best table holds only ok rows "
				"(make one with ksmm-tune best)", path, r->line, r->status);
			ksmm_table_free(t);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (key_cmp(r, &t->rows[j]) == 0) {
				sp_fail(err, "%s:%zu: a second row for pattern %" PRId64 ",%" PRId64
					",%" PRId64 ",%" PRId64 " at batch %" PRId64
					" (first at line %zu)", path, r->line, r->p.a, r->p.b,
					r->p.c, r->p.d, r->batch, t->rows[j].line);
				ksmm_table_free(t);
				return -1;
			}
	}
	return 0;
}

void ksmm_table_free(struct ksmm_table *t)
{
	free(t->path);
	free(t->rows);
	*t = (struct ksmm_table){0};
}

const char *ksmm_rule_name(enum ksmm_rule r)
{
	static const char *const names[] = {"exact", "nearest batch", "nearest pattern",
					    "default"};
	return names[r];
}

static double log_ratio(int64_t x, int64_t y)
{
	return fabs(log2((double)x / (double)y));
}

/* How far row r is from (p, batch), for rules 2 and 3. */
static double distance(const struct ksmm_result *r, const struct ksmm_pattern *p,
		       int64_t batch)
{
	return log_ratio(r->p.a, p->a) + log_ratio(r->p.b, p->b) + log_ratio(r->p.c, p->c) +
	       log_ratio(r->p.d, p->d) + log_ratio(r->batch, batch);
}

int ksmm_table_choose(const struct ksmm_table *t, const struct ksmm_pattern *p, int64_t batch,
		      enum ksmm_dtype dt, enum ksmm_layout l, ksmm_runnable_fn runnable,
		      void *ctx, struct ksmm_config *out, enum ksmm_rule *rule,
		      const struct ksmm_result **from, struct sp_err *err)
{
	*rule = KSMM_RULE_DEFAULT;
	*from = NULL;
	/* Candidates by rule, then distance, then the larger batch; best kept. */
	const struct ksmm_result *best = NULL;
	enum ksmm_rule best_rule = KSMM_RULE_DEFAULT;
	double best_dist = 0;
	for (size_t i = 0; t && i < t->n; i++) {
		const struct ksmm_result *r = &t->rows[i];
		if (r->dtype != dt || r->layout != l)
			continue;
		int same = r->p.a == p->a && r->p.b == p->b && r->p.c == p->c && r->p.d == p->d;
		enum ksmm_rule k = !same		? KSMM_RULE_NEAREST_PATTERN
				   : r->batch == batch ? KSMM_RULE_EXACT
							: KSMM_RULE_NEAREST_BATCH;
		char why[200];
		if (runnable(ctx, p, batch, dt, l, &r->cfg, why, sizeof why)) {
			if (k == KSMM_RULE_EXACT)
				return sp_fail(err, "%s:%zu: the row for pattern %" PRId64 ",%" PRId64
					       ",%" PRId64 ",%" PRId64 " at batch %" PRId64
					       " cannot run it: %s", t->path, r->line, p->a, p->b,
					       p->c, p->d, batch, why);
			continue;
		}
		double dist = distance(r, p, batch);
		if (!best || k < best_rule || (k == best_rule && dist < best_dist) ||
		    (k == best_rule && dist == best_dist && r->batch > best->batch)) {
			best = r;
			best_rule = k;
			best_dist = dist;
		}
	}
	if (best) {
		*out = best->cfg;
		*rule = best_rule;
		*from = best;
	}
	return 0;
}
