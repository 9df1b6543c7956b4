/* Progress of a long job on stderr. On a terminal: one redrawn line with a
 * bar, the rate and the ETA. Otherwise (a log file, a SLURM job): a plain
 * line every `interval` seconds (SPKIT_PROGRESS_INTERVAL, default 30), so
 * logs stay readable. Silent when cli_verbosity is 0 (-q). */
#ifndef SPKIT_PROGRESS_H
#define SPKIT_PROGRESS_H

#include <stdint.h>

#include "core/report.h"

struct progress {
	const char *label;
	const char *unit;
	uint64_t total; /* 0 when unknown */
	double start, last_draw, interval;
	int tty, active;
};

void progress_start(struct progress *p, const char *label, const char *unit, uint64_t total);
/* Cheap to call often: draws only when a redraw is due. */
void progress_update(struct progress *p, uint64_t done);
void progress_finish(struct progress *p, uint64_t done);

/* The library's report (core/report.h) drawn by p: the first progress
 * call of a label starts the bar (unit "items"), done == total finishes it;
 * messages go to stderr at their verbosity (cli_log). */
struct sp_report progress_report(struct progress *p);

/* Formats seconds as "1h02m", "3m05s" or "4.2s" into buf. */
const char *progress_format_seconds(double s, char *buf, int size);

#endif
