/* How library code tells its caller how far a long job has got, and what
 * it is doing, without printing: the caller (a program in cmd/) passes a
 * struct sp_report whose functions draw a progress bar, write log lines or
 * do nothing. Every function here takes a NULL report, and so does
 * nothing, for callers that want silence (tests, other library code). */
#ifndef SPKIT_REPORT_H
#define SPKIT_REPORT_H

#include <stdint.h>

struct sp_report {
	/* done of total items (total 0: unknown), of the job named label. */
	void (*progress)(void *ctx, const char *label, uint64_t done, uint64_t total);
	/* One line of text, shown when the user's verbosity reaches level
	 * (1: normal, 2: -v, 3: -vv). */
	void (*message)(void *ctx, int level, const char *text);
	void *ctx;
};

void sp_report_progress(const struct sp_report *r, const char *label, uint64_t done,
			uint64_t total);
void sp_report_msg(const struct sp_report *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
