#include "sample/sample_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "core/rng.h"
#include "sweep/table.h"

void sample_data_free(struct sample_data *d)
{
	free(d->shape);
	free(d->us[0]);
	free(d->us[1]);
	memset(d, 0, sizeof *d);
}

/* The first table's header: shape columns, then the two durations. */
static int take_header(struct sample_data *d, const struct table *t, struct sp_err *err)
{
	size_t nc = t->ncols;
	if (nc < 3 || nc - 2 > SAMPLE_MAX_DIMS || strcmp(table_header(t, nc - 2), "F_dur(us)") ||
	    strcmp(table_header(t, nc - 1), "B_dur(us)"))
		return sp_fail(err, "%s: expected 1 to %d shape columns, then F_dur(us) and "
				    "B_dur(us)",
			       t->name, SAMPLE_MAX_DIMS);
	d->ncols = (int)nc - 2;
	for (int c = 0; c < d->ncols; c++) {
		snprintf(d->cols[c], sizeof d->cols[c], "%s", table_header(t, (size_t)c));
		d->colp[c] = d->cols[c];
	}
	if (sample_features_init(&d->feat, d->name.op, d->colp, d->ncols, err))
		return sp_err_prefix(err, "%s", t->name);
	return 0;
}

static int same_source(const struct sample_data *d, const char *path, const struct table *t,
		       struct sp_err *err)
{
	struct sample_file_name name;
	if (sample_file_name_parse(path, &name, err))
		return -1;
	if (strcmp(name.device, d->name.device) || strcmp(name.op, d->name.op) ||
	    strcmp(name.precision, d->name.precision))
		return sp_fail(err, "%s: %s_%s_%s, not %s's %s_%s_%s", path, name.device, name.op,
			       name.precision, d->first, d->name.device, d->name.op,
			       d->name.precision);
	int same = t->ncols == (size_t)d->ncols + 2;
	for (int c = 0; same && c < d->ncols; c++)
		same = !strcmp(table_header(t, (size_t)c), d->cols[c]);
	return same ? 0 : sp_fail(err, "%s: other columns than %s's", path, d->first);
}

static int take_rows(struct sample_data *d, const struct table *t, struct sp_err *err)
{
	size_t n = d->n + t->nrows;
	int64_t *shape = realloc(d->shape, (n ? n : 1) * (size_t)d->ncols * sizeof *shape);
	if (shape)
		d->shape = shape;
	for (int k = 0; k < 2 && shape; k++) {
		double *us = realloc(d->us[k], (n ? n : 1) * sizeof *us);
		if (!us)
			shape = NULL;
		else
			d->us[k] = us;
	}
	if (!shape)
		return sp_fail(err, "%s: out of memory for %zu rows", t->name, n);
	for (size_t r = 0; r < t->nrows; r++, d->n++) {
		for (int c = 0; c < d->ncols; c++)
			if (sample_shape_cell(t, r, (size_t)c, &d->shape[d->n * (size_t)d->ncols + (size_t)c],
					      err))
				return -1;
		for (int k = 0; k < 2; k++) {
			double *v = &d->us[k][d->n];
			size_t col = (size_t)d->ncols + (size_t)k;
			if (table_double(t, r, col, v, err))
				return -1;
			if (!(*v >= 0 && *v < INFINITY))
				return sp_fail(err, "%s:%zu: %s %s is not a time", t->name,
					       table_line(t, r), table_header(t, col),
					       table_cell(t, r, col));
		}
	}
	return 0;
}

int sample_data_read(const char *const *paths, size_t npaths, struct sample_data *d,
		     struct sp_err *err)
{
	memset(d, 0, sizeof *d);
	if (sample_file_name_parse(paths[0], &d->name, err))
		return -1;
	if (sample_precision_parse(d->name.precision, &d->precision))
		return sp_fail(err, "%s: precision '%s'", paths[0], d->name.precision);
	snprintf(d->first, sizeof d->first, "%s", paths[0]);
	for (size_t i = 0; i < npaths; i++) {
		struct table t;
		if (table_read(paths[i], &t, err))
			goto fail;
		int rc = (i == 0 ? take_header(d, &t, err) : same_source(d, paths[i], &t, err)) ||
			 take_rows(d, &t, err);
		table_free(&t);
		if (rc)
			goto fail;
	}
	return 0;
fail:
	sample_data_free(d);
	return -1;
}

int sample_data_has(const struct sample_data *d, enum sample_direction dir)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->us[dir][i] > 0)
			return 1;
	return 0;
}

/* Features and log times of the rows idx[0..n). */
static void rows_of(const struct sample_data *d, enum sample_direction dir, const size_t *idx,
		    size_t n, double *x, double *y)
{
	int nf = d->feat.n;
	for (size_t i = 0; i < n; i++) {
		size_t r = idx[i];
		sample_features_of(&d->feat, d->shape + r * (size_t)d->ncols, d->precision,
				   x + i * (size_t)nf);
		y[i] = log(d->us[dir][r]);
	}
}

/* Fold f of k is every row whose place in the seeded shuffle is f mod k. */
static int cross_validate(const struct sample_data *d, enum sample_direction dir,
			  const struct gbt_params *params, int k, struct sample_cv *cv,
			  struct sp_err *err)
{
	size_t n = d->n, nf = (size_t)d->feat.n;
	size_t *perm = malloc(n * sizeof *perm), *train = malloc(n * sizeof *train);
	double *x = malloc(n * nf * sizeof *x), *y = malloc(n * sizeof *y);
	double *rel = malloc(n * sizeof *rel);
	int rc = -1;
	if (!perm || !train || !x || !y || !rel) {
		sp_fail(err, "%s: out of memory", d->first);
		goto done;
	}
	struct rng rng;
	rng_init(&rng, params->seed, 1);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rng_below(&rng, i + 1), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	size_t nrel = 0;
	for (int f = 0; f < k; f++) {
		size_t ntrain = 0;
		for (size_t i = 0; i < n; i++)
			if ((int)(i % (size_t)k) != f)
				train[ntrain++] = perm[i];
		rows_of(d, dir, train, ntrain, x, y);
		struct gbt g;
		if (gbt_fit(&g, x, y, ntrain, d->feat.n, d->feat.nbase, params, err))
			goto done;
		for (size_t i = (size_t)f; i < n; i += (size_t)k) {
			double xi[SAMPLE_MAX_FEATURES], yi, t = d->us[dir][perm[i]];
			rows_of(d, dir, &perm[i], 1, xi, &yi);
			rel[nrel++] = fabs(exp(gbt_predict(&g, xi)) - t) / t;
		}
		gbt_free(&g);
	}
	num_sort(rel, nrel);
	cv->folds = k;
	cv->mape = 0;
	for (size_t i = 0; i < nrel; i++)
		cv->mape += rel[i] / (double)nrel;
	cv->median = num_median_sorted(rel, nrel);
	cv->p90 = rel[(size_t)ceil(0.9 * (double)nrel) - 1];
	rc = 0;
done:
	free(perm), free(train), free(x), free(y), free(rel);
	return rc;
}

static int check_rows(const struct sample_data *d, enum sample_direction dir, int folds,
		      struct sp_err *err)
{
	size_t need = SAMPLE_FIT_MIN_ROWS;
	if (folds >= 2 && (size_t)(2 * folds) > need)
		need = (size_t)(2 * folds);
	if (d->n < need)
		return sp_fail(err, "%s: %zu rows, too few to fit: at least %zu are needed "
				    "(%d, and 2 a fold of cross-validation)",
			       d->first, d->n, need, SAMPLE_FIT_MIN_ROWS);
	for (size_t i = 0; i < d->n; i++)
		if (!(d->us[dir][i] > 0))
			return sp_fail(err, "%s: row %zu: %s is 0, and other rows' are not: a time "
					    "that cannot be fitted",
				       d->first, i + 1, sample_direction_columns[dir]);
	return 0;
}

int sample_fit(const struct sample_data *d, enum sample_direction dir,
	       const struct gbt_params *params, int folds, struct sample_model *m,
	       struct sample_cv *cv, struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	memset(cv, 0, sizeof *cv);
	if (check_rows(d, dir, folds, err))
		return -1;
	if (folds >= 2 && cross_validate(d, dir, params, folds, cv, err))
		return -1;
	snprintf(m->op, sizeof m->op, "%s", d->name.op);
	snprintf(m->device, sizeof m->device, "%s", d->name.device);
	m->precision = d->precision;
	m->direction = dir;
	m->ncols = d->ncols;
	for (int c = 0; c < d->ncols; c++) {
		snprintf(m->cols[c], sizeof m->cols[c], "%s", d->cols[c]);
		m->colp[c] = m->cols[c];
	}
	m->rows = d->n;
	if (sample_features_init(&m->feat, m->op, m->colp, m->ncols, err))
		return -1;
	size_t n = d->n, *idx = malloc(n * sizeof *idx);
	double *x = malloc(n * (size_t)d->feat.n * sizeof *x), *y = malloc(n * sizeof *y);
	int rc = -1;
	if (!idx || !x || !y) {
		sp_fail(err, "%s: out of memory", d->first);
	} else {
		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		rows_of(d, dir, idx, n, x, y);
		rc = gbt_fit(&m->gbt, x, y, n, d->feat.n, d->feat.nbase, params, err);
	}
	free(idx), free(x), free(y);
	return rc;
}
