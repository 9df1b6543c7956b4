/* Writing CSV results. Fields are quoted as RFC 4180 says when they need
 * it (a comma, a quote, CR or LF, or a leading or trailing blank; quotes
 * inside are doubled; the lone field of a one-column row when empty, so
 * the row is not a blank line; a field starting with a UTF-8 BOM) and
 * rows end with "\n" (appended rows as the file's last one does, below).
 *
 * A row is built field by field (csv_writer_str, csv_writer_int, csv_writer_double), then
 * csv_writer_end_row checks it has one field per column and writes it. The field
 * functions cannot fail visibly: an allocation failure or a wrong field
 * count is reported by csv_writer_end_row, which keeps call sites short.
 *
 * Three ways to open:
 * - csv_writer_open: a whole file, written to a temporary and renamed into place
 *   by csv_writer_commit (outfile.h), so a failed run leaves no file; path "-"
 *   writes to standard output.
 * - csv_writer_open_stream: a log followed as it grows (tail -f): the file
 *   is made anew (or path "-" is standard output) and each row goes out in
 *   one write(2) as it ends, so a kill keeps every row but the one being
 *   written. Not atomic, on purpose.
 * - csv_writer_open_append: for sweeps. The file is created with its header if it
 *   is absent or empty; otherwise its header must be exactly these columns.
 *   A last line without its newline (a run killed mid-row) is cut off
 *   first, and the rows added end in "\r\n" when the last line left does,
 *   so that a CRLF file stays one. Each row then goes out in one write(2), so a kill loses at most
 *   the row being written; csv_writer_set_fsync makes each row durable too. The
 *   file is locked (flock) while open, so two jobs cannot append to it. A
 *   file this open created is removed again by csv_writer_abort while it
 *   holds no row: a sweep that fails before its first row leaves nothing;
 *   one that was there empty is cut back to empty. A fatal signal does the
 *   same (outfile.h, cli_init): a kill before the first row leaves the file
 *   as it was. */
#ifndef SPKIT_CSVW_H
#define SPKIT_CSVW_H

#include <stddef.h>
#include <stdint.h>

#include "core/outfile.h"
#include "core/buf.h"
#include "formats/csv_reader.h"
#include "core/err.h"

struct csv_writer {
	char *path;   /* the output, for messages ("stdout" for "-") */
	size_t ncols;
	/* private */
	int mode;
	int fd;        /* append mode */
	int fsync_rows;
	int crlf;      /* append mode: rows end in "\r\n", as the file's do */
	int created;   /* append mode: the open made the file (O_EXCL) */
	int was_empty; /* append mode: the file was there, empty; the header is the open's */
	uint64_t rows; /* data rows written since the open */
	struct outfile af; /* whole-file mode */
	struct buf fields; /* the row in progress, each field NUL-terminated */
	size_t *starts;    /* ncols offsets into fields */
	size_t nfields;    /* may exceed ncols: csv_writer_end_row reports it */
	int out_of_memory;
	struct buf line;   /* the row as written */
};

int csv_writer_open(struct csv_writer *w, const char *path, const char *const *columns, size_t ncols,
	      struct sp_err *err);
int csv_writer_open_stream(struct csv_writer *w, const char *path, const char *const *columns,
			   size_t ncols, struct sp_err *err);
int csv_writer_open_append(struct csv_writer *w, const char *path, const char *const *columns, size_t ncols,
		     struct sp_err *err);
/* As csv_writer_open_append, calling fn for each complete data row already in
 * the file (resume: sweep.h). */
int csv_writer_open_append_scan(struct csv_writer *w, const char *path, const char *const *columns,
			  size_t ncols, csv_reader_row_fn fn, void *ctx, struct sp_err *err);
/* Append mode: fsync after each row (and at commit). */
void csv_writer_set_fsync(struct csv_writer *w, int on);

void csv_writer_str(struct csv_writer *w, const char *s);
void csv_writer_int(struct csv_writer *w, int64_t v);
/* digits 0: the shortest text that reads back as v; else "%.{digits}g".
 * NaN is written "nan" (num_format_double). */
void csv_writer_double(struct csv_writer *w, double v, int digits);
int csv_writer_end_row(struct csv_writer *w, struct sp_err *err);

/* The text of field i of the row in progress, as given (unquoted); NULL
 * if there is no such field yet. */
const char *csv_writer_field(const struct csv_writer *w, size_t i);

/* Finish: rename into place / flush stdout / close the appended file.
 * Both free w; after a failed commit nothing of a whole file is left. */
int csv_writer_commit(struct csv_writer *w, struct sp_err *err);
/* Give up: a whole file is removed; appended rows stay (they are complete),
 * an appended file that csv_writer_is_new calls new is removed, and one that
 * was empty and got no row is cut back to empty (unless kept). */
void csv_writer_abort(struct csv_writer *w);
/* Append mode: the open created the file and no row has been written to
 * it since (nor csv_writer_keep called), so that giving up leaves nothing
 * behind. */
int csv_writer_is_new(const struct csv_writer *w);
/* Append mode: no row in the file, before the open or since (the open
 * created it or found it empty), nor csv_writer_keep called: giving up
 * leaves it as it was, removed or empty again. */
int csv_writer_is_unstarted(const struct csv_writer *w);
/* Append mode: the file is kept from now on, by csv_writer_abort and a
 * fatal signal alike, as if it held a row (a sweep's log tells of shapes
 * tried: the CSV it goes with stays beside it, header-only or not). */
void csv_writer_keep(struct csv_writer *w);

#endif
