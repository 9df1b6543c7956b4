#include "sample/sample_sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/num.h"
#include "core/outfile.h"
#include "core/timer.h"
#include "sample/sample_grid.h"
#include "sample/sample_merge.h"
#include "sweep/sweep.h"

/* Progress lines go to the log every this many shapes, as in the original. */
enum { LOG_EVERY = 5 };
/* The longest line of the log, before escaping. */
enum { LOG_LINE_MAX = 1024 };

/* What open_outputs made (folders, a new log), removed again, last first,
 * when a later step fails: a sweep that cannot start, or that fails before
 * its first row or the first shape its log tells of, leaves nothing
 * behind, and what was there before (a CSV to resume) stays untouched. */
struct made {
	const char *path[4];
	int n;
};

struct run {
	const struct sample_job *job;
	struct sample_sweep_result *r;
	struct sweep csv;
	FILE *log;
	char data[4096], logs[4096]; /* the folders sampling_data and sampling_log */
	struct made made;
	char label[256]; /* "layernorm_fp16", the log's Kernel: */
	uint64_t done;   /* shapes of this part finished, earlier runs' included */
	uint64_t since;  /* shapes since the last progress line */
	double since_t;
};

const char *sample_output_stem(const struct sample_job *job, char *buf, size_t size)
{
	snprintf(buf, size, "%s_%s_%s_%d_%d", job->clock->device, job->cfg->kernel_name,
		 sample_precision_name(job->precision), job->parts, job->part);
	return buf;
}

const char *sample_log_progress(char *buf, size_t size, const char *stamp, const char *kernel,
				const char *precision, uint64_t done, uint64_t total,
				double speed)
{
	uint64_t left = (uint64_t)((double)(total - done) * speed);
	snprintf(buf, size,
		 "[%s]Kernel: %s_%s | Progress: %" PRIu64 "/%" PRIu64 "=%.2f%% | "
		 "Speed: %.2fs/sample | Remaining: %" PRIu64 "d%" PRIu64 "h%" PRIu64 "m%" PRIu64
		 "s",
		 stamp, kernel, precision, done, total,
		 total ? 100.0 * (double)done / (double)total : 100.0, speed, left / 86400,
		 left % 86400 / 3600, left % 3600 / 60, left % 60);
	return buf;
}

static void stamp_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

/* A line of the log, escaped (sp_quote) as a program's messages are: why a
 * shape was skipped or failed is the library's message, which holds names
 * raw (err.h). Four bytes of room a byte: no escape is cut. */
static int log_text(struct run *run, const char *text, struct sp_err *err)
{
	char shown[LOG_LINE_MAX * 4];
	if (fprintf(run->log, "%s\n", sp_quote(shown, sizeof shown, text)) < 0 || fflush(run->log))
		return sp_fail_errno(err, "%s: cannot write", run->r->log);
	return 0;
}

/* "[stamp]Kernel: layernorm_fp16 | " and the rest. */
static int log_line(struct run *run, struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int log_line(struct run *run, struct sp_err *err, const char *fmt, ...)
{
	char stamp[32], text[LOG_LINE_MAX];
	stamp_now(stamp, sizeof stamp);
	int n = snprintf(text, sizeof text, "[%s]Kernel: %s | ", stamp, run->label);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
	va_end(ap);
	return log_text(run, text, err);
}

static int log_progress(struct run *run, struct sp_err *err)
{
	char stamp[32], text[512];
	double now = timer_now();
	double speed = run->since ? (now - run->since_t) / (double)run->since : 0;
	stamp_now(stamp, sizeof stamp);
	sample_log_progress(text, sizeof text, stamp, run->job->cfg->kernel_name,
			    sample_precision_name(run->job->precision), run->done, run->r->total,
			    speed);
	run->since = 0;
	run->since_t = now;
	return log_text(run, text, err);
}

/* What was made stays, also when the run is killed: it has a row now, its
 * log tells of a shape, or the run is over. */
static void keep(struct made *m)
{
	for (int i = 0; i < m->n; i++)
		outfile_keep_on_signal(m->path[i]);
}

static void unmake(struct made *m)
{
	keep(m);
	while (m->n > 0)
		remove(m->path[--m->n]);
}

/* A folder that may exist already. */
static int make_dir(const char *path, struct made *m, struct sp_err *err)
{
	if (mkdir(path, 0777) == 0)
		m->path[m->n++] = path;
	else if (errno != EEXIST)
		return sp_fail_errno(err, "%s: cannot create the folder", path);
	return 0;
}

/* The log, appended to; new ones are created exclusively ("x", O_EXCL),
 * so that only a log this run made is ever removed. */
static int open_log(struct run *run, struct made *m, struct sp_err *err)
{
	const char *path = run->r->log;
	run->log = fopen(path, "ax");
	if (run->log)
		m->path[m->n++] = path;
	else if (errno == EEXIST)
		run->log = fopen(path, "a");
	return run->log ? 0 : sp_fail_errno(err, "%s: cannot open", path);
}

/* A path built from parts, refused when it does not fit. */
static int make_path(char *buf, size_t size, struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int make_path(char *buf, size_t size, struct sp_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return sp_fail(err, "%.64s...: the path is too long", buf);
	return 0;
}

/* A row the CSV already holds: its shape whole numbers, its durations
 * times, as merge and fit read them; anything else is damage a rerun must
 * not build on (it would run to the end and leave a file merge refuses). */
static int check_row(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	const struct run *run = ctx;
	size_t nshape = (size_t)run->job->cfg->grid.ndims;
	for (size_t c = 0; c < row->nfields; c++) {
		double v;
		int shape = c < nshape;
		if (num_parse_double(row->fields[c], 1, &v) == NUM_OK &&
		    (shape ? sample_is_shape_value(v) : sample_is_time(v)))
			continue;
		char q[64];
		return sp_fail(err, "%s:%zu: column '%s': expected %s, found '%s'", run->r->csv,
			       row->line, run->job->cfg->columns[c],
			       shape ? "a whole number" : "a time (a number >= 0)",
			       sp_clip(q, sizeof q, row->fields[c]));
	}
	return 0;
}

static int open_outputs(struct run *run, struct sp_err *err)
{
	const struct sample_job *job = run->job;
	struct sample_sweep_result *r = run->r;
	char stem[512];
	sample_output_stem(job, stem, sizeof stem);
	if (make_path(run->data, sizeof run->data, err, "%s/sampling_data", job->output_dir) ||
	    make_path(run->logs, sizeof run->logs, err, "%s/sampling_log", job->output_dir) ||
	    make_path(r->csv, sizeof r->csv, err, "%s/%s.csv", run->data, stem) ||
	    make_path(r->log, sizeof r->log, err, "%s/%s.txt", run->logs, stem))
		return -1;
	/* The log first, so that a log that cannot be opened leaves no CSV. */
	const struct sample_config *cfg = job->cfg;
	struct made *made = &run->made;
	if (make_dir(job->output_dir, made, err) || make_dir(run->data, made, err) ||
	    make_dir(run->logs, made, err) || open_log(run, made, err) ||
	    sweep_open_checked(&run->csv, r->csv, (const char *const *)cfg->columns, cfg->ncols,
			       (const char *const *)cfg->columns, (size_t)cfg->grid.ndims,
			       check_row, run, err)) {
		if (run->log)
			fclose(run->log);
		unmake(made);
		return -1;
	}
	return 0;
}

static int write_row(struct run *run, const int64_t *shape, const struct sample_times *t,
		     struct sp_err *err)
{
	for (int i = 0; i < run->job->cfg->grid.ndims; i++)
		csv_writer_int(&run->csv.w, shape[i]);
	sample_write_us(&run->csv.w, t->fwd_us);
	sample_write_us(&run->csv.w, t->bwd_us);
	if (run->csv.w.rows == 0)
		keep(&run->made);
	return sweep_end_row(&run->csv, err);
}

/* "Skipped: [2, 3]: why" or "Failed: ...". A log that tells of a shape is
 * a record to keep, and so are the CSV it goes with, a header alone or
 * not, and their folders. */
static int log_shape(struct run *run, const char *what, const char *shape, const char *why,
		     struct sp_err *err)
{
	if (log_line(run, err, "%s: %s: %s", what, shape, why))
		return -1;
	keep(&run->made);
	csv_writer_keep(&run->csv.w);
	return 0;
}

/* One shape of this part: already done, skipped, failed or measured. */
static int sample_shape(struct run *run, void *warm, const int64_t *shape, struct sp_err *err)
{
	const struct sample_job *job = run->job;
	int nd = job->cfg->grid.ndims;
	char keys[SAMPLE_MAX_DIMS][24], text[256];
	const char *key[SAMPLE_MAX_DIMS];
	for (int i = 0; i < nd; i++) {
		snprintf(keys[i], sizeof keys[i], "%" PRId64, shape[i]);
		key[i] = keys[i];
	}
	run->done++;
	sample_shape_text(nd, shape, text, sizeof text);
	struct sp_err why;
	struct sample_times t;
	int rc = 0;
	if (sweep_done(&run->csv, key)) {
		run->r->resumed++;
	} else if (sample_job_accepts(job, shape, &why)) {
		run->r->skipped++;
		run->since++;
		sp_report_msg(job->report, 2, "%s %s skipped: %s", run->label, text, why.msg);
		rc = log_shape(run, "Skipped", text, why.msg, err);
	} else if (sample_measure(job, warm, shape, &t, &why)) {
		run->r->failed++;
		run->since++;
		sp_report_msg(job->report, 1, "%s %s failed: %s", run->label, text, why.msg);
		rc = log_shape(run, "Failed", text, why.msg, err);
	} else {
		run->r->measured++;
		run->since++;
		sp_report_msg(job->report, 2, "%s %s: forward %.3f us, backward %.3f us", run->label,
			      text, t.fwd_us, t.bwd_us);
		rc = write_row(run, shape, &t, err);
	}
	if (rc == 0 && run->since > 0 &&
	    (run->since == LOG_EVERY || run->done == run->r->total))
		rc = log_progress(run, err);
	return rc;
}

static int walk(struct run *run, void *warm, struct sp_err *err)
{
	const struct sample_job *job = run->job;
	const struct sample_grid *g = &job->cfg->grid;
	int64_t shape[SAMPLE_MAX_DIMS];
	uint64_t n = 1;
	sample_grid_first(g, shape);
	do {
		if (!sample_grid_owns(n, job->parts, job->part))
			continue;
		if (sample_shape(run, warm, shape, err))
			return -1;
		sp_report_progress(job->report, run->label, run->done, run->r->total);
	} while (n++, sample_grid_next(g, shape));
	return 0;
}

int sample_sweep(const struct sample_job *job, struct sample_sweep_result *r,
		 struct sp_err *err)
{
	struct run run = {.job = job, .r = r};
	memset(r, 0, sizeof *r);
	r->total = sample_grid_part_count(sample_grid_count(&job->cfg->grid), job->parts,
					  job->part);
	snprintf(run.label, sizeof run.label, "%s_%s", job->cfg->kernel_name,
		 sample_precision_name(job->precision));
	void *warm;
	if (sample_job_check(job, err) || open_outputs(&run, err))
		return -1;
	/* Until the first row or shape logged, a kill leaves nothing of what
	 * this run made. */
	for (int i = 0; i < run.made.n; i++)
		outfile_remove_on_signal(run.made.path[i]);
	int rc = -1;
	if (sample_warm_open(job, &warm, err))
		goto close;
	run.since_t = timer_now();
	rc = log_line(&run, err, "Start: part %d of %d, %" PRIu64 " shape%s, %zu row%s in the CSV",
		      job->part, job->parts, r->total, sp_plural(r->total), run.csv.resumed,
		      sp_plural(run.csv.resumed));
	if (rc == 0)
		rc = walk(&run, warm, err);
	sample_warm_close(job, warm);
close:
	if (rc) {
		/* No row yet in a CSV this run made or found empty, nor a shape
		 * in its log: the CSV goes or is emptied again, and the log and
		 * the folders made go, as when the sweep cannot start or is
		 * killed. */
		int unstarted = csv_writer_is_unstarted(&run.csv.w);
		sweep_abort(&run.csv);
		fclose(run.log);
		if (unstarted)
			unmake(&run.made);
		keep(&run.made);
		return -1;
	}
	keep(&run.made);
	rc = sweep_close(&run.csv, err);
	if (fclose(run.log) && rc == 0)
		rc = sp_fail_errno(err, "%s: cannot write", r->log);
	return rc;
}
