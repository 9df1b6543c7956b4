#include "core/textscan.h"

#include "core/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int text_guard_check(struct text_guard *g, const char *p, size_t n, const char *path,
		     struct sp_err *err)
{
	const char *nul = memchr(p, '\0', n);
	const char *end = nul ? nul : p + n;
	for (const char *q = p; q < end;) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t piece = (size_t)((nl ? nl : end) - q);
		if (g->line_len + piece > TEXT_LINE_MAX)
			return sp_fail(err, "%s:%llu: line longer than %zu MiB: not a text file of lines",
				       path, (unsigned long long)g->line + 1, TEXT_LINE_MAX >> 20);
		g->line_len += piece;
		if (!nl)
			break;
		g->line++;
		g->line_len = 0;
		q = nl + 1;
	}
	if (nul)
		return sp_fail(err, "%s:%llu: a NUL byte at byte %llu: not a text file", path,
			       (unsigned long long)g->line + 1,
			       (unsigned long long)(g->offset + (uint64_t)(nul - p)));
	g->offset += n;
	return 0;
}

/* Read a stream that cannot be mapped (a pipe, a device) to its end. */
static int read_all(struct text_file *f, int fd, const char *path, struct sp_err *err)
{
	struct text_guard guard = {0};
	size_t cap = (size_t)1 << 20, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			return sp_fail(err, "%s: out of memory after reading %zu bytes", path, len);
		ssize_t got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return sp_fail_errno(err, "%s: read failed after %zu bytes", path, len);
		}
		if (got == 0)
			break;
		if (text_guard_check(&guard, buf + len, (size_t)got, path, err)) {
			free(buf);
			return -1;
		}
		len += (size_t)got;
		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger)
				free(buf);
			buf = bigger;
			cap *= 2;
		}
	}
	f->heap = buf;
	f->data = buf;
	f->len = len;
	return 0;
}

int text_file_open(struct text_file *f, const char *path, struct sp_err *err)
{
	memset(f, 0, sizeof *f);
	f->data = "";
	int fd;
	uint64_t size;
	if (infile_open_fd(path, INFILE_STREAM, &fd, &size, err))
		return -1;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0) {
		rc = sp_fail_errno(err, "%s", path);
	} else if (!S_ISREG(st.st_mode)) {
		rc = read_all(f, fd, path, err);
	} else if (size > 0) {
		/* Mapped rather than read: no copy, and the pages are the kernel's
		 * cache, not our heap, while the parsed arrays take the memory. */
		size_t len = (size_t)st.st_size;
		void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			rc = sp_fail_errno(err, "%s: cannot map %zu bytes", path, len);
		} else {
			madvise(map, len, MADV_SEQUENTIAL);
			f->map = map;
			f->data = map;
			f->len = len;
			struct text_guard guard = {0};
			rc = text_guard_check(&guard, map, len, path, err);
		}
	}
	close(fd);
	if (rc)
		text_file_close(f);
	return rc;
}

void text_file_close(struct text_file *f)
{
	if (f->map)
		munmap(f->map, f->len);
	free(f->heap);
	memset(f, 0, sizeof *f);
}

void text_scan_init(struct text_scan *s, const char *buf, size_t len, const char *name)
{
	s->p = buf;
	s->end = buf + len;
	s->name = name;
	s->line = 0;
}

int text_scan_line(struct text_scan *s, struct text_span *line)
{
	if (s->p >= s->end)
		return 0;
	const char *nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
	const char *e = nl ? nl : s->end;
	line->p = s->p;
	line->end = e > s->p && e[-1] == '\r' ? e - 1 : e;
	s->p = nl ? nl + 1 : s->end;
	s->line++;
	return 1;
}

int text_scan_content(struct text_scan *s, const char *comment_chars, struct text_span *line)
{
	while (text_scan_line(s, line)) {
		if (line->p < line->end && is_digit(*line->p))
			return 1; /* the common case, decided at once */
		struct text_span t = text_span_trim(*line);
		if (t.p < t.end && !memchr(comment_chars, *t.p, strlen(comment_chars)))
			return 1;
	}
	return 0;
}

int text_scan_fail(const struct text_scan *s, struct sp_err *err, const char *fmt, ...)
{
	char msg[SP_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return sp_fail(err, "%s:%lld: %s", s->name, (long long)s->line, msg);
}

struct text_span text_span_trim(struct text_span s)
{
	while (s.p < s.end && is_blank(*s.p))
		s.p++;
	while (s.end > s.p && is_blank(s.end[-1]))
		s.end--;
	return s;
}

int text_span_equal_nocase(struct text_span s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s.end - s.p) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s.p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		char w = word[i];
		if (w >= 'A' && w <= 'Z')
			w = (char)(w - 'A' + 'a');
		if (c != w)
			return 0;
	}
	return 1;
}

int text_next_field(struct text_span *rest, char sep, struct text_span *field)
{
	if (sep == ' ') {
		const char *p = rest->p;
		while (p < rest->end && is_blank(*p))
			p++;
		if (p == rest->end) {
			rest->p = p;
			return 0;
		}
		field->p = p;
		while (p < rest->end && !is_blank(*p))
			p++;
		field->end = p;
		rest->p = p;
		return 1;
	}
	/* A NULL start marks "no fields left", so "1,2," still yields its
	 * empty third field. */
	if (!rest->p)
		return 0;
	const char *at = memchr(rest->p, sep, (size_t)(rest->end - rest->p));
	*field = text_span_trim((struct text_span){rest->p, at ? at : rest->end});
	rest->p = at ? at + 1 : NULL;
	return 1;
}

const char *text_span_show(struct text_span s, char *buf, size_t size)
{
	size_t n = (size_t)(s.end - s.p), keep = n < size ? n : size - 1;
	if (n >= size && size > 4)
		keep = size - 4;
	for (size_t i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)s.p[i];
		buf[i] = c >= 0x20 && c < 0x7f && c != '\'' ? (char)c : '?';
	}
	if (keep < n && size > 4) {
		memcpy(buf + keep, "...", 3);
		keep += 3;
	}
	buf[keep] = '\0';
	return buf;
}

/* An optional sign at *p, taken; says whether it was '-'. */
static int take_sign(const char **p, const char *end)
{
	if (*p == end || (**p != '+' && **p != '-'))
		return 0;
	return *(*p)++ == '-';
}

enum text_num text_parse_i64(struct text_span s, int64_t *out)
{
	const char *p = s.p;
	int neg = take_sign(&p, s.end);
	if (p == s.end)
		return TEXT_SYNTAX;
	uint64_t v = 0;
	for (const char *q = p; q < s.end; q++) {
		unsigned d = (unsigned)(*q - '0');
		if (d > 9)
			return TEXT_SYNTAX;
		v = v * 10 + d; /* may wrap past 19 digits; the count below catches it */
	}
	while (p < s.end - 1 && *p == '0')
		p++;
	size_t digits = (size_t)(s.end - p);
	if (digits > 19 || (digits == 19 && v > (uint64_t)INT64_MAX))
		return TEXT_RANGE;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return TEXT_OK;
}

/* Powers of ten that doubles hold exactly (5^22 < 2^53). */
static const double pow10_exact[] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static double bits_to_double(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

/* m * 10^e10 rounded to float as (float)strtod would: first to the nearest
 * double c, then to float. With m and the power of ten exact, one double
 * operation gives c (Clinger's fast path). Otherwise up to three roundings
 * leave d within a few ulps of c; float rounding is monotone, so when the
 * doubles 8 ulps either side of d round to the same float as d, that float
 * is (float)c. Returns 0 when it cannot tell (a near tie, about one number
 * in 10^7, or an exponent out of reach); the caller then asks strtod. */
static int float_from_decimal(uint64_t m, int64_t e10, float *out)
{
	if (m <= (uint64_t)1 << 53 && e10 >= -22 && e10 <= 22) {
		double c = e10 < 0 ? (double)m / pow10_exact[-e10] : (double)m * pow10_exact[e10];
		*out = (float)c;
		return 1;
	}
	if (e10 < -44 || e10 > 44)
		return 0;
	double d = (double)m;
	int64_t e = e10 < 0 ? -e10 : e10;
	if (e > 22) {
		d = e10 < 0 ? d / pow10_exact[22] : d * pow10_exact[22];
		e -= 22;
	}
	d = e10 < 0 ? d / pow10_exact[e] : d * pow10_exact[e];
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	float f = (float)d;
	if ((float)bits_to_double(u - 8) != f || (float)bits_to_double(u + 8) != f)
		return 0;
	*out = f;
	return 1;
}

/* Eight ASCII digits at *p as a number, in a few multiplications rather
 * than eight dependent steps (the usual SWAR trick, little-endian); 0 when
 * fewer than eight bytes remain or one is not a digit. */
static int take_eight_digits(const char **p, const char *end, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v;
	if (end - *p < 8)
		return 0;
	memcpy(&v, *p, 8);
	if ((v & 0xf0f0f0f0f0f0f0f0) != 0x3030303030303030 ||
	    ((v + 0x0606060606060606) & 0xf0f0f0f0f0f0f0f0) != 0x3030303030303030)
		return 0;
	v -= 0x3030303030303030;
	v = v * 10 + (v >> 8); /* pairs of digits in every other byte */
	v = (((v & 0x000000ff000000ff) * (100 + (1000000ULL << 32))) +
	     (((v >> 16) & 0x000000ff000000ff) * (1 + (10000ULL << 32)))) >> 32;
	*out = v;
	*p += 8;
	return 1;
#else
	return 0;
#endif
}

/* The rare inputs float_from_decimal leaves: more than 19 significant digits,
 * exponents beyond 10^±44, near ties. strtod wants a NUL-terminated copy.
 * The syntax is already checked, and spkit never calls setlocale, so the
 * decimal point strtod expects is '.'. */
static float float_via_strtod(const char *p, const char *end)
{
	char local[128];
	size_t n = (size_t)(end - p);
	char *buf = n < sizeof local ? local : malloc(n + 1);
	if (!buf)
		return NAN; /* reported as not finite; a number this long is absurd anyway */
	memcpy(buf, p, n);
	buf[n] = '\0';
	float f = (float)strtod(buf, NULL);
	if (buf != local)
		free(buf);
	return f;
}

enum text_num text_parse_float(struct text_span s, float *out)
{
	const char *p = s.p;
	int neg = take_sign(&p, s.end);
	const char *digits_start = p;
	if (p < s.end && !is_digit(*p) && *p != '.') {
		struct text_span word = {p, s.end};
		if (text_span_equal_nocase(word, "nan") || text_span_equal_nocase(word, "inf") ||
		    text_span_equal_nocase(word, "infinity"))
			return TEXT_NOT_FINITE;
		return TEXT_SYNTAX;
	}
	/* Up to 19 significant digits in m (10^19 < 2^64); later digits only
	 * move the exponent, and a non-zero one (or an exponent too long to
	 * hold) sends the number to strtod. */
	uint64_t m = 0;
	int sig = 0, any = 0, slow = 0;
	int64_t e10 = 0;
	for (; p < s.end && is_digit(*p); p++) {
		any = 1;
		if (sig < 19) {
			m = m * 10 + (unsigned)(*p - '0');
			sig += m != 0;
		} else {
			e10++;
			slow |= *p != '0';
		}
	}
	if (p < s.end && *p == '.') {
		p++;
		/* Eight digits at a time once the leading zeros are behind. */
		uint64_t eight;
		while (m != 0 && sig <= 11 && take_eight_digits(&p, s.end, &eight)) {
			m = m * 100000000 + eight;
			sig += 8;
			e10 -= 8;
		}
		for (; p < s.end && is_digit(*p); p++) {
			any = 1;
			if (sig < 19) {
				m = m * 10 + (unsigned)(*p - '0');
				sig += m != 0;
				e10--;
			} else {
				slow |= *p != '0';
			}
		}
	}
	if (!any)
		return TEXT_SYNTAX;
	if (p < s.end && (*p == 'e' || *p == 'E')) {
		p++;
		int eneg = take_sign(&p, s.end);
		if (p == s.end || !is_digit(*p))
			return TEXT_SYNTAX;
		int64_t x = 0;
		for (; p < s.end && is_digit(*p); p++) {
			if (x < 100000) /* far past float's range; stop before overflow */
				x = x * 10 + (*p - '0');
			else
				slow = 1;
		}
		e10 += eneg ? -x : x;
	}
	if (p != s.end)
		return TEXT_SYNTAX;

	float f = 0;
	if (m != 0 && (slow || !float_from_decimal(m, e10, &f)))
		f = float_via_strtod(digits_start, s.end);
	if (!isfinite(f))
		return TEXT_NOT_FINITE;
	*out = neg ? -f : f;
	return TEXT_OK;
}

/* The message for field k that did not parse. */
static int field_fail(const struct text_scan *s, struct sp_err *err, struct text_span f, int k,
		      const char *what, enum text_num rc)
{
	char shown[TEXT_SHOW_MAX];
	text_span_show(f, shown, sizeof shown);
	if (rc == TEXT_RANGE)
		return text_scan_fail(s, err, "field %d: '%s' is out of range for %s", k, shown, what);
	if (rc == TEXT_NOT_FINITE)
		return text_scan_fail(s, err, "field %d: '%s' is not a finite float", k, shown);
	return text_scan_fail(s, err, "field %d: expected %s, found '%s'", k, what, shown);
}

int text_field_i64(const struct text_scan *s, struct text_span f, int k, const char *what,
		   int64_t *out, struct sp_err *err)
{
	enum text_num rc = text_parse_i64(f, out);
	return rc == TEXT_OK ? 0 : field_fail(s, err, f, k, what, rc);
}

int text_field_float(const struct text_scan *s, struct text_span f, int k, const char *what,
		     float *out, struct sp_err *err)
{
	enum text_num rc = text_parse_float(f, out);
	return rc == TEXT_OK ? 0 : field_fail(s, err, f, k, what, rc);
}
