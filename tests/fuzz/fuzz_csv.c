/* libFuzzer target for the CSV reader (csv_reader.h, table.h), with the writer
 * (csv_writer.h) checked against it on every input that reads. Properties:
 * - no crash, leak or hang; every error names the file;
 * - the typed getters either convert a cell or say why;
 * - the complete records a partial-tail scan reports read back strictly,
 *   the same records (what csv_writer_open_append keeps of a killed sweep),
 *   and what it leaves out is an unfinished record or blank lines;
 * - a table written out by csv_writer reads back cell for cell. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/csv_reader.h"
#include "formats/csv_writer.h"
#include "core/err.h"
#include "sweep/table.h"

#define NAME "fuzz.csv"

static void check_message(const struct sp_err *e)
{
	if (strncmp(e->msg, NAME, strlen(NAME)))
		abort();
}

static int check_row(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	size_t *count = ctx;
	if (row->index != *count || row->nfields == 0)
		abort();
	for (size_t i = 0; i < row->nfields; i++)
		if (strlen(row->fields[i]) != row->lens[i])
			abort();
	++*count;
	return 0;
}

static void check_partial_tail(const uint8_t *data, size_t size)
{
	struct csv_reader_result a, b;
	struct sp_err e;
	size_t na = 0, nb = 0;
	if (csv_reader_scan_buffer(data, size, NAME, CSVR_PARTIAL_TAIL, check_row, &na, &a, &e)) {
		check_message(&e);
		return;
	}
	/* Only an unfinished record, or blank lines after the last complete one,
	 * are left out. */
	if (a.complete_bytes > size || a.records != na || (a.partial_tail && a.complete_bytes == size))
		abort();
	for (size_t i = a.complete_bytes; !a.partial_tail && i < size; i++)
		if (data[i] != '\r' && data[i] != '\n')
			abort();
	if (csv_reader_scan_buffer(data, a.complete_bytes, NAME, 0, check_row, &nb, &b, &e) ||
	    b.records != a.records || b.partial_tail)
		abort();
}

static void check_getters(const struct table *t)
{
	struct sp_err e;
	for (size_t r = 0; r < t->nrows && r < 64; r++) {
		if (r && table_line(t, r) <= table_line(t, r - 1))
			abort();
		for (size_t c = 0; c < t->ncols && c < 16; c++) {
			int64_t i;
			double d;
			if (table_int(t, r, c, &i, &e))
				check_message(&e);
			if (table_double(t, r, c, &d, &e))
				check_message(&e);
		}
	}
	const char *names[4];
	size_t n = t->ncols < 4 ? t->ncols : 4;
	for (size_t c = 0; c < n; c++) {
		names[c] = table_header(t, c);
		if (table_col(t, names[c]) > (long)c)
			abort();
	}
	if (table_require_cols(t, names, n, NULL, &e))
		check_message(&e);
}

static char dir[] = "/tmp/fuzz_csv.XXXXXX";
static char path[sizeof dir + 16];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

static void check_round_trip(const struct table *t)
{
	if (!path[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof path, "%s/rt.csv", dir);
		atexit(remove_dir);
	}
	const char **cols = malloc(t->ncols * sizeof *cols);
	for (size_t c = 0; c < t->ncols; c++)
		cols[c] = table_header(t, c);
	struct csv_writer w;
	struct sp_err e;
	if (csv_writer_open(&w, path, cols, t->ncols, &e))
		abort();
	free(cols);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++)
			csv_writer_str(&w, table_cell(t, r, c));
		if (csv_writer_end_row(&w, &e))
			abort();
	}
	if (csv_writer_commit(&w, &e))
		abort();
	struct table back;
	if (table_read(path, &back, &e))
		abort();
	if (back.ncols != t->ncols || back.nrows != t->nrows)
		abort();
	for (size_t c = 0; c < t->ncols; c++)
		if (strcmp(table_header(&back, c), table_header(t, c)))
			abort();
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (strcmp(table_cell(&back, r, c), table_cell(t, r, c)))
				abort();
	table_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct table t;
	struct sp_err e;
	if (table_read_buffer(data, size, NAME, &t, &e)) {
		check_message(&e);
	} else {
		check_getters(&t);
		check_round_trip(&t);
		table_free(&t);
	}
	check_partial_tail(data, size);
	return 0;
}
