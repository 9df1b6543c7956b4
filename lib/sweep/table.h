/* A whole CSV file in memory: the header and the rows as strings, for
 * programs that reduce result files (ksmm-tune best, kernel-sample merge
 * and predict). All field text lives in one arena; a cell is an offset.
 * Reading is csv_reader's (strict, line numbers, BOM, CRLF); the typed getters
 * name the file, the line and the column in their errors:
 *   runs.csv:17: column 'ms': expected a number, found 'abc' */
#ifndef SPKIT_TABLE_H
#define SPKIT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

struct table {
	char *name;   /* the file, for messages */
	size_t ncols; /* header fields */
	size_t nrows; /* data rows, the header not counted */
	/* private */
	struct buf arena;  /* every field, NUL-terminated */
	size_t *cells;     /* (nrows + 1) * ncols offsets into arena; the header first */
	size_t *lines;     /* nrows + 1 physical lines where records start */
	size_t cells_cap, lines_cap;
};

/* A file with no records is an error ("runs.csv: no header"). path "-"
 * reads standard input. On failure t is left empty (table_free is safe). */
int table_read(const char *path, struct table *t, struct sp_err *err);
int table_read_buffer(const void *data, size_t len, const char *name, struct table *t,
		      struct sp_err *err);
void table_free(struct table *t);

const char *table_header(const struct table *t, size_t col);
/* row is 0-based among the data rows. */
const char *table_cell(const struct table *t, size_t row, size_t col);
size_t table_line(const struct table *t, size_t row);

/* The index of the first column with this name, or -1. */
long table_col(const struct table *t, const char *name);
/* Every name must be in the header, once ("runs.csv: missing column 'ms'");
 * idx (may be NULL) receives their indices. */
int table_require_cols(const struct table *t, const char *const *names, size_t n, size_t *idx,
		       struct sp_err *err);

/* Cells as numbers (num.h syntax; doubles also nan/inf, which csv_writer writes).
 *   runs.csv:17: column 'ms': expected a number, found 'abc' */
int table_int(const struct table *t, size_t row, size_t col, int64_t *out, struct sp_err *err);
int table_double(const struct table *t, size_t row, size_t col, double *out,
		 struct sp_err *err);

#endif
