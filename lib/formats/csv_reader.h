/* Reading CSV with libcsv, row by row. The scanner delivers each record
 * (the header first) with the physical line it starts on, counting lines
 * the way an editor does (CR, LF or CRLF each end one; a quoted field
 * that spans lines moves the count on), so messages point at the right
 * line. It is strict: a quote inside an unquoted field, text after a
 * closing quote, an unterminated quote, a NUL byte or a record whose field
 * count differs from the header's is an error naming the line. Blank lines
 * are skipped, a UTF-8 BOM is dropped, and a missing final newline is
 * fine. Spaces are data: nothing is trimmed.
 *
 * With CSVR_PARTIAL_TAIL, a last record that does not end in a newline is
 * what a killed writer left: it is not delivered, and the result says
 * where the complete records end, so an appender can cut it off. */
#ifndef SPKIT_CSVR_H
#define SPKIT_CSVR_H

#include <stddef.h>

#include "core/err.h"

/* Fields beyond this in one record are an error, not an allocation. */
#define CSVR_MAX_FIELDS (1 << 20)

struct csv_reader_row {
	size_t index;              /* 0 for the header, then 1, 2, ... */
	size_t line;               /* physical line the record starts on, 1-based */
	size_t nfields;
	const char *const *fields; /* NUL-terminated (fields never hold a NUL) */
	const size_t *lens;
};

/* Called for each record; a nonzero return stops the scan, which then
 * returns -1 with the message the callback put in err. */
typedef int (*csv_reader_row_fn)(void *ctx, const struct csv_reader_row *row, struct sp_err *err);

enum csv_reader_flags {
	CSVR_PARTIAL_TAIL = 1 << 0,
};

struct csv_reader_result {
	size_t records;        /* delivered, the header included */
	size_t complete_bytes; /* bytes up to the end of the last complete record and its line
				end, blank lines after it left out */
	int partial_tail;      /* CSVR_PARTIAL_TAIL: an unfinished last record was left out */
};

/* `name` starts every message. res may be NULL. */
int csv_reader_scan_fd(int fd, const char *name, unsigned flags, csv_reader_row_fn fn, void *ctx,
		 struct csv_reader_result *res, struct sp_err *err);
/* path "-" reads standard input. */
int csv_reader_scan_file(const char *path, unsigned flags, csv_reader_row_fn fn, void *ctx,
		   struct csv_reader_result *res, struct sp_err *err);
int csv_reader_scan_buffer(const void *data, size_t len, const char *name, unsigned flags,
		     csv_reader_row_fn fn, void *ctx, struct csv_reader_result *res, struct sp_err *err);

#endif
