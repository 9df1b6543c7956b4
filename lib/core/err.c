#include "core/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* The length of the character at p when it is valid UTF-8 and printable
 * (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF; not a
 * C1 control, U+0080 to U+009F, which terminals take as commands), else 0.
 * A NUL ends a sequence early, so nothing past the string is read. */
static size_t utf8_char_len(const unsigned char *p)
{
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	unsigned lo = p[0] == 0xe0 ? 0xa0 : p[0] == 0xf0 ? 0x90 : p[0] == 0xc2 ? 0xa0 : 0x80;
	unsigned hi = p[0] == 0xed ? 0x9f : p[0] == 0xf4 ? 0x8f : 0xbf;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

const char *sp_quote(char *buf, size_t size, const char *text)
{
	static const char hex[] = "0123456789abcdef";
	if (size < 4)
		return size ? (buf[0] = '\0', buf) : buf;
	size_t n = 0, cut = 0; /* cut: where "..." goes if the rest does not fit */
	for (const unsigned char *p = (const unsigned char *)text, *next; *p; p = next) {
		char esc[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
		const char *out = esc;
		size_t k = 4, utf8 = *p >= 0x80 ? utf8_char_len(p) : 0;
		next = p + (utf8 ? utf8 : 1);
		if ((*p >= 0x20 && *p < 0x7f) || utf8)
			out = (const char *)p, k = (size_t)(next - p);
		else if (*p == '\n' || *p == '\r' || *p == '\t')
			esc[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't', k = 2;
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
