/* The text of a .npy header: a Python dict literal with the keys 'descr',
 * 'fortran_order' and 'shape' in any order. A small recursive-descent
 * parser of exactly the literals NumPy writes (and hand-written variants:
 * either quote, any spacing, trailing commas), so a malformed header is
 * reported where it goes wrong rather than half-understood. */
#include "formats/npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/bytes.h"

struct cursor {
	const char *p, *end, *start;
	uint64_t base;  /* file offset of start */
	int py2_longs;  /* versions 1 and 2 may come from Python 2: "(3L, 4L)" */
	const char *name;
	struct sp_err *err;
};

static int bad(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct cursor *c, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return sp_fail(c->err, "%s: bad header: %s (at byte %llu)", c->name, what,
		       (unsigned long long)(c->base + (uint64_t)(c->p - c->start)));
}

static void skip_space(struct cursor *c)
{
	while (c->p < c->end && *c->p && strchr(" \t\n\r\f\v", *c->p))
		c->p++;
}

static int eat(struct cursor *c, char ch)
{
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* A quoted string without escapes or control characters (no key or dtype
 * NumPy writes has any; messages quote the string, on one line). */
static int parse_string(struct cursor *c, char *out, size_t cap)
{
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return bad(c, "expected a quoted string");
	char quote = *c->p++;
	size_t n = 0;
	while (c->p < c->end && *c->p != quote) {
		if (*c->p == '\\' || (unsigned char)*c->p < 0x20 || *c->p == 0x7f)
			return bad(c, "unsupported character in string");
		if (n + 1 == cap)
			return bad(c, "string too long");
		out[n++] = *c->p++;
	}
	if (!eat(c, quote))
		return bad(c, "unterminated string");
	out[n] = 0;
	return 0;
}

static int match_word(struct cursor *c, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/* The descr kind of each fixed-size dtype, in enum order. */
static const char *const kinds[] = {"b1", "u1", "i4", "i8", "f2", "f4", "f8"};

/* dtype descriptors are "<" (or "|", "=": little-endian here) plus kind and
 * size. ">" is accepted only where byte order does not apply. */
static int parse_descr(const char *descr, struct npy_array *a)
{
	if (!descr[0] || !strchr("<|=>", descr[0]))
		return -1;
	const char *kind = descr + 1;
	if (kind[0] == 'S') {
		size_t n = 0, digits = strspn(kind + 1, "0123456789");
		if (digits == 0 || digits > 9 || kind[1 + digits] || kind[1] == '0')
			return -1;
		for (size_t i = 1; i <= digits; i++)
			n = n * 10 + (size_t)(kind[i] - '0');
		a->dtype = NPY_BYTES;
		a->itemsize = n;
		return 0;
	}
	for (int i = 0; i < NPY_BYTES; i++) {
		if (strcmp(kind, kinds[i]) == 0) {
			a->dtype = (enum npy_dtype)i;
			a->itemsize = npy_dtype_size(a->dtype);
			return descr[0] == '>' && a->itemsize > 1 ? -1 : 0;
		}
	}
	return -1;
}

static int parse_dtype(struct cursor *c, struct npy_array *a)
{
	char descr[64];
	if (c->p < c->end && *c->p == '[')
		return bad(c, "unsupported dtype (structured arrays are not supported)");
	if (parse_string(c, descr, sizeof descr))
		return -1;
	if (parse_descr(descr, a))
		return sp_fail(c->err, "%s: unsupported dtype '%s'", c->name, descr);
	return 0;
}

static int parse_dim(struct cursor *c, int64_t *dim)
{
	if (c->p < c->end && *c->p == '-')
		return bad(c, "negative dimension in shape");
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return bad(c, "expected a dimension in shape");
	int64_t v = 0;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (v > (INT64_MAX - 9) / 10)
			return bad(c, "dimension too large");
		v = v * 10 + (*c->p++ - '0');
	}
	if (c->py2_longs)
		eat(c, 'L');
	*dim = v;
	return 0;
}

static int parse_shape(struct cursor *c, struct npy_array *a)
{
	if (!eat(c, '('))
		return bad(c, "shape is not a tuple");
	int n = 0, comma = 0;
	skip_space(c);
	while (!eat(c, ')')) {
		if (n == NPY_MAXDIM)
			return bad(c, "more than %d dimensions", NPY_MAXDIM);
		if (parse_dim(c, &a->shape[n++]))
			return -1;
		skip_space(c);
		comma = eat(c, ',');
		skip_space(c);
		if (!comma) {
			if (!eat(c, ')'))
				return bad(c, "expected ',' or ')' in shape");
			break;
		}
	}
	/* "(3)" is the integer 3 in Python, not a tuple; NumPy rejects it too. */
	if (n == 1 && !comma)
		return bad(c, "shape (%lld) is not a tuple (a 1-tuple needs a comma)",
			   (long long)a->shape[0]);
	a->ndim = n;
	return 0;
}

static int parse_fortran(struct cursor *c, int *fortran)
{
	if (match_word(c, "False"))
		*fortran = 0;
	else if (match_word(c, "True"))
		*fortran = 1;
	else
		return bad(c, "fortran_order is not True or False");
	return 0;
}

enum { KEY_DESCR, KEY_FORTRAN, KEY_SHAPE, NKEYS };
static const char *const keys[NKEYS] = {"descr", "fortran_order", "shape"};

static int parse_value(struct cursor *c, int key, struct npy_array *a, int *fortran)
{
	switch (key) {
	case KEY_DESCR:
		return parse_dtype(c, a);
	case KEY_FORTRAN:
		return parse_fortran(c, fortran);
	default:
		return parse_shape(c, a);
	}
}

static int parse_dict(struct cursor *c, struct npy_array *a, int *fortran)
{
	unsigned seen = 0;
	skip_space(c);
	if (!eat(c, '{'))
		return bad(c, "expected '{'");
	skip_space(c);
	while (!eat(c, '}')) {
		char key[32];
		const char *at = c->p;
		if (parse_string(c, key, sizeof key))
			return -1;
		int k = 0;
		while (k < NKEYS && strcmp(key, keys[k]) != 0)
			k++;
		if (k == NKEYS || (seen & 1u << k)) {
			c->p = at;
			return bad(c, k == NKEYS ? "unexpected key '%s'" : "key '%s' appears twice",
				   key);
		}
		seen |= 1u << k;
		skip_space(c);
		if (!eat(c, ':'))
			return bad(c, "expected ':' after '%s'", key);
		skip_space(c);
		if (parse_value(c, k, a, fortran))
			return -1;
		skip_space(c);
		if (!eat(c, ',')) {
			if (!eat(c, '}'))
				return bad(c, "expected ',' or '}'");
			break;
		}
		skip_space(c);
	}
	skip_space(c);
	if (c->p != c->end)
		return bad(c, "unexpected text after the dict");
	for (int k = 0; k < NKEYS; k++)
		if (!(seen & 1u << k))
			return sp_fail(c->err, "%s: bad header: no '%s' key", c->name, keys[k]);
	return 0;
}

int npy_header_parse(const char *text, size_t len, uint64_t base, int version,
		     struct npy_array *a, const char *name, struct sp_err *err)
{
	struct cursor c = {text, text + len, text, base, version <= 2, name, err};
	int fortran = 0;
	memset(a, 0, sizeof *a);
	if (parse_dict(&c, a, &fortran))
		return -1;
	/* With at most one dimension, Fortran and C order are the same bytes. */
	if (fortran && a->ndim > 1)
		return sp_fail(err, "%s: Fortran-ordered arrays are not supported "
			       "(save with np.ascontiguousarray)", name);
	return npy_check(a, name, err);
}

/* NumPy's header: keys sorted, repr() of each value, then 21 minus the
 * digits of the first dimension in spaces (room to grow that axis in
 * place), then spaces and a newline so the data starts at a multiple of 64.
 * Writing the same bytes as np.save makes files comparable byte for byte. */
int npy_header_encode(const struct npy_array *a, char *buf, size_t *len, const char *name,
		      struct sp_err *err)
{
	enum { PREAMBLE = 10, ALIGN = 64, GROWTH_DIGITS = 21 };
	if (npy_check(a, name, err))
		return -1;
	char *text = buf + PREAMBLE;
	size_t cap = NPY_HEADER_MAX - PREAMBLE, n;
	if (a->dtype == NPY_BYTES)
		n = snprintf(text, cap, "{'descr': '|S%zu', ", a->itemsize);
	else
		n = snprintf(text, cap, "{'descr': '%c%s', ", a->itemsize == 1 ? '|' : '<',
			     kinds[a->dtype]);
	n += snprintf(text + n, cap - n, "'fortran_order': False, 'shape': (");
	for (int i = 0; i < a->ndim; i++)
		n += snprintf(text + n, cap - n, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
	n += snprintf(text + n, cap - n, "%s), }", a->ndim == 1 ? "," : "");
	if (a->ndim > 0) {
		int digits = snprintf(NULL, 0, "%lld", (long long)a->shape[0]);
		for (int i = digits; i < GROWTH_DIGITS; i++)
			text[n++] = ' ';
	}
	size_t pad = ALIGN - (PREAMBLE + n + 1) % ALIGN;
	memset(text + n, ' ', pad);
	n += pad;
	text[n++] = '\n';
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	le_store((unsigned char *)buf + 8, n, 2);
	*len = PREAMBLE + n;
	return 0;
}
