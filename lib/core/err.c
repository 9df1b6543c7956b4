#include "core/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"

int sp_fail(struct sp_err *err, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int sp_fail_errno(struct sp_err *err, const char *fmt, ...)
{
	int saved = errno;
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - n, ": %s", strerror(saved));
	return -1;
}

int sp_err_prefix(struct sp_err *err, const char *fmt, ...)
{
	if (!err)
		return -1;
	char old[SP_ERR_MAX];
	memcpy(old, err->msg, sizeof old);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - n, ": %s", old);
	return -1;
}

/* The bytes of the character at p: those of a valid UTF-8 character, else
 * one (ASCII, or a byte that is not UTF-8). */
static size_t char_len(const unsigned char *p)
{
	size_t n = utf8_char_len(p);
	return n ? n : 1;
}

const char *sp_clip(char *buf, size_t size, const char *text)
{
	size_t n = strlen(text), keep = 0;
	if (n < size) {
		memcpy(buf, text, n + 1);
		return buf;
	}
	if (size < 4)
		return size ? (buf[0] = '\0', buf) : buf;
	/* keep + 3 < size <= n: what is kept lies inside text */
	const unsigned char *p = (const unsigned char *)text;
	while (keep + char_len(p + keep) + 3 < size)
		keep += char_len(p + keep);
	memcpy(buf, text, keep);
	memcpy(buf + keep, "...", 4);
	return buf;
}

/* The length of the character at p when it is valid UTF-8 and printable:
 * not a C1 control, U+0080 to U+009F (0xc2 0x80 to 0xc2 0x9f), which
 * terminals take as commands; else 0. */
static size_t printable_char_len(const unsigned char *p)
{
	return p[0] == 0xc2 && p[1] < 0xa0 ? 0 : utf8_char_len(p);
}

/* The letter of c's two-character escape (\\, \n, \r, \t), or 0. */
static char short_escape(unsigned char c)
{
	switch (c) {
	case '\\': return '\\';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\t': return 't';
	default: return 0;
	}
}

size_t sp_quote_char(const char *p, char out[4], const char **next)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)p;
	const size_t utf8 = *u >= 0x80 ? printable_char_len(u) : 0;
	const char letter = short_escape(*u);
	*next = p + (utf8 ? utf8 : 1);
	if (letter) {
		out[0] = '\\', out[1] = letter;
		return 2;
	}
	if ((*u >= 0x20 && *u < 0x7f) || utf8) {
		memcpy(out, p, (size_t)(*next - p));
		return (size_t)(*next - p);
	}
	out[0] = '\\', out[1] = 'x', out[2] = hex[*u >> 4], out[3] = hex[*u & 15];
	return 4;
}

const char *sp_quote(char *buf, size_t size, const char *text)
{
	if (size < 4)
		return size ? (buf[0] = '\0', buf) : buf;
	size_t n = 0, cut = 0; /* cut: where "..." goes if the rest does not fit */
	for (const char *p = text, *next; *p; p = next) {
		char out[4];
		const size_t k = sp_quote_char(p, out, &next);
		if (n + k > size - 1) {
			memcpy(buf + cut, "...", 4);
			return buf;
		}
		memcpy(buf + n, out, k);
		n += k;
		if (n + 3 <= size - 1)
			cut = n;
	}
	buf[n] = '\0';
	return buf;
}
