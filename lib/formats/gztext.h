/* Text inside a gzip file (OGB's .csv.gz), decompressed with zlib in large
 * chunks. A file that is not gzip reads as it is (zlib's transparent mode),
 * so an unpacked .csv renamed .csv.gz still loads.
 *
 * Two ways in: the whole text at once (for a parser that wants one buffer,
 * such as edgelist_parse), or line by line through a buffer of a few chunks
 * that never holds the whole file (ogbn-products' node features are 2.4 GB
 * of text). Lines come out numbered through a struct text_scan, so
 * text_scan_fail and text_field_* write "PATH:LINE: ..." as for any text
 * file. */
#ifndef SPKIT_GZTEXT_H
#define SPKIT_GZTEXT_H

#include <stddef.h>

#include "core/err.h"
#include "core/textscan.h"

/* The whole decompressed text, malloc'd (NUL-terminated, *len excludes
 * the NUL). */
int gztext_read(const char *path, char **text, size_t *len, struct sp_err *err);

struct gztext {
	void *gz;        /* gzFile */
	char *buf;       /* text not yet handed out starts at scan.p */
	size_t cap, len; /* buf's size and the bytes in it */
	int eof;         /* the file is spent: what is in buf is all there is */
	struct text_scan scan; /* over the whole lines in buf; scan.line counts from the start */
	struct text_guard guard; /* no NUL bytes, no line past TEXT_LINE_MAX */
};

int gztext_open(struct gztext *t, const char *path, struct sp_err *err);
/* The next line without its "\n" or "\r\n": 1, or 0 at the end of the
 * file, or -1 when the file cannot be read (a truncated or corrupt gzip
 * stream). t->scan.line is the line's number. */
int gztext_line(struct gztext *t, struct text_span *line, struct sp_err *err);
void gztext_close(struct gztext *t);

#endif
