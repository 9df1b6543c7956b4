/* ZIP writing. Each local header carries a ZIP64 extra field (as NumPy's
 * savez does with force_zip64), so its sizes can be patched in afterwards
 * whatever they turn out to be; the central directory and end records use
 * ZIP64 only where a value does not fit. Timestamps are fixed at
 * 1980-01-01 so the same arrays give the same bytes. */
#include "formats/zipfile.h"

#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"

enum {
	LOCAL_SIZE = 30,
	LOCAL_EXTRA = 20, /* ZIP64 extra: id, length, uncompressed and compressed size */
	CENTRAL_SIZE = 46,
	EOCD64_SIZE = 56,
	LOCATOR_SIZE = 20,
	EOCD_SIZE = 22,
	VERSION = 45,          /* 4.5: ZIP64 */
	MADE_BY = 3 << 8 | 45, /* Unix, 4.5 */
	DOS_DATE = 1 << 5 | 1, /* 1980-01-01, time 00:00 */
	OUT_BUF = 1 << 18,
};
#define FILE_MODE (0100644u << 16) /* regular file, rw-r--r-- */
#define CHUNK_MAX (1u << 30)

static int emit(struct zip_writer *w, const void *buf, size_t n, struct sp_err *err)
{
	if (outfile_write(&w->out, buf, n, err))
		return -1;
	w->offset += n;
	return 0;
}

int zip_writer_open(struct zip_writer *w, const char *path, struct sp_err *err)
{
	memset(w, 0, sizeof *w);
	w->limit32 = 0xffffffff;
	w->limit16 = 0xffff;
	if (outfile_is_stdout(path))
		return sp_fail(err, "-: an .npz is written with seeks, so not to standard output "
				    "(give a file name)");
	if (outfile_open(&w->out, path, err))
		return -1;
	/* Each member's sizes are written back into its header once known. */
	if (w->out.direct && fseeko(w->out.fp, 0, SEEK_CUR) != 0) {
		outfile_abort(&w->out);
		return sp_fail(err, "%s: an .npz is written with seeks, so not into a pipe or FIFO",
			       path);
	}
	return 0;
}

static int add_member(struct zip_writer *w, const char *name, int deflate, struct sp_err *err)
{
	if (w->open)
		return sp_fail(err, "%s: member '%s' begun before the last one ended", w->out.path,
			       name);
	size_t nlen = strlen(name);
	if (nlen == 0 || nlen > 0xffff)
		return sp_fail(err, "%s: member name of %zu bytes", w->out.path, nlen);
	for (size_t i = 0; i < w->count; i++)
		if (strcmp(w->members[i].name, name) == 0)
			return sp_fail(err, "%s: member '%s' added twice", w->out.path, name);
	if (w->count == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 8;
		struct zip_written *grown = realloc(w->members, cap * sizeof *grown);
		if (!grown)
			return sp_fail(err, "%s: out of memory", w->out.path);
		w->members = grown;
		w->cap = cap;
	}
	struct zip_written *m = &w->members[w->count];
	memset(m, 0, sizeof *m);
	m->name = strdup(name);
	if (!m->name)
		return sp_fail(err, "%s: out of memory", w->out.path);
	m->offset = w->offset;
	m->method = deflate ? ZIP_DEFLATED : ZIP_STORED;
	w->count++;
	w->open = 1;
	return 0;
}

int zip_writer_begin(struct zip_writer *w, const char *name, int deflate, struct sp_err *err)
{
	if (add_member(w, name, deflate, err))
		return -1;
	struct zip_written *m = &w->members[w->count - 1];
	size_t nlen = strlen(name);
	unsigned char h[LOCAL_SIZE], x[LOCAL_EXTRA], *p = h;
	p = le_store(p, 0x04034b50, 4);
	p = le_store(p, VERSION, 2);
	p = le_store(p, 0, 2); /* flags */
	p = le_store(p, m->method, 2);
	p = le_store(p, 0, 2); /* time */
	p = le_store(p, DOS_DATE, 2);
	p = le_store(p, 0, 4);          /* CRC-32, patched by zip_writer_end */
	p = le_store(p, 0xffffffff, 4); /* sizes: in the ZIP64 extra */
	p = le_store(p, 0xffffffff, 4);
	p = le_store(p, nlen, 2);
	le_store(p, LOCAL_EXTRA, 2);
	memset(x, 0, sizeof x);
	le_store(le_store(x, 1, 2), 16, 2);
	if (emit(w, h, sizeof h, err) || emit(w, name, nlen, err) || emit(w, x, sizeof x, err))
		return -1;
	if (deflate) {
		w->buf = malloc(OUT_BUF);
		/* Raw deflate (ZIP has no zlib wrapper), zlib's default level
		 * like np.savez_compressed. */
		if (!w->buf || deflateInit2(&w->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
					    Z_DEFAULT_STRATEGY) != Z_OK) {
			free(w->buf);
			w->buf = NULL;
			return sp_fail(err, "%s: out of memory", w->out.path);
		}
		w->deflating = 1;
	}
	return 0;
}

/* Deflate until the input is used up (or, with Z_FINISH, the stream has
 * ended), writing out what it produces. */
static int run_deflate(struct zip_writer *w, int flush, struct sp_err *err)
{
	struct zip_written *m = &w->members[w->count - 1];
	int ret;
	do {
		w->zs.next_out = w->buf;
		w->zs.avail_out = OUT_BUF;
		ret = deflate(&w->zs, flush);
		if (ret == Z_STREAM_ERROR)
			return sp_fail(err, "%s: member '%s': deflate failed", w->out.path,
				       m->name);
		size_t got = OUT_BUF - w->zs.avail_out;
		if (emit(w, w->buf, got, err))
			return -1;
		m->csize += got;
	} while (flush == Z_FINISH ? ret != Z_STREAM_END : w->zs.avail_out == 0);
	return 0;
}

int zip_writer_write(struct zip_writer *w, const void *buf, size_t n, struct sp_err *err)
{
	struct zip_written *m = &w->members[w->count - 1];
	m->crc = (uint32_t)crc32_z(m->crc, buf, n);
	m->usize += n;
	if (!w->deflating) {
		m->csize += n;
		return emit(w, buf, n, err);
	}
	const unsigned char *p = buf;
	while (n > 0) {
		uInt chunk = n < CHUNK_MAX ? (uInt)n : CHUNK_MAX;
		w->zs.next_in = (unsigned char *)p;
		w->zs.avail_in = chunk;
		if (run_deflate(w, Z_NO_FLUSH, err))
			return -1;
		p += chunk;
		n -= chunk;
	}
	return 0;
}

static void end_deflate(struct zip_writer *w)
{
	if (w->deflating)
		deflateEnd(&w->zs);
	free(w->buf);
	w->buf = NULL;
	w->deflating = 0;
}

int zip_writer_end(struct zip_writer *w, struct sp_err *err)
{
	struct zip_written *m = &w->members[w->count - 1];
	int rc = w->deflating ? run_deflate(w, Z_FINISH, err) : 0;
	end_deflate(w);
	w->open = 0;
	if (rc)
		return -1;
	unsigned char crc[4], sizes[16];
	le_store(crc, m->crc, 4);
	le_store(le_store(sizes, m->usize, 8), m->csize, 8);
	FILE *fp = w->out.fp;
	off_t extra = (off_t)(m->offset + LOCAL_SIZE + strlen(m->name) + 4);
	if (fseeko(fp, (off_t)m->offset + 14, SEEK_SET) || fwrite(crc, 1, 4, fp) != 4 ||
	    fseeko(fp, extra, SEEK_SET) || fwrite(sizes, 1, 16, fp) != 16 ||
	    fseeko(fp, 0, SEEK_END))
		return sp_fail_errno(err, "%s: write failed", w->out.path);
	return 0;
}

static int write_central(struct zip_writer *w, const struct zip_written *m, struct sp_err *err)
{
	unsigned char h[CENTRAL_SIZE], x[28], *p = h, *q = x + 4;
	int big_u = m->usize >= w->limit32, big_c = m->csize >= w->limit32;
	int big_o = m->offset >= w->limit32;
	if (big_u)
		q = le_store(q, m->usize, 8);
	if (big_c)
		q = le_store(q, m->csize, 8);
	if (big_o)
		q = le_store(q, m->offset, 8);
	size_t used = (size_t)(q - x) - 4, xlen = used ? 4 + used : 0;
	le_store(le_store(x, 1, 2), used, 2);
	size_t nlen = strlen(m->name);
	p = le_store(p, 0x02014b50, 4);
	p = le_store(p, MADE_BY, 2);
	p = le_store(p, VERSION, 2);
	p = le_store(p, 0, 2);
	p = le_store(p, m->method, 2);
	p = le_store(p, 0, 2);
	p = le_store(p, DOS_DATE, 2);
	p = le_store(p, m->crc, 4);
	p = le_store(p, big_c ? 0xffffffff : m->csize, 4);
	p = le_store(p, big_u ? 0xffffffff : m->usize, 4);
	p = le_store(p, nlen, 2);
	p = le_store(p, xlen, 2);
	p = le_store(p, 0, 2); /* comment */
	p = le_store(p, 0, 2); /* disk */
	p = le_store(p, 0, 2); /* internal attributes */
	p = le_store(p, FILE_MODE, 4);
	le_store(p, big_o ? 0xffffffff : m->offset, 4);
	return emit(w, h, sizeof h, err) || emit(w, m->name, nlen, err) || emit(w, x, xlen, err);
}

static int write_end_records(struct zip_writer *w, uint64_t cd_start, struct sp_err *err)
{
	uint64_t cd_size = w->offset - cd_start, count = w->count;
	int big_n = count >= w->limit16, big_s = cd_size >= w->limit32,
	    big_o = cd_start >= w->limit32;
	if (big_n || big_s || big_o) {
		unsigned char r[EOCD64_SIZE + LOCATOR_SIZE], *p = r;
		uint64_t at = w->offset;
		p = le_store(p, 0x06064b50, 4);
		p = le_store(p, EOCD64_SIZE - 12, 8); /* size of the rest of the record */
		p = le_store(p, MADE_BY, 2);
		p = le_store(p, VERSION, 2);
		p = le_store(p, 0, 8); /* this disk, the directory's disk */
		p = le_store(p, count, 8);
		p = le_store(p, count, 8);
		p = le_store(p, cd_size, 8);
		p = le_store(p, cd_start, 8);
		p = le_store(p, 0x07064b50, 4);
		p = le_store(p, 0, 4);
		p = le_store(p, at, 8);
		le_store(p, 1, 4); /* disks */
		if (emit(w, r, sizeof r, err))
			return -1;
	}
	unsigned char e[EOCD_SIZE], *p = e;
	p = le_store(p, 0x06054b50, 4);
	p = le_store(p, 0, 4); /* disks */
	p = le_store(p, big_n ? 0xffff : count, 2);
	p = le_store(p, big_n ? 0xffff : count, 2);
	p = le_store(p, big_s ? 0xffffffff : cd_size, 4);
	p = le_store(p, big_o ? 0xffffffff : cd_start, 4);
	le_store(p, 0, 2); /* comment */
	return emit(w, e, sizeof e, err);
}

static void free_members(struct zip_writer *w)
{
	for (size_t i = 0; i < w->count; i++)
		free(w->members[i].name);
	free(w->members);
	w->members = NULL;
	w->count = w->cap = 0;
}

int zip_writer_commit(struct zip_writer *w, struct sp_err *err)
{
	if (w->open) {
		sp_fail(err, "%s: member '%s' was not ended", w->out.path,
			w->members[w->count - 1].name);
		zip_writer_abort(w);
		return -1;
	}
	uint64_t cd_start = w->offset;
	for (size_t i = 0; i < w->count; i++) {
		if (write_central(w, &w->members[i], err)) {
			zip_writer_abort(w);
			return -1;
		}
	}
	if (write_end_records(w, cd_start, err)) {
		zip_writer_abort(w);
		return -1;
	}
	free_members(w);
	return outfile_commit(&w->out, err);
}

void zip_writer_abort(struct zip_writer *w)
{
	end_deflate(w);
	free_members(w);
	outfile_abort(&w->out);
}
