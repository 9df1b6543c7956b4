#include "formats/gztext.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/infile.h"

/* Bytes a read asks zlib for: large, so the per-call cost vanishes, and
 * small enough that the line buffer stays a few MiB. */
enum { CHUNK = 4 << 20 };
int gztext_open(struct gztext *t, const char *path, struct sp_err *err)
{
	memset(t, 0, sizeof *t);
	/* infile_open_fd says "cannot open: No such file" or "is a directory",
	 * and does not block on a FIFO; zlib would only say that the open
	 * failed. */
	int fd;
	if (infile_open_fd(path, INFILE_STREAM, &fd, NULL, err))
		return -1;
	t->gz = gzdopen(fd, "rb");
	t->buf = malloc(CHUNK);
	if (!t->gz || !t->buf) {
		if (t->gz)
			gzclose(t->gz);
		else
			close(fd);
		free(t->buf);
		memset(t, 0, sizeof *t);
		return sp_fail(err, "%s: out of memory to open", path);
	}
	gzbuffer(t->gz, 1 << 18);
	t->cap = CHUNK;
	text_scan_init(&t->scan, t->buf, 0, path);
	return 0;
}

void gztext_close(struct gztext *t)
{
	if (t->gz)
		gzclose(t->gz);
	free(t->buf);
	memset(t, 0, sizeof *t);
}

static int grow(struct gztext *t, struct sp_err *err)
{
	/* scan points into buf: keep its place across the move. */
	size_t p = (size_t)(t->scan.p - t->buf), end = (size_t)(t->scan.end - t->buf);
	char *bigger = realloc(t->buf, t->cap * 2);
	if (!bigger)
		return sp_fail(err, "%s: out of memory for %zu bytes of text", t->scan.name,
			       t->cap * 2);
	t->scan.p = bigger + p;
	t->scan.end = bigger + end;
	t->buf = bigger;
	t->cap *= 2;
	return 0;
}

/* Append what zlib gives into the free space of buf (at least one byte of
 * it: the caller grows a full buffer); sets eof at the end of the file. */
static int read_more(struct gztext *t, struct sp_err *err)
{
	size_t room = t->cap - t->len;
	int got = gzread(t->gz, t->buf + t->len, (unsigned)(room < CHUNK ? room : CHUNK));
	int code = Z_OK;
	const char *why = got <= 0 ? gzerror(t->gz, &code) : "";
	/* A stream that stops short reads as a short file, and only gzerror's
	 * Z_BUF_ERROR tells the two apart. */
	if (got < 0 || code == Z_BUF_ERROR) {
		/* Where: the line for the line reader, else the text read so far. */
		char where[64];
		if (t->scan.line)
			snprintf(where, sizeof where, "line %lld", (long long)t->scan.line);
		else
			snprintf(where, sizeof where, "%zu bytes", t->len);
		if (code == Z_ERRNO)
			return sp_fail_errno(err, "%s: read failed after %s", t->scan.name, where);
		return sp_fail(err, "%s: corrupt or truncated gzip data after %s: %s", t->scan.name,
			       where, why);
	}
	t->eof = got == 0;
	if (text_guard_check(&t->guard, t->buf + t->len, (size_t)got, t->scan.name, err))
		return -1;
	t->len += (size_t)got;
	return 0;
}

int gztext_read(const char *path, char **text, size_t *len, struct sp_err *err)
{
	struct gztext t;
	*text = NULL;
	*len = 0;
	if (gztext_open(&t, path, err))
		return -1;
	while (!t.eof) {
		/* One byte kept free for the NUL. */
		if ((t.len + 1 >= t.cap && grow(&t, err)) || read_more(&t, err)) {
			gztext_close(&t);
			return -1;
		}
	}
	t.buf[t.len] = '\0';
	*text = t.buf;
	*len = t.len;
	t.buf = NULL;
	gztext_close(&t);
	return 0;
}

/* Move the unfinished line to the front of buf, read behind it, and scan
 * the whole lines now there (every line, once the file is spent). */
static int fill(struct gztext *t, struct sp_err *err)
{
	size_t keep = t->len - (size_t)(t->scan.p - t->buf);
	memmove(t->buf, t->scan.p, keep);
	t->len = keep;
	t->scan.p = t->scan.end = t->buf;
	if (t->len == t->cap && grow(t, err))
		return -1;
	if (read_more(t, err))
		return -1;
	const char *end = t->buf + t->len;
	while (!t->eof && end > t->buf && end[-1] != '\n')
		end--;
	int64_t line = t->scan.line;
	text_scan_init(&t->scan, t->buf, (size_t)(end - t->buf), t->scan.name);
	t->scan.line = line;
	return 0;
}

int gztext_line(struct gztext *t, struct text_span *line, struct sp_err *err)
{
	for (;;) {
		if (text_scan_line(&t->scan, line))
			return 1;
		if (t->eof)
			return 0;
		if (fill(t, err))
			return -1;
	}
}
