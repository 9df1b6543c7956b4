#include "ksmm/ksmm_results.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksmm/ksmm_space.h"
#include "sweep/table.h"

const char *const ksmm_result_columns[KSMM_RESULT_COLS] = {
	"batch",	"a",	  "b",		 "c",	      "d",	"dtype",  "layout",
	"variant",	"tile_rows", "tile_k",	 "tile_batch", "thread_rows", "thread_batch",
	"vec",		"stages",    "tf32",	 "tile_d",     "ms",	"std",	  "rel_err",
	"status",
};

void ksmm_result_key(const struct ksmm_result *r, struct ksmm_result_key *k)
{
	const int64_t nums[5] = {r->batch, r->p.a, r->p.b, r->p.c, r->p.d};
	for (int i = 0; i < 5; i++)
		snprintf(k->text[i], sizeof k->text[i], "%" PRId64, nums[i]);
	snprintf(k->text[5], sizeof k->text[5], "%s", ksmm_dtype_name(r->dtype));
	snprintf(k->text[6], sizeof k->text[6], "%s", ksmm_layout_name(r->layout));
	snprintf(k->text[7], sizeof k->text[7], "%s", ksmm_variant_name(r->cfg.variant));
	for (int p = 0; p < KSMM_P_COUNT; p++)
		snprintf(k->text[8 + p], sizeof k->text[8 + p], "%d",
			 ksmm_config_get(&r->cfg, (enum ksmm_param)p));
	for (int i = 0; i < KSMM_RESULT_KEYS; i++)
		k->v[i] = k->text[i];
}

void ksmm_result_write(struct csv_writer *w, const struct ksmm_result *r)
{
	struct ksmm_result_key k;
	ksmm_result_key(r, &k);
	for (int i = 0; i < KSMM_RESULT_KEYS; i++)
		csv_writer_str(w, k.v[i]);
	csv_writer_double(w, r->ms, 6);
	csv_writer_double(w, r->std, 4);
	csv_writer_double(w, r->rel_err, 4);
	csv_writer_str(w, r->status);
}

/* Column col of row i as one of names (n of them); the index. */
static int cell_name(const struct table *t, size_t i, size_t col, const char *const *names,
		     int n, const char *expected, int *out, struct sp_err *err)
{
	const char *text = table_cell(t, i, col);
	for (int k = 0; k < n; k++)
		if (strcmp(text, names[k]) == 0) {
			*out = k;
			return 0;
		}
	char shown[64];
	return sp_fail(err, "%s:%zu: column '%s': expected %s, found '%s'", t->name,
		       table_line(t, i), table_header(t, col), expected,
		       sp_clip(shown, sizeof shown, text));
}

static int cell_int(const struct table *t, size_t i, size_t col, int64_t min, int64_t max,
		    int64_t *out, struct sp_err *err)
{
	if (table_int(t, i, col, out, err))
		return -1;
	if (*out < min || *out > max)
		return sp_fail(err, "%s:%zu: column '%s': %" PRId64 " is out of range (%" PRId64
			       " to %" PRId64 ")", t->name, table_line(t, i), table_header(t, col),
			       *out, min, max);
	return 0;
}

static int parse_row(const struct table *t, size_t i, struct ksmm_result *r, struct sp_err *err)
{
	static const char *const dtypes[] = {"fp32", "fp16", "bf16"};
	static const char *const layouts[] = {"bsf", "bsl"};
	static const char *const variants[] = {"simt", "mma"};
	int64_t v[5];
	int dtype, layout, variant;
	*r = (struct ksmm_result){.line = table_line(t, i)};
	for (int c = 0; c < 5; c++)
		if (cell_int(t, i, c, 1, INT32_MAX, &v[c], err))
			return -1;
	r->batch = v[0];
	r->p = (struct ksmm_pattern){v[1], v[2], v[3], v[4]};
	if (cell_name(t, i, 5, dtypes, 3, "fp32, fp16 or bf16", &dtype, err) ||
	    cell_name(t, i, 6, layouts, 2, "bsf or bsl", &layout, err) ||
	    cell_name(t, i, 7, variants, 2, "simt or mma", &variant, err))
		return -1;
	r->dtype = (enum ksmm_dtype)dtype;
	r->layout = (enum ksmm_layout)layout;
	r->cfg.variant = (enum ksmm_variant)variant;
	for (int p = 0; p < KSMM_P_COUNT; p++) {
		int64_t x;
		if (table_int(t, i, 8 + p, &x, err))
			return -1;
		const char *refusal = ksmm_param_refusal((enum ksmm_param)p, x);
		if (refusal)
			return sp_fail(err, "%s:%zu: column '%s': %" PRId64 " is %s", t->name,
				       table_line(t, i), table_header(t, 8 + p), x, refusal);
		ksmm_config_set(&r->cfg, (enum ksmm_param)p, (int)x);
	}
	if (table_double(t, i, KSMM_RESULT_KEYS, &r->ms, err) ||
	    table_double(t, i, KSMM_RESULT_KEYS + 1, &r->std, err) ||
	    table_double(t, i, KSMM_RESULT_KEYS + 2, &r->rel_err, err))
		return -1;
	const char *status = table_cell(t, i, KSMM_RESULT_KEYS + 3);
	if (!*status)
		return sp_fail(err, "%s:%zu: column 'status' is empty", t->name, r->line);
	snprintf(r->status, sizeof r->status, "%s", status);
	/* An ok row's time is what best ranks by: a positive, finite number. */
	if (strcmp(status, "ok") == 0 && !(r->ms > 0 && isfinite(r->ms)))
		return sp_fail(err, "%s:%zu: an ok row with ms = %g", t->name, r->line, r->ms);
	return 0;
}

static int read_table(struct table *t, struct ksmm_result **out, size_t *n, struct sp_err *err)
{
	int foreign = t->ncols != KSMM_RESULT_COLS;
	for (size_t c = 0; !foreign && c < KSMM_RESULT_COLS; c++)
		foreign = strcmp(table_header(t, c), ksmm_result_columns[c]) != 0;
	if (foreign)
		return sp_fail(err, "%s: not a ksmm-tune CSV: the header is not "
			       "batch,a,b,c,d,dtype,layout,variant,tile_rows,...,status", t->name);
	struct ksmm_result *r = malloc((t->nrows ? t->nrows : 1) * sizeof *r);
	if (!r)
		return sp_fail(err, "%s: out of memory", t->name);
	for (size_t i = 0; i < t->nrows; i++)
		if (parse_row(t, i, &r[i], err)) {
			free(r);
			return -1;
		}
	*out = r;
	*n = t->nrows;
	return 0;
}

int ksmm_results_read_buffer(const void *buf, size_t len, const char *name,
			     struct ksmm_result **out, size_t *n, struct sp_err *err)
{
	struct table t;
	if (table_read_buffer(buf, len, name, &t, err))
		return -1;
	int rc = read_table(&t, out, n, err);
	table_free(&t);
	return rc;
}

int ksmm_results_read(const char *path, struct ksmm_result **out, size_t *n, struct sp_err *err)
{
	struct table t;
	if (table_read(path, &t, err))
		return -1;
	int rc = read_table(&t, out, n, err);
	table_free(&t);
	return rc;
}
