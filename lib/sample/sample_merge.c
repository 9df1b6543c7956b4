#include "sample/sample_merge.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "formats/csv_writer.h"
#include "sample/sample_config.h"
#include "sample/sample_op.h"
#include "sweep/table.h"

static int is_count(const char *text)
{
	int64_t v;
	return num_parse_int(text, &v) == NUM_OK && v >= 1 && v <= 1000000 && text[0] != '+' &&
	       text[0] != ' ';
}

static int is_precision(const char *text)
{
	enum sample_precision p;
	return sample_precision_parse(text, &p) == 0;
}

/* Copy fields [from, to) of the name, joined by '_', into out. */
static int join(char *const *field, int from, int to, char *out, size_t size)
{
	size_t n = 0;
	for (int i = from; i < to; i++) {
		int k = snprintf(out + n, size - n, "%s%s", i > from ? "_" : "", field[i]);
		if (k < 0 || (size_t)k >= size - n)
			return -1;
		n += (size_t)k;
	}
	return 0;
}

int sample_file_name_parse(const char *path, struct sample_file_name *name, struct sp_err *err)
{
	memset(name, 0, sizeof *name);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char text[512], *field[64];
	size_t len = strlen(base);
	int n = 0;
	if (len > 4 && len < sizeof text && !strcmp(base + len - 4, ".csv")) {
		memcpy(text, base, len - 4);
		text[len - 4] = '\0';
		for (char *s = text, *f; n < 64 && (f = strsep(&s, "_"));)
			field[n++] = f;
	}
	int stem = 0; /* fields before the precision's */
	if (n >= 5 && is_count(field[n - 1]) && is_count(field[n - 2]) &&
	    is_precision(field[n - 3])) {
		stem = n - 3;
		name->parts = atoi(field[n - 2]);
		name->part = atoi(field[n - 1]);
	} else if (n >= 3 && is_precision(field[n - 1])) {
		stem = n - 1;
	}
	if (stem < 2 || !field[0][0] || join(field, 0, 1, name->device, sizeof name->device) ||
	    join(field, 1, stem, name->op, sizeof name->op) || !name->op[0])
		return sp_fail(err, "%s: not a kernel-sample file name "
				    "(DEVICE_OPERATOR_PRECISION_PARTS_PART.csv or "
				    "DEVICE_OPERATOR_PRECISION.csv)",
			       path);
	snprintf(name->precision, sizeof name->precision, "%s", field[stem]);
	return 0;
}

struct row {
	int64_t key[SAMPLE_MAX_DIMS];
	size_t file, row, order;
};

/* By shape (the unused key places are 0 in every row), then input order. */
static int compare_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	for (size_t i = 0; i < SAMPLE_MAX_DIMS; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

/* The inputs agree on device, operator, precision and header. */
static int check_same(const char *const *inputs, size_t n, const struct table *t,
		      struct sp_err *err)
{
	struct sample_file_name first, name;
	if (sample_file_name_parse(inputs[0], &first, err))
		return -1;
	if (t[0].ncols < 3 || t[0].ncols - 2 > SAMPLE_MAX_DIMS)
		return sp_fail(err, "%s: %zu columns: expected 1 to %d shape columns and the two "
				    "durations",
			       inputs[0], t[0].ncols, SAMPLE_MAX_DIMS);
	for (size_t i = 1; i < n; i++) {
		if (sample_file_name_parse(inputs[i], &name, err))
			return -1;
		const char *what = strcmp(name.device, first.device)	      ? "device"
				   : strcmp(name.op, first.op)		      ? "operator"
				   : strcmp(name.precision, first.precision) ? "precision"
									      : NULL;
		if (what)
			return sp_fail(err, "%s: another %s than %s's (%s_%s_%s against %s_%s_%s)",
				       inputs[i], what, inputs[0], name.device, name.op,
				       name.precision, first.device, first.op, first.precision);
		int same = t[i].ncols == t[0].ncols;
		for (size_t c = 0; same && c < t[0].ncols; c++)
			same = !strcmp(table_header(&t[i], c), table_header(&t[0], c));
		if (!same)
			return sp_fail(err, "%s: other columns than %s's", inputs[i], inputs[0]);
	}
	return 0;
}

int sample_is_shape_value(double v)
{
	return v >= 0 && v <= (double)SAMPLE_MAX_VALUE && v == (double)(int64_t)v;
}

int sample_is_time(double v)
{
	return v >= 0 && isfinite(v);
}

int sample_shape_cell(const struct table *t, size_t row, size_t col, int64_t *out,
		      struct sp_err *err)
{
	double v;
	if (table_double(t, row, col, &v, err))
		return -1;
	if (!sample_is_shape_value(v))
		return sp_fail(err, "%s:%zu: column '%s': expected a whole number, found '%s'",
			       t->name, table_line(t, row), table_header(t, col),
			       table_cell(t, row, col));
	*out = (int64_t)v;
	return 0;
}

/* kernel-sample writes no row for a shape that failed, so a duration of
 * nan or below 0 is damage. */
static int duration_cell(const struct table *t, size_t row, size_t col, struct sp_err *err)
{
	double d;
	if (table_double(t, row, col, &d, err) || !sample_is_time(d)) {
		char shown[64];
		return sp_fail(err, "%s:%zu: column '%s': expected a time (a number >= 0), "
			       "found '%s'", t->name, table_line(t, row), table_header(t, col),
			       sp_clip(shown, sizeof shown, table_cell(t, row, col)));
	}
	return 0;
}

/* Every row's shape as integers and durations as times. */
static int collect_rows(const struct table *t, size_t n, struct row *rows, struct sp_err *err)
{
	size_t k = 0, nshape = t[0].ncols - 2;
	for (size_t f = 0; f < n; f++) {
		for (size_t r = 0; r < t[f].nrows; r++, k++) {
			rows[k] = (struct row){.file = f, .row = r, .order = k};
			for (size_t c = 0; c < nshape; c++)
				if (sample_shape_cell(&t[f], r, c, &rows[k].key[c], err))
					return -1;
			if (duration_cell(&t[f], r, nshape, err) ||
			    duration_cell(&t[f], r, nshape + 1, err))
				return -1;
		}
	}
	return 0;
}

static int write_rows(const char *output, const struct table *t, const struct row *rows,
		      size_t nrows, struct sample_merge_result *r, struct sp_err *err)
{
	struct csv_writer w;
	size_t ncols = t[0].ncols;
	const char **header = malloc(ncols * sizeof *header);
	if (!header)
		return sp_fail(err, "%s: out of memory", output);
	for (size_t c = 0; c < ncols; c++)
		header[c] = table_header(&t[0], c);
	int rc = csv_writer_open(&w, output, header, ncols, err);
	free(header);
	if (rc)
		return -1;
	for (size_t i = 0; i < nrows; i++) {
		if (i > 0 && !memcmp(rows[i].key, rows[i - 1].key, sizeof rows[i].key))
			continue; /* the same shape as the row before: a duplicate */
		for (size_t c = 0; c < ncols; c++)
			csv_writer_str(&w, table_cell(&t[rows[i].file], rows[i].row, c));
		if (csv_writer_end_row(&w, err)) {
			csv_writer_abort(&w);
			return -1;
		}
		r->rows_out++;
	}
	return csv_writer_commit(&w, err);
}

int sample_merge(const char *const *inputs, size_t n, const char *output,
		 struct sample_merge_result *r, struct sp_err *err)
{
	memset(r, 0, sizeof *r);
	struct table *t = calloc(n, sizeof *t);
	struct row *rows = NULL;
	int rc = -1;
	if (!t)
		return sp_fail(err, "out of memory for %zu tables", n);
	for (size_t i = 0; i < n; i++)
		if (table_read(inputs[i], &t[i], err))
			goto done;
	if (check_same(inputs, n, t, err))
		goto done;
	for (size_t i = 0; i < n; i++)
		r->rows_in += t[i].nrows;
	rows = malloc((r->rows_in ? r->rows_in : 1) * sizeof *rows);
	if (!rows) {
		sp_fail(err, "out of memory for %" PRIu64 " rows", r->rows_in);
		goto done;
	}
	if (collect_rows(t, n, rows, err))
		goto done;
	qsort(rows, r->rows_in, sizeof *rows, compare_rows);
	rc = write_rows(output, t, rows, r->rows_in, r, err);
done:
	for (size_t i = 0; i < n; i++)
		table_free(&t[i]);
	free(t);
	free(rows);
	return rc;
}
