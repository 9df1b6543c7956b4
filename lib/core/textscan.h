/* What the text readers (Matrix Market, edge lists) share: the whole file
 * mapped into memory, a line scanner that counts lines for messages, field
 * splitting, and strict number parsers written by hand (no fscanf, no
 * locale), fast enough for files of hundreds of millions of lines.
 *
 * Nothing here needs the input NUL-terminated: every function works on a
 * span [p, end), so a parser runs on an mmap()ed file or on a fuzzer's
 * buffer alike. */
#ifndef SPKIT_TEXTSCAN_H
#define SPKIT_TEXTSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* A file's bytes: mmap()ed when it is a regular file, read otherwise
 * (a pipe). A directory is an error ("PATH: is a directory"). */
struct text_file {
	const char *data;
	size_t len;
	void *map;  /* what to munmap, or NULL */
	char *heap; /* what to free, or NULL */
};

/* The whole file, mapped (a regular file) or read (a FIFO, a device), and
 * checked by a text_guard: text readers refuse binary data and endless
 * lines before they build anything from them. */
int text_file_open(struct text_file *f, const char *path, struct sp_err *err);
void text_file_close(struct text_file *f);

/* What every text reader refuses, checked piece by piece as the text
 * arrives: a NUL byte (a binary file, /dev/zero) and a line longer than
 * TEXT_LINE_MAX (an endless line). Start zeroed. */
#define TEXT_LINE_MAX ((size_t)16 << 20)
struct text_guard {
	uint64_t offset, line; /* bytes and whole lines seen */
	size_t line_len;       /* bytes of the unfinished line */
};
int text_guard_check(struct text_guard *g, const char *p, size_t n, const char *path,
		     struct sp_err *err);

/* A piece of the input, never NUL-terminated. */
struct text_span {
	const char *p, *end;
};

/* Walks the input line by line. `line` is the number (1-based) of the line
 * last returned, so messages can say "NAME:LINE: ...". */
struct text_scan {
	const char *p, *end;
	const char *name;
	int64_t line;
};

void text_scan_init(struct text_scan *s, const char *buf, size_t len, const char *name);
/* The next line without its "\n" or "\r\n"; 0 when the input is spent. */
int text_scan_line(struct text_scan *s, struct text_span *line);
/* Bytes not yet scanned (after the last line returned). */
static inline size_t text_scan_left(const struct text_scan *s)
{
	return (size_t)(s->end - s->p);
}

/* The next line that says something: not blank, and not a comment (its
 * first byte after spaces and tabs one of comment_chars). */
int text_scan_content(struct text_scan *s, const char *comment_chars, struct text_span *line);

/* Fill err with "NAME:LINE: MESSAGE" for the line last returned; returns -1. */
int text_scan_fail(const struct text_scan *s, struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Leading and trailing spaces and tabs removed. */
struct text_span text_span_trim(struct text_span s);
/* Does s equal word, ignoring ASCII case? */
int text_span_equal_nocase(struct text_span s, const char *word);

/* Cut the next field off the front of *rest. sep ' ' splits at runs of
 * spaces and tabs; any other sep (',' or '\t') splits at each occurrence,
 * and the field is trimmed of the spaces (and tabs, for ',') around it.
 * Returns 0 when *rest holds no more fields. */
int text_next_field(struct text_span *rest, char sep, struct text_span *field);

/* Fast-path pieces for the hot loops, which try the usual line first and
 * hand anything unusual to the strict parsers above (which then say what
 * is wrong). text_take_digits takes a run of 1 to 18 digits, no sign, and
 * fails (taking nothing) on none or on more; text_take_blanks takes spaces
 * and tabs and says whether there were any. */
static inline int text_take_digits(const char **p, const char *end, int64_t *out)
{
	const char *q = *p;
	int64_t v = 0;
	while (q < end && (unsigned)(*q - '0') <= 9 && q - *p < 18)
		v = v * 10 + (*q++ - '0');
	if (q == *p || (q < end && (unsigned)(*q - '0') <= 9))
		return 0;
	*out = v;
	*p = q;
	return 1;
}

static inline int text_take_blanks(const char **p, const char *end)
{
	const char *q = *p;
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	int any = q != *p;
	*p = q;
	return any;
}

/* The span from *p to the next space, tab or end, taken. */
static inline struct text_span text_take_word(const char **p, const char *end)
{
	struct text_span w = {*p, *p};
	while (w.end < end && *w.end != ' ' && *w.end != '\t')
		w.end++;
	*p = w.end;
	return w;
}

/* Copy a field into buf for a message: quoted-safe (non-printable bytes as
 * '?'), cut with "..." when long. Returns buf. */
const char *text_span_show(struct text_span s, char *buf, size_t size);
#define TEXT_SHOW_MAX 48

/* Strict parsers: the whole span must be the number, with no spaces.
 * Integers: optional sign, decimal digits. Floats: optional sign, digits
 * with an optional '.', an optional exponent; also "nan" and "inf" spelled
 * any way, which parse but come back as TEXT_NOT_FINITE. A float is the
 * decimal rounded to the nearest double and then to float, exactly what
 * (float)strtod() gives in the C locale. */
enum text_num {
	TEXT_OK = 0,
	TEXT_SYNTAX = -1,     /* not a number */
	TEXT_RANGE = -2,      /* an integer beyond int64 */
	TEXT_NOT_FINITE = -3, /* NaN, Inf, or a float beyond float's range */
};
enum text_num text_parse_i64(struct text_span s, int64_t *out);
enum text_num text_parse_float(struct text_span s, float *out);

/* The same for field number k (1-based) of the line last scanned, with the
 * message a reader gives: "NAME:LINE: field K: expected WHAT, found 'X'",
 * "NAME:LINE: field K: 'X' is out of range for WHAT" or
 * "NAME:LINE: field K: 'X' is not a finite float".
 * `what` names the field with its article ("a node id"). */
int text_field_i64(const struct text_scan *s, struct text_span f, int k, const char *what,
		   int64_t *out, struct sp_err *err);
int text_field_float(const struct text_scan *s, struct text_span f, int k, const char *what,
		     float *out, struct sp_err *err);

#endif
