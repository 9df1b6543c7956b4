#include "sweep/table.h"

#include <stdlib.h>
#include <string.h>

#include "formats/csv_reader.h"
#include "core/num.h"

static int add_record(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	struct table *t = ctx;
	size_t n = t->nrows + 1 + (row->index > 0); /* records held after this one */
	size_t *lines = buf_grow_array(t->lines, &t->lines_cap, n, sizeof *lines);
	if (lines)
		t->lines = lines;
	size_t *cells = NULL;
	if (lines && (row->nfields == 0 || n <= SIZE_MAX / row->nfields))
		cells = buf_grow_array(t->cells, &t->cells_cap, n * row->nfields, sizeof *cells);
	if (!cells)
		return sp_fail(err, "%s:%zu: out of memory", t->name, row->line);
	t->cells = cells;
	size_t *cell = cells + (n - 1) * row->nfields;
	for (size_t i = 0; i < row->nfields; i++) {
		cell[i] = t->arena.len;
		if (buf_add(&t->arena, row->fields[i], row->lens[i] + 1))
			return sp_fail(err, "%s:%zu: out of memory", t->name, row->line);
	}
	t->lines[n - 1] = row->line;
	if (row->index == 0)
		t->ncols = row->nfields;
	else
		t->nrows++;
	return 0;
}

/* After a scan into t: a file without records has no header; a failure empties t. */
static int finish_read(struct table *t, int rc, const struct csv_reader_result *res,
		       struct sp_err *err)
{
	if (rc == 0 && res->records == 0)
		rc = sp_fail(err, "%s: no header", t->name);
	if (rc)
		table_free(t);
	return rc;
}

static int start_read(struct table *t, const char *name, struct sp_err *err)
{
	memset(t, 0, sizeof *t);
	t->name = strdup(name);
	return t->name ? 0 : sp_fail(err, "%s: out of memory", name);
}

int table_read(const char *path, struct table *t, struct sp_err *err)
{
	if (start_read(t, strcmp(path, "-") ? path : "stdin", err))
		return -1;
	struct csv_reader_result res;
	int rc = csv_reader_scan_file(path, 0, add_record, t, &res, err);
	return finish_read(t, rc, &res, err);
}

int table_read_buffer(const void *data, size_t len, const char *name, struct table *t,
		      struct sp_err *err)
{
	if (start_read(t, name, err))
		return -1;
	struct csv_reader_result res;
	int rc = csv_reader_scan_buffer(data, len, name, 0, add_record, t, &res, err);
	return finish_read(t, rc, &res, err);
}

void table_free(struct table *t)
{
	free(t->name);
	buf_free(&t->arena);
	free(t->cells);
	free(t->lines);
	memset(t, 0, sizeof *t);
}

const char *table_header(const struct table *t, size_t col)
{
	return t->arena.data + t->cells[col];
}

const char *table_cell(const struct table *t, size_t row, size_t col)
{
	return t->arena.data + t->cells[(row + 1) * t->ncols + col];
}

size_t table_line(const struct table *t, size_t row)
{
	return t->lines[row + 1];
}

long table_col(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(table_header(t, i), name))
			return (long)i;
	return -1;
}

int table_require_cols(const struct table *t, const char *const *names, size_t n, size_t *idx,
		       struct sp_err *err)
{
	char q[80];
	for (size_t k = 0; k < n; k++) {
		long i = table_col(t, names[k]);
		if (i < 0)
			return sp_fail(err, "%s: missing column '%s'", t->name,
				       sp_clip(q, sizeof q, names[k]));
		for (size_t j = (size_t)i + 1; j < t->ncols; j++)
			if (!strcmp(table_header(t, j), names[k]))
				return sp_fail(err, "%s: column '%s' appears twice in the header",
					       t->name, sp_clip(q, sizeof q, names[k]));
		if (idx)
			idx[k] = (size_t)i;
	}
	return 0;
}

/* "runs.csv:17: column 'ms': expected a number, found 'abc'" */
static int fail_cell(const struct table *t, size_t row, size_t col, const char *what,
		     struct sp_err *err)
{
	char name[80], cell[80];
	return sp_fail(err, "%s:%zu: column '%s': expected %s, found '%s'", t->name,
		       table_line(t, row), sp_clip(name, sizeof name, table_header(t, col)), what,
		       sp_clip(cell, sizeof cell, table_cell(t, row, col)));
}

int table_int(const struct table *t, size_t row, size_t col, int64_t *out, struct sp_err *err)
{
	enum num_status st = num_parse_int(table_cell(t, row, col), out);
	if (st == NUM_OK)
		return 0;
	return fail_cell(t, row, col, st == NUM_RANGE ? "a 64-bit integer" : "an integer", err);
}

int table_double(const struct table *t, size_t row, size_t col, double *out, struct sp_err *err)
{
	enum num_status st = num_parse_double(table_cell(t, row, col), 1, out);
	if (st == NUM_OK)
		return 0;
	return fail_cell(t, row, col, st == NUM_RANGE ? "a number in double range" : "a number",
			 err);
}
