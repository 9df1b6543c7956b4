#include "formats/csv_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/num.h"

/* MODE_STREAM: a new file (or standard output) whose rows go out as they
 * end, each in one write(2); MODE_APPEND: the same onto an existing file. */
enum { MODE_FILE, MODE_STDOUT, MODE_APPEND, MODE_STREAM };

static int start(struct csv_writer *w, const char *path, size_t ncols, int mode, struct sp_err *err)
{
	memset(w, 0, sizeof *w);
	w->fd = -1;
	w->mode = mode;
	w->ncols = ncols;
	if (ncols == 0)
		return sp_fail(err, "%s: no columns to write", path);
	/* the name in messages */
	const char *name = mode == MODE_STDOUT ? "stdout"
			   : outfile_is_stdout(path) ? OUTFILE_STDOUT_NAME : path;
	w->path = strdup(name);
	w->starts = calloc(ncols, sizeof *w->starts);
	if (!w->path || !w->starts) {
		free(w->path);
		free(w->starts);
		return sp_fail(err, "%s: out of memory", name);
	}
	return 0;
}

static void release(struct csv_writer *w)
{
	outfile_keep_on_signal(w->path);
	free(w->path);
	free(w->starts);
	buf_free(&w->fields);
	buf_free(&w->line);
	w->path = NULL;
	w->starts = NULL;
}

static void add_field(struct csv_writer *w, const char *text, size_t len)
{
	if (w->nfields < w->ncols) {
		w->starts[w->nfields] = w->fields.len;
		if (buf_add(&w->fields, text, len) || buf_addc(&w->fields, '\0'))
			w->out_of_memory = 1;
	}
	w->nfields++;
}

void csv_writer_str(struct csv_writer *w, const char *s)
{
	add_field(w, s, strlen(s));
}

void csv_writer_int(struct csv_writer *w, int64_t v)
{
	char b[24];
	add_field(w, b, (size_t)snprintf(b, sizeof b, "%" PRId64, v));
}

void csv_writer_double(struct csv_writer *w, double v, int digits)
{
	char b[NUM_DOUBLE_MAX];
	csv_writer_str(w, num_format_double(b, v, digits));
}

const char *csv_writer_field(const struct csv_writer *w, size_t i)
{
	return i < w->nfields && i < w->ncols ? w->fields.data + w->starts[i] : NULL;
}

static int needs_quotes(const char *s, size_t len, size_t ncols)
{
	if (len == 0)
		return ncols == 1; /* else the row would be a blank line, which readers skip */
	if (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t')
		return 1;
	/* Readers drop a BOM at the start of a file: first in a header, it would vanish. */
	if (len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		return 1;
	return strcspn(s, ",\"\r\n") < len;
}

static int add_quoted(struct buf *b, const char *s, size_t len)
{
	if (buf_addc(b, '"'))
		return -1;
	for (const char *q; (q = memchr(s, '"', len)); len -= (size_t)(q + 1 - s), s = q + 1)
		if (buf_add(b, s, (size_t)(q + 1 - s)) || buf_addc(b, '"'))
			return -1;
	return buf_add(b, s, len) || buf_addc(b, '"');
}

/* The row in progress as CSV text in w->line. */
static int format_row(struct csv_writer *w)
{
	w->line.len = 0;
	for (size_t i = 0; i < w->ncols; i++) {
		const char *s = w->fields.data + w->starts[i];
		size_t len = strlen(s);
		if (i && buf_addc(&w->line, ','))
			return -1;
		if (needs_quotes(s, len, w->ncols) ? add_quoted(&w->line, s, len)
						   : buf_add(&w->line, s, len))
			return -1;
	}
	return w->crlf ? buf_add(&w->line, "\r\n", 2) : buf_addc(&w->line, '\n');
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int emit(struct csv_writer *w, const char *p, size_t n, struct sp_err *err)
{
	switch (w->mode) {
	case MODE_FILE:
		return outfile_write(&w->af, p, n, err);
	case MODE_STDOUT:
		if (fwrite(p, 1, n, stdout) != n)
			return sp_fail_errno(err, "stdout: write failed");
		return 0;
	default:
		if (w->mode == MODE_STREAM)
			fflush(stdout); /* what was printed first comes first */
		if (write_all(w->fd, p, n))
			return sp_fail_errno(err, "%s: write failed", w->path);
		if (w->fsync_rows && fsync(w->fd))
			return sp_fail_errno(err, "%s: fsync failed", w->path);
		return 0;
	}
}

/* Writes the row in progress; header: it is the header, not a data row. */
static int end_row(struct csv_writer *w, int header, struct sp_err *err)
{
	int rc;
	if (w->nfields != w->ncols)
		rc = sp_fail(err, "%s: row has %zu fields, the header %zu", w->path, w->nfields,
			     w->ncols);
	else if (w->out_of_memory || format_row(w))
		rc = sp_fail(err, "%s: out of memory", w->path);
	else {
		/* A file new or empty before the open: its first row makes it one
		 * to keep, also when killed (kept first: a kill in between leaves
		 * the header, not a row lost). */
		if (!header && w->rows == 0)
			outfile_keep_on_signal(w->path);
		rc = emit(w, w->line.data, w->line.len, err);
	}
	if (rc == 0 && !header)
		w->rows++;
	w->nfields = 0;
	w->fields.len = 0;
	w->out_of_memory = 0;
	return rc;
}

int csv_writer_end_row(struct csv_writer *w, struct sp_err *err)
{
	return end_row(w, 0, err);
}

static int write_header(struct csv_writer *w, const char *const *columns, struct sp_err *err)
{
	for (size_t i = 0; i < w->ncols; i++)
		csv_writer_str(w, columns[i]);
	return end_row(w, 1, err);
}

/* The end of a whole or streamed open: the output could not be opened
 * (failed: w is released), or its header goes out (a failure there drops
 * what was made). */
static int finish_open(struct csv_writer *w, int failed, const char *const *columns,
		       struct sp_err *err)
{
	if (failed) {
		release(w);
		return -1;
	}
	if (write_header(w, columns, err)) {
		csv_writer_abort(w);
		return -1;
	}
	return 0;
}

int csv_writer_open(struct csv_writer *w, const char *path, const char *const *columns, size_t ncols,
	      struct sp_err *err)
{
	int to_stdout = !strcmp(path, "-");
	if (start(w, path, ncols, to_stdout ? MODE_STDOUT : MODE_FILE, err))
		return -1;
	return finish_open(w, !to_stdout && outfile_open(&w->af, path, err), columns, err);
}

int csv_writer_open_stream(struct csv_writer *w, const char *path, const char *const *columns,
			   size_t ncols, struct sp_err *err)
{
	if (start(w, path, ncols, MODE_STREAM, err))
		return -1;
	w->fd = outfile_is_stdout(path)
			? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0)
			: open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (w->fd < 0)
		sp_fail_errno(err, "%s: cannot open for writing", w->path);
	return finish_open(w, w->fd < 0, columns, err);
}

/* What the append scan needs to see each record of the existing file. */
struct existing {
	struct csv_writer *w;
	const char *const *columns;
	csv_reader_row_fn fn;
	void *ctx;
};

static int join(struct buf *b, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((i && buf_addc(b, ',')) || buf_add(b, names[i], strlen(names[i])))
			return -1;
	return buf_addc(b, '\0');
}

static int check_header(struct existing *x, const struct csv_reader_row *row, struct sp_err *err)
{
	struct csv_writer *w = x->w;
	int same = row->nfields == w->ncols;
	for (size_t i = 0; same && i < w->ncols; i++)
		same = !strcmp(row->fields[i], x->columns[i]);
	if (same)
		return 0;
	struct buf have = {0}, want = {0};
	char q1[200], q2[200];
	if (join(&have, row->fields, row->nfields) || join(&want, x->columns, w->ncols))
		sp_fail(err, "%s: out of memory", w->path);
	else
		sp_fail(err, "%s: header has columns %s but this run writes %s", w->path,
			sp_clip(q1, sizeof q1, have.data), sp_clip(q2, sizeof q2, want.data));
	buf_free(&have);
	buf_free(&want);
	return -1;
}

static int on_existing(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	struct existing *x = ctx;
	if (row->index == 0)
		return check_header(x, row, err);
	return x->fn ? x->fn(x->ctx, row, err) : 0;
}

/* Rows appended follow the line end of the file's last record (end: where
 * it ends): CRLF as Windows tools and Python's csv module write, else LF. */
static int follow_line_end(struct csv_writer *w, off_t end, struct sp_err *err)
{
	char last[2];
	if (end < 2)
		return 0;
	if (pread(w->fd, last, sizeof last, end - 2) != (ssize_t)sizeof last)
		return sp_fail_errno(err, "%s: read failed", w->path);
	w->crlf = last[0] == '\r' && last[1] == '\n';
	return 0;
}

/* Reads what the file holds, cuts off an unfinished last row, and writes
 * the header if there is none. */
static int prepare_append(struct csv_writer *w, const char *const *columns, csv_reader_row_fn fn, void *ctx,
			  struct sp_err *err)
{
	struct existing x = {.w = w, .columns = columns, .fn = fn, .ctx = ctx};
	struct csv_reader_result res;
	if (csv_reader_scan_fd(w->fd, w->path, CSVR_PARTIAL_TAIL, on_existing, &x, &res, err))
		return -1;
	struct stat st;
	if (fstat(w->fd, &st))
		return sp_fail_errno(err, "%s: cannot stat", w->path);
	off_t keep = res.records ? (off_t)res.complete_bytes : 0;
	if (st.st_size > keep && ftruncate(w->fd, keep))
		return sp_fail_errno(err, "%s: cannot cut off the unfinished last row", w->path);
	w->was_empty = !w->created && st.st_size == 0;
	if (w->was_empty) /* as it was until its first row, also when killed */
		outfile_empty_on_signal(w->path, w->fd);
	return res.records ? follow_line_end(w, keep, err) : write_header(w, columns, err);
}

int csv_writer_open_append_scan(struct csv_writer *w, const char *path, const char *const *columns,
			  size_t ncols, csv_reader_row_fn fn, void *ctx, struct sp_err *err)
{
	if (!strcmp(path, "-"))
		return sp_fail(err, "-: appending needs a file, not standard output");
	if (start(w, path, ncols, MODE_APPEND, err))
		return -1;
	/* Exclusively first, to know whether this open made the file. A file
	 * locked here may have been removed by the job that made it (its
	 * csv_writer_abort) between our open and our lock: then the lock is on
	 * a file with no name, and the open is tried again. */
	for (int tries = 0;; tries++) {
		w->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
		w->created = w->fd >= 0;
		if (w->fd < 0 && errno == EEXIST)
			w->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
		if (w->fd < 0) {
			sp_fail_errno(err, "%s: cannot open for appending", path);
			release(w);
			return -1;
		}
		/* Filesystems without flock answer other errors; appending
		 * unlocked there is still better than refusing, but a file not
		 * locked is never removed (another job may have appended). */
		if (flock(w->fd, LOCK_EX | LOCK_NB)) {
			if (errno == EWOULDBLOCK) {
				sp_fail(err, "%s: another process is appending to this file", path);
				w->created = 0; /* made here, but the other's now: not removed */
				csv_writer_abort(w);
				return -1;
			}
			w->created = 0;
		}
		struct stat held, named;
		if (fstat(w->fd, &held) == 0 && stat(path, &named) == 0 && held.st_nlink > 0 &&
		    held.st_dev == named.st_dev && held.st_ino == named.st_ino)
			break;
		w->created = 0;
		if (tries == 8) {
			sp_fail(err, "%s: removed or replaced each time it was opened", path);
			csv_writer_abort(w);
			return -1;
		}
		close(w->fd);
	}
	if (w->created) /* nothing to keep until its first row */
		outfile_remove_on_signal(w->path);
	if (prepare_append(w, columns, fn, ctx, err)) {
		csv_writer_abort(w);
		return -1;
	}
	return 0;
}

int csv_writer_open_append(struct csv_writer *w, const char *path, const char *const *columns, size_t ncols,
		     struct sp_err *err)
{
	return csv_writer_open_append_scan(w, path, columns, ncols, NULL, NULL, err);
}

void csv_writer_set_fsync(struct csv_writer *w, int on)
{
	w->fsync_rows = on;
}

/* The descriptor of an appended or streamed file closed, the file kept on
 * a signal first: the handler cuts a file that was empty back to empty
 * through it (outfile_empty_on_signal), and once closed its number may be
 * another file's. */
static int close_fd(struct csv_writer *w)
{
	outfile_keep_on_signal(w->path);
	int rc = close(w->fd);
	w->fd = -1;
	return rc;
}

int csv_writer_commit(struct csv_writer *w, struct sp_err *err)
{
	int rc = 0;
	if (w->nfields) {
		rc = sp_fail(err, "%s: a row was started but not ended", w->path);
		csv_writer_abort(w);
		return rc;
	}
	switch (w->mode) {
	case MODE_FILE:
		rc = outfile_commit(&w->af, err);
		break;
	case MODE_STDOUT:
		if (fflush(stdout) || ferror(stdout))
			rc = sp_fail_errno(err, "stdout: write failed");
		break;
	default:
		if (w->fsync_rows && fsync(w->fd))
			rc = sp_fail_errno(err, "%s: fsync failed", w->path);
		if (close_fd(w) && !rc)
			rc = sp_fail_errno(err, "%s: close failed", w->path);
	}
	release(w);
	return rc;
}

int csv_writer_is_new(const struct csv_writer *w)
{
	return w->mode == MODE_APPEND && w->created && w->rows == 0;
}

int csv_writer_is_unstarted(const struct csv_writer *w)
{
	return w->mode == MODE_APPEND && (w->created || w->was_empty) && w->rows == 0;
}

void csv_writer_keep(struct csv_writer *w)
{
	outfile_keep_on_signal(w->path);
	w->created = 0;
	w->was_empty = 0;
}

/* A file that was empty and got no row, back to empty. */
static void undo_header(struct csv_writer *w)
{
	if (w->mode != MODE_APPEND || !w->was_empty || w->rows || w->fd < 0)
		return;
	int rc = ftruncate(w->fd, 0);
	(void)rc; /* one that cannot be cut keeps the header, as after a kill */
}

void csv_writer_abort(struct csv_writer *w)
{
	/* Unlinked or cut while still locked, so no other job has appended to
	 * it. */
	if (csv_writer_is_new(w) && w->fd >= 0)
		unlink(w->path);
	else
		undo_header(w);
	if (w->mode == MODE_FILE)
		outfile_abort(&w->af);
	else if ((w->mode == MODE_APPEND || w->mode == MODE_STREAM) && w->fd >= 0)
		close_fd(w);
	w->fd = -1;
	release(w);
}
