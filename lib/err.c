#include "err.h"

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
