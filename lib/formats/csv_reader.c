#include "formats/csv_reader.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/infile.h"
#include "core/textscan.h"

#define READ_CHUNK (64 * 1024)

struct scanner {
	struct csv_parser parser;
	const char *name;
	unsigned flags;
	csv_reader_row_fn fn;
	void *ctx;
	struct sp_err *err;
	int failed; /* libcsv cannot be stopped from a callback: later callbacks check this */

	size_t line;    /* line of the next byte */
	int cr_pending; /* the last byte was a CR, so an LF now ends no new line */
	size_t offset;  /* file offset of the next byte */
	int record_open;
	int record_closed; /* libcsv ended a record in the piece being fed */
	size_t record_line;

	/* The record being collected: each field followed by a NUL. */
	struct buf bytes;
	size_t *offs, *lens;
	const char **ptrs;
	size_t nfields, offs_cap, lens_cap, ptrs_cap;
	size_t header_fields;

	struct csv_reader_result res;
};

/* Spaces are data: libcsv would otherwise trim them around unquoted fields. */
static int never_space(unsigned char c)
{
	return 0;
}

static void on_field(void *data, size_t len, void *arg)
{
	struct scanner *s = arg;
	if (s->failed)
		return;
	if (s->nfields == CSVR_MAX_FIELDS) {
		s->failed = sp_fail(s->err, "%s:%zu: more than %d fields in a record", s->name,
				    s->record_line, CSVR_MAX_FIELDS);
		return;
	}
	if (len && memchr(data, '\0', len)) {
		s->failed = sp_fail(s->err, "%s:%zu: NUL byte in a field", s->name, s->record_line);
		return;
	}
	size_t n = s->nfields + 1;
	size_t *offs = buf_grow_array(s->offs, &s->offs_cap, n, sizeof *offs);
	if (offs)
		s->offs = offs;
	size_t *lens = offs ? buf_grow_array(s->lens, &s->lens_cap, n, sizeof *lens) : NULL;
	if (lens)
		s->lens = lens;
	size_t off = s->bytes.len;
	if (!lens || buf_add(&s->bytes, data, len) || buf_addc(&s->bytes, '\0')) {
		s->failed = sp_fail(s->err, "%s:%zu: out of memory", s->name, s->record_line);
		return;
	}
	s->offs[s->nfields] = off;
	s->lens[s->nfields] = len;
	s->nfields = n;
}

static void deliver(struct scanner *s)
{
	size_t n = s->nfields;
	if (s->res.records == 0) {
		s->header_fields = n;
	} else if (n != s->header_fields) {
		s->failed = sp_fail(s->err,
				    "%s:%zu: expected %zu fields (as in the header), found %zu",
				    s->name, s->record_line, s->header_fields, n);
		return;
	}
	const char **ptrs = buf_grow_array(s->ptrs, &s->ptrs_cap, n, sizeof *ptrs);
	if (!ptrs) {
		s->failed = sp_fail(s->err, "%s:%zu: out of memory", s->name, s->record_line);
		return;
	}
	s->ptrs = ptrs;
	for (size_t i = 0; i < n; i++)
		ptrs[i] = s->bytes.data + s->offs[i];
	struct csv_reader_row row = {
		.index = s->res.records,
		.line = s->record_line,
		.nfields = n,
		.fields = ptrs,
		.lens = s->lens,
	};
	s->res.records++;
	if (s->fn && s->fn(s->ctx, &row, s->err))
		s->failed = -1;
}

static void on_record(int c, void *arg)
{
	struct scanner *s = arg;
	s->record_open = 0;
	s->record_closed = 1;
	if (!s->failed)
		deliver(s);
	s->nfields = 0;
	s->bytes.len = 0;
}

static void fail_parse(struct scanner *s, unsigned char c)
{
	if (csv_error(&s->parser) != CSV_EPARSE)
		s->failed = sp_fail(s->err, "%s:%zu: out of memory", s->name, s->line);
	else if (c == '"')
		s->failed = sp_fail(s->err, "%s:%zu: quote inside an unquoted field", s->name,
				    s->line);
	else if (c >= 0x20 && c < 0x7f)
		s->failed = sp_fail(s->err, "%s:%zu: '%c' after a closing quote", s->name, s->line,
				    c);
	else
		s->failed = sp_fail(s->err, "%s:%zu: byte 0x%02x after a closing quote", s->name,
				    s->line, c);
}

static int is_term(char c)
{
	return c == '\r' || c == '\n';
}

/* One piece of a line: bytes up to and including a line terminator, or up
 * to the end of the data at hand. Feeding libcsv a line at a time is what
 * lets records carry their line numbers. */
static void feed_piece(struct scanner *s, const char *p, size_t n)
{
	int ends_line = is_term(p[n - 1]);
	if (!s->record_open && !is_term(p[0])) {
		s->record_open = 1;
		s->record_line = s->line;
	}
	size_t done = csv_parse(&s->parser, p, n, on_field, on_record, s);
	if (s->failed)
		return;
	if (done < n) {
		fail_parse(s, (unsigned char)p[done]);
		return;
	}
	s->offset += n;
	/* complete_bytes ends with a record's terminator (the LF of its CRLF
	 * too), never after blank lines: an appender continues there. */
	if (s->record_closed)
		s->res.complete_bytes = s->offset;
	else if (n == 1 && p[0] == '\n' && s->cr_pending && s->res.complete_bytes == s->offset - 1)
		s->res.complete_bytes = s->offset;
	s->record_closed = 0;
	if (ends_line && !(p[n - 1] == '\n' && n == 1 && s->cr_pending))
		s->line++;
	s->cr_pending = ends_line && p[n - 1] == '\r';
}

static void feed(struct scanner *s, const char *data, size_t len)
{
	size_t i = 0;
	while (i < len && !s->failed) {
		size_t j = i;
		while (j < len && !is_term(data[j]))
			j++;
		size_t end = j < len ? j + 1 : len;
		feed_piece(s, data + i, end - i);
		i = end;
	}
}

static const char bom[3] = {'\xef', '\xbb', '\xbf'};

/* The first bytes of the input: a BOM is skipped (but counted in offsets). */
static void feed_first(struct scanner *s, const char *data, size_t len)
{
	if (len >= sizeof bom && !memcmp(data, bom, sizeof bom)) {
		s->offset = s->res.complete_bytes = sizeof bom;
		data += sizeof bom;
		len -= sizeof bom;
	}
	feed(s, data, len);
}

static void scanner_init(struct scanner *s, const char *name, unsigned flags, csv_reader_row_fn fn,
			 void *ctx, struct sp_err *err)
{
	memset(s, 0, sizeof *s);
	csv_init(&s->parser, CSV_STRICT | CSV_STRICT_FINI);
	csv_set_space_func(&s->parser, never_space);
	s->name = name;
	s->flags = flags;
	s->fn = fn;
	s->ctx = ctx;
	s->err = err;
	s->line = 1;
}

static int scanner_finish(struct scanner *s, struct csv_reader_result *res)
{
	if (!s->failed && s->record_open) {
		if (s->flags & CSVR_PARTIAL_TAIL) {
			s->res.partial_tail = 1;
		} else if (csv_fini(&s->parser, on_field, on_record, s) && !s->failed) {
			s->failed = sp_fail(s->err, "%s:%zu: unterminated quoted field", s->name,
					    s->record_line);
		} else if (!s->failed) {
			s->res.complete_bytes = s->offset;
		}
	}
	csv_free(&s->parser);
	buf_free(&s->bytes);
	free(s->offs);
	free(s->lens);
	free(s->ptrs);
	if (res)
		*res = s->res;
	return s->failed ? -1 : 0;
}

int csv_reader_scan_buffer(const void *data, size_t len, const char *name, unsigned flags,
		     csv_reader_row_fn fn, void *ctx, struct csv_reader_result *res, struct sp_err *err)
{
	struct scanner s;
	scanner_init(&s, name, flags, fn, ctx, err);
	feed_first(&s, data, len);
	return scanner_finish(&s, res);
}

/* read() until `want` bytes or the end of the file; -1 on error. */
static ssize_t read_full(int fd, char *p, size_t want)
{
	size_t have = 0;
	while (have < want) {
		ssize_t n = read(fd, p + have, want - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

int csv_reader_scan_fd(int fd, const char *name, unsigned flags, csv_reader_row_fn fn, void *ctx,
		 struct csv_reader_result *res, struct sp_err *err)
{
	struct scanner s;
	struct text_guard guard = {0};
	scanner_init(&s, name, flags, fn, ctx, err);
	char *chunk = malloc(READ_CHUNK);
	if (!chunk)
		s.failed = sp_fail(err, "%s: out of memory", name);
	for (int first = 1; !s.failed; first = 0) {
		ssize_t n = read_full(fd, chunk, READ_CHUNK);
		if (n < 0) {
			s.failed = sp_fail_errno(err, "%s: read failed", name);
			break;
		}
		if (text_guard_check(&guard, chunk, (size_t)n, name, err)) {
			s.failed = -1;
			break;
		}
		if (first)
			feed_first(&s, chunk, (size_t)n);
		else
			feed(&s, chunk, (size_t)n);
		if (n < READ_CHUNK)
			break;
	}
	free(chunk);
	return scanner_finish(&s, res);
}

int csv_reader_scan_file(const char *path, unsigned flags, csv_reader_row_fn fn, void *ctx,
		   struct csv_reader_result *res, struct sp_err *err)
{
	if (!strcmp(path, "-"))
		return csv_reader_scan_fd(STDIN_FILENO, "stdin", flags, fn, ctx, res, err);
	int fd;
	if (infile_open_fd(path, INFILE_STREAM, &fd, NULL, err))
		return -1;
	int rc = csv_reader_scan_fd(fd, path, flags, fn, ctx, res, err);
	close(fd);
	return rc;
}
