#include "core/report.h"

#include <stdarg.h>
#include <stdio.h>

void sp_report_progress(const struct sp_report *r, const char *label, uint64_t done,
			uint64_t total)
{
	if (r && r->progress)
		r->progress(r->ctx, label, done, total);
}

void sp_report_msg(const struct sp_report *r, int level, const char *fmt, ...)
{
	if (!r || !r->message)
		return;
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	r->message(r->ctx, level, text);
}
