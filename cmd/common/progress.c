#include "common/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cli.h"
#include "core/timer.h"

void progress_start(struct progress *p, const char *label, const char *unit, uint64_t total)
{
	p->label = label;
	p->unit = unit;
	p->total = total;
	p->start = p->last_draw = timer_now();
	p->tty = isatty(STDERR_FILENO);
	p->active = cli_verbosity > 0;
	const char *env = getenv("SPKIT_PROGRESS_INTERVAL");
	p->interval = p->tty ? 0.1 : (env ? atof(env) : 30.0);
	if (p->interval <= 0)
		p->interval = 30.0;
}

const char *progress_format_seconds(double s, char *buf, int size)
{
	if (s < 0 || s != s)
		snprintf(buf, size, "?");
	else if (s < 60)
		snprintf(buf, size, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)s % 3600 / 60);
	return buf;
}

static void draw(struct progress *p, uint64_t done, double now, int final)
{
	double elapsed = now - p->start;
	double rate = elapsed > 0 ? (double)done / elapsed : 0;
	char eta[32], el[32];
	progress_format_seconds(elapsed, el, sizeof el);
	if (p->total && rate > 0)
		progress_format_seconds((double)(p->total - (done < p->total ? done : p->total)) / rate,
					eta, sizeof eta);
	else
		snprintf(eta, sizeof eta, "?");
	if (p->tty) {
		enum { WIDTH = 30 };
		char bar[WIDTH + 1];
		int fill = p->total ? (int)((double)done / p->total * WIDTH) : 0;
		for (int i = 0; i < WIDTH; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[WIDTH] = '\0';
		if (p->total)
			fprintf(stderr, "\r%s [%s] %llu/%llu %s  %.1f/s  ETA %s ", p->label, bar,
				(unsigned long long)done, (unsigned long long)p->total, p->unit, rate, eta);
		else
			fprintf(stderr, "\r%s %llu %s  %.1f/s  %s ", p->label, (unsigned long long)done,
				p->unit, rate, el);
		if (final)
			fputc('\n', stderr);
	} else if (p->total) {
		fprintf(stderr, "%s: %llu/%llu %s (%.1f%%), %.1f/s, elapsed %s, ETA %s\n", p->label,
			(unsigned long long)done, (unsigned long long)p->total, p->unit,
			100.0 * done / p->total, rate, el, final ? "0.0s" : eta);
	} else {
		fprintf(stderr, "%s: %llu %s, %.1f/s, elapsed %s\n", p->label,
			(unsigned long long)done, p->unit, rate, el);
	}
	p->last_draw = now;
}

void progress_update(struct progress *p, uint64_t done)
{
	if (!p->active)
		return;
	double now = timer_now();
	if (now - p->last_draw >= p->interval)
		draw(p, done, now, 0);
}

void progress_finish(struct progress *p, uint64_t done)
{
	if (p->active)
		draw(p, done, timer_now(), 1);
	p->active = 0;
}

static void report_progress(void *ctx, const char *label, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	if (p->label != label || p->total != total)
		progress_start(p, label, "items", total);
	if (total && done >= total) {
		progress_finish(p, done);
		p->label = NULL;
	} else
		progress_update(p, done);
}

static void report_message(void *ctx, int level, const char *text)
{
	cli_log(level, "%s", text);
}

struct sp_report progress_report(struct progress *p)
{
	p->label = NULL;
	return (struct sp_report){report_progress, report_message, p};
}
