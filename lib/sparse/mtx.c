#include "sparse/mtx.h"

#include <stdio.h>
#include <string.h>

#include "sparse/coo.h"
#include "core/textscan.h"

/* Index of w in words (ignoring case), or -1. */
static int lookup(struct text_span w, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (text_span_equal_nocase(w, words[i]))
			return i;
	return -1;
}

/* One banner word: a known one, one we know but do not read, or neither. */
static int banner_word(const struct text_scan *s, struct text_span w, const char *kind,
		       const char *const *known, int nknown, const char *const *unsupported,
		       int nunsupported, int *out, struct sp_err *err)
{
	char shown[TEXT_SHOW_MAX], list[64] = "";
	*out = lookup(w, known, nknown);
	if (*out >= 0)
		return 0;
	text_span_show(w, shown, sizeof shown);
	for (int i = 0, at = 0; i < nknown; i++)
		at += snprintf(list + at, sizeof list - (size_t)at, "%s%s", i ? ", " : "", known[i]);
	return text_scan_fail(s, err, "%s %s '%s' in the banner (spkit reads %s)",
			      lookup(w, unsupported, nunsupported) >= 0 ? "unsupported" : "unknown",
			      kind, shown, list);
}

static int parse_banner(struct text_scan *s, struct mtx_header *h, struct sp_err *err)
{
	static const char *const object[] = {"matrix"}, *const object_no[] = {"vector"};
	static const char *const format[] = {"coordinate"}, *const format_no[] = {"array"};
	static const char *const field[] = {"real", "integer", "pattern"},
			  *const field_no[] = {"complex"};
	static const char *const symmetry[] = {"general", "symmetric", "skew-symmetric"},
			  *const symmetry_no[] = {"hermitian"};
	struct text_span line, rest, w[5], extra;
	if (!text_scan_line(s, &line))
		return sp_fail(err, "%s: empty file, expected a %%%%MatrixMarket banner", s->name);
	rest = line;
	int n = 0;
	while (n < 5 && text_next_field(&rest, ' ', &w[n]))
		n++;
	if (n == 0 || !text_span_equal_nocase(w[0], "%%MatrixMarket"))
		return text_scan_fail(s, err, "missing %%%%MatrixMarket banner");
	if (n < 5 || text_next_field(&rest, ' ', &extra))
		return text_scan_fail(s, err, "the banner must read '%%%%MatrixMarket matrix "
					      "coordinate FIELD SYMMETRY'");
	int obj, fmt, fld, sym;
	if (banner_word(s, w[1], "object", object, 1, object_no, 1, &obj, err) ||
	    banner_word(s, w[2], "format", format, 1, format_no, 1, &fmt, err) ||
	    banner_word(s, w[3], "field", field, 3, field_no, 1, &fld, err) ||
	    banner_word(s, w[4], "symmetry", symmetry, 3, symmetry_no, 1, &sym, err))
		return -1;
	h->field = (enum mtx_field)fld;
	h->symmetry = (enum mtx_symmetry)sym;
	if (h->field == MTX_PATTERN && h->symmetry == MTX_SKEW_SYMMETRIC)
		return text_scan_fail(s, err, "a pattern matrix cannot be skew-symmetric");
	return 0;
}

static int parse_size(struct text_scan *s, struct mtx_header *h, struct sp_err *err)
{
	static const char *const what[] = {"a row count", "a column count", "an entry count"};
	static const char *const noun[] = {"rows", "columns", "entries"};
	const int64_t limit[] = {CSR_MAX_DIM, CSR_MAX_DIM, CSR_MAX_NNZ};
	struct text_span line, rest, f;
	if (!text_scan_content(s, "%", &line))
		return text_scan_fail(s, err, "missing the size line 'rows columns entries'");
	rest = line;
	int64_t v[3];
	int n = 0;
	for (; text_next_field(&rest, ' ', &f); n++) {
		if (n == 3)
			return text_scan_fail(s, err, "size line: more than 3 fields");
		if (text_field_i64(s, f, n + 1, what[n], &v[n], err))
			return -1;
		if (v[n] < 0)
			return text_scan_fail(s, err, "size line: negative number of %s (%lld)", noun[n],
					      (long long)v[n]);
		if (v[n] > limit[n])
			return text_scan_fail(s, err, "size line: %lld %s exceed the limit of %lld",
					      (long long)v[n], noun[n], (long long)limit[n]);
	}
	if (n < 3)
		return text_scan_fail(s, err, "size line: expected 'rows columns entries', found %d "
					      "field%s", n, sp_plural(n));
	h->rows = v[0];
	h->cols = v[1];
	h->entries = v[2];
	if (h->symmetry != MTX_GENERAL && h->rows != h->cols)
		return text_scan_fail(s, err, "size line: a symmetric matrix must be square, not "
					      "%lld x %lld", (long long)h->rows, (long long)h->cols);
	return 0;
}

static int parse_header(struct text_scan *s, struct mtx_header *h, struct sp_err *err)
{
	return parse_banner(s, h, err) || parse_size(s, h, err) ? -1 : 0;
}

/* The usual entry line, "i j" or "i j value" with positive indices, an
 * unsigned integer or a plain float, spaces between and nothing after.
 * Returns 0 for anything else, which parse_entry_strictly then parses and
 * explains. */
static int take_entry(struct text_span line, enum mtx_field field, int64_t *i, int64_t *j,
		      float *v)
{
	const char *p = line.p, *e = line.end;
	if (!text_take_digits(&p, e, i) || !text_take_blanks(&p, e) || !text_take_digits(&p, e, j))
		return 0;
	int spaced = text_take_blanks(&p, e);
	if (field == MTX_INTEGER) {
		int64_t x;
		if (!spaced || !text_take_digits(&p, e, &x))
			return 0;
		*v = (float)x;
	} else if (field == MTX_REAL) {
		if (!spaced || text_parse_float(text_take_word(&p, e), v) != TEXT_OK)
			return 0;
	}
	text_take_blanks(&p, e);
	return p == e;
}

static int parse_entry_strictly(const struct text_scan *s, struct text_span line,
				enum mtx_field field, int64_t *i, int64_t *j, float *v,
				struct sp_err *err)
{
	int nfields = field == MTX_PATTERN ? 2 : 3;
	struct text_span rest = line, f[3], extra;
	int n = 0;
	while (n < nfields && text_next_field(&rest, ' ', &f[n]))
		n++;
	if (n < nfields)
		return text_scan_fail(s, err, "expected %d fields (%s), found %d", nfields,
				      nfields == 2 ? "row column" : "row column value", n);
	if (text_next_field(&rest, ' ', &extra)) {
		char shown[TEXT_SHOW_MAX];
		return text_scan_fail(s, err, "unexpected '%s' after the entry",
				      text_span_show(extra, shown, sizeof shown));
	}
	int64_t iv;
	if (text_field_i64(s, f[0], 1, "a row index", i, err) ||
	    text_field_i64(s, f[1], 2, "a column index", j, err))
		return -1;
	if (field == MTX_REAL)
		return text_field_float(s, f[2], 3, "a value", v, err);
	if (field == MTX_INTEGER) {
		if (text_field_i64(s, f[2], 3, "an integer value", &iv, err))
			return -1;
		*v = (float)iv;
	}
	return 0;
}

/* One entry line into c. */
static int parse_entry(const struct text_scan *s, struct text_span line,
		       const struct mtx_header *h, struct coo *c, struct sp_err *err)
{
	int64_t i, j;
	float v = 0;
	if (!take_entry(line, h->field, &i, &j, &v) &&
	    parse_entry_strictly(s, line, h->field, &i, &j, &v, err))
		return -1;
	if (i < 1 || i > h->rows)
		return text_scan_fail(s, err, "row index %lld out of range [1, %lld]", (long long)i,
				      (long long)h->rows);
	if (j < 1 || j > h->cols)
		return text_scan_fail(s, err, "column index %lld out of range [1, %lld]",
				      (long long)j, (long long)h->cols);
	return coo_push(c, (int32_t)(i - 1), (int32_t)(j - 1), v, s->name, err);
}

static int parse_entries(struct text_scan *s, const struct mtx_header *h, struct coo *c,
			 struct sp_err *err)
{
	struct text_span line;
	while (text_scan_content(s, "%", &line)) {
		if (c->n == h->entries)
			return text_scan_fail(s, err, "more entries than the %lld the size line declares",
					      (long long)h->entries);
		if (parse_entry(s, line, h, c, err))
			return -1;
	}
	if (c->n < h->entries)
		return text_scan_fail(s, err, "expected %lld entries, found %lld",
				      (long long)h->entries, (long long)c->n);
	return 0;
}

int mtx_parse_header(const char *buf, size_t len, const char *name, struct mtx_header *h,
		     struct sp_err *err)
{
	struct text_scan s;
	text_scan_init(&s, buf, len, name);
	return parse_header(&s, h, err);
}

int mtx_parse(const char *buf, size_t len, const char *name, struct csr *g, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	struct text_scan s;
	struct mtx_header h;
	struct coo c;
	text_scan_init(&s, buf, len, name);
	if (parse_header(&s, &h, err))
		return -1;
	/* Every entry line takes at least 4 bytes ("1 1\n"), so a size line
	 * that claims more entries than the rest of the input can hold does not
	 * get to allocate for them (it fails as "found fewer" at the end). */
	int64_t room = (int64_t)(text_scan_left(&s) / 4) + 1;
	if (coo_init(&c, h.entries < room ? h.entries : room, h.field != MTX_PATTERN, name, err))
		return -1;
	if (parse_entries(&s, &h, &c, err)) {
		coo_free(&c);
		return -1;
	}
	enum coo_mirror mirror = h.symmetry == MTX_SYMMETRIC	  ? COO_MIRROR
				 : h.symmetry == MTX_SKEW_SYMMETRIC ? COO_MIRROR_NEGATED
								    : COO_AS_GIVEN;
	return coo_to_csr(&c, h.rows, h.cols, mirror, g, name, err);
}

int mtx_read(const char *path, struct csr *g, struct sp_err *err)
{
	struct text_file f;
	memset(g, 0, sizeof *g);
	if (text_file_open(&f, path, err))
		return -1;
	int rc = mtx_parse(f.data, f.len, path, g, err);
	text_file_close(&f);
	return rc;
}
