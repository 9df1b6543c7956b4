/* ZIP reading, part two: one member's bytes, straight into the caller's
 * buffer. Stored data is one fread from the data offset; deflated data is
 * inflated from a small input buffer directly into the destination, so a
 * 1 GB member costs one pass and no second copy. */
#include "formats/zipfile.h"

#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"

enum {
	LOCAL_SIZE = 30,   /* local file header, without name and extra */
	IN_BUF = 1 << 18,  /* compressed bytes read per fread */
	MAX_RATIO = 1032,  /* deflate's largest expansion: 258 bytes per 2 bits */
};
#define CHUNK_MAX (1u << 30) /* zlib counts in 32 bits */

static int check_entry(const struct zip_member *m, struct sp_err *err)
{
	const struct zip_entry *e = m->e;
	if (e->flags & 1)
		return sp_fail(err, "%s: encrypted members are not supported", m->label);
	if (e->method == ZIP_STORED && e->csize != e->usize)
		return sp_fail(err, "%s: stored member is %llu bytes but the directory says %llu "
			       "uncompressed", m->label, (unsigned long long)e->csize,
			       (unsigned long long)e->usize);
	if (e->method == ZIP_DEFLATED && e->usize > 258 && (e->usize - 258) / MAX_RATIO > e->csize)
		return sp_fail(err, "%s: directory claims %llu bytes from %llu compressed, "
			       "more than deflate can produce", m->label,
			       (unsigned long long)e->usize, (unsigned long long)e->csize);
	if (e->method != ZIP_STORED && e->method != ZIP_DEFLATED)
		return sp_fail(err, "%s: unsupported compression method %u", m->label, e->method);
	return 0;
}

/* The local header repeats the name and has its own extra field; the data
 * follows them. */
static int locate_data(struct zip_member *m, struct sp_err *err)
{
	struct zip_reader *z = m->z;
	const struct zip_entry *e = m->e;
	unsigned char h[LOCAL_SIZE];
	if (e->offset > z->cd_offset || z->cd_offset - e->offset < LOCAL_SIZE)
		return sp_fail(err, "%s: local header at byte %llu is past the central directory",
			       m->label, (unsigned long long)e->offset);
	if (zip_read_at(z, e->offset, h, sizeof h, err))
		return -1;
	if (memcmp(h, "PK\3\4", 4) != 0)
		return sp_fail(err, "%s: no local header at byte %llu", m->label,
			       (unsigned long long)e->offset);
	size_t nlen = le16(h + 26), xlen = le16(h + 28);
	char *name = nlen == strlen(e->name) ? malloc(nlen + 1) : NULL;
	int same = name && fread(name, 1, nlen, z->fp) == nlen && memcmp(name, e->name, nlen) == 0;
	free(name);
	if (!same)
		return sp_fail(err, "%s: local header at byte %llu names another member", m->label,
			       (unsigned long long)e->offset);
	m->data_offset = e->offset + LOCAL_SIZE + nlen + xlen;
	if (m->data_offset > z->cd_offset || e->csize > z->cd_offset - m->data_offset)
		return sp_fail(err, "%s: data (%llu bytes at byte %llu) runs into the central "
			       "directory at byte %llu (truncated?)", m->label,
			       (unsigned long long)e->csize, (unsigned long long)m->data_offset,
			       (unsigned long long)z->cd_offset);
	if (fseeko(z->fp, (off_t)m->data_offset, SEEK_SET) != 0)
		return sp_fail_errno(err, "%s: cannot seek", m->label);
	return 0;
}

int zip_member_open(struct zip_member *m, struct zip_reader *z, const struct zip_entry *e,
		    const char *label, struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	m->z = z;
	m->e = e;
	m->label = label;
	if (check_entry(m, err) || locate_data(m, err))
		return -1;
	m->in_left = e->csize;
	if (e->method == ZIP_DEFLATED) {
		m->in = malloc(IN_BUF);
		/* Raw deflate: ZIP has no zlib header or trailer. */
		if (!m->in || inflateInit2(&m->zs, -15) != Z_OK) {
			free(m->in);
			m->in = NULL;
			return sp_fail(err, "%s: out of memory", label);
		}
		m->inflating = 1;
	}
	return 0;
}

static int read_fully(struct zip_member *m, void *buf, size_t n, struct sp_err *err)
{
	if (fread(buf, 1, n, m->z->fp) == n) {
		m->in_left -= n;
		return 0;
	}
	if (ferror(m->z->fp))
		return sp_fail_errno(err, "%s: read failed", m->label);
	return sp_fail(err, "%s: file ended early (did it change while being read?)", m->label);
}

/* File offset of the last compressed byte inflate took: where it found
 * the stream wrong or ran out. */
static unsigned long long in_position(const struct zip_member *m)
{
	uint64_t taken = m->e->csize - m->in_left - m->zs.avail_in;
	return m->data_offset + (taken ? taken - 1 : 0);
}

/* One call of inflate, first refilling its input if it has none. Returns
 * Z_OK or Z_STREAM_END, or -1 with a message. */
static int inflate_some(struct zip_member *m, struct sp_err *err)
{
	if (m->zs.avail_in == 0 && m->in_left > 0) {
		size_t k = m->in_left < IN_BUF ? (size_t)m->in_left : IN_BUF;
		if (read_fully(m, m->in, k, err))
			return -1;
		m->zs.next_in = m->in;
		m->zs.avail_in = (uInt)k;
	}
	int ret = inflate(&m->zs, Z_NO_FLUSH);
	if (ret == Z_OK || ret == Z_STREAM_END)
		return ret;
	if (ret == Z_MEM_ERROR)
		return sp_fail(err, "%s: out of memory", m->label);
	/* With output room, Z_BUF_ERROR means the input ran out mid-stream. */
	if (ret == Z_BUF_ERROR)
		return sp_fail(err, "%s: deflate stream is truncated (at byte %llu)", m->label,
			       in_position(m));
	return sp_fail(err, "%s: corrupt deflate stream (at byte %llu)", m->label, in_position(m));
}

static int inflate_into(struct zip_member *m, unsigned char *out, size_t n, struct sp_err *err)
{
	size_t done = 0;
	while (done < n) {
		uInt chunk = n - done < CHUNK_MAX ? (uInt)(n - done) : CHUNK_MAX;
		m->zs.next_out = out + done;
		m->zs.avail_out = chunk;
		int ret = inflate_some(m, err);
		if (ret < 0)
			return -1;
		done += chunk - m->zs.avail_out;
		if (ret == Z_STREAM_END && done < n)
			return sp_fail(err, "%s: deflate stream ends after %llu bytes, the "
				       "directory says %llu", m->label,
				       (unsigned long long)(m->out_done + done),
				       (unsigned long long)m->e->usize);
	}
	return 0;
}

int zip_member_read(struct zip_member *m, void *buf, size_t n, struct sp_err *err)
{
	if (n > m->e->usize - m->out_done)
		return sp_fail(err, "%s: member holds %llu bytes, reading %zu at byte %llu",
			       m->label, (unsigned long long)m->e->usize, n,
			       (unsigned long long)m->out_done);
	if (m->inflating ? inflate_into(m, buf, n, err) : read_fully(m, buf, n, err))
		return -1;
	m->crc = (uint32_t)crc32_z(m->crc, buf, n);
	m->out_done += n;
	return 0;
}

int zip_member_finish(struct zip_member *m, struct sp_err *err)
{
	if (m->out_done != m->e->usize)
		return sp_fail(err, "%s: %llu of %llu bytes were read", m->label,
			       (unsigned long long)m->out_done, (unsigned long long)m->e->usize);
	/* The stream must end here: offer inflate one byte of room and see
	 * that it uses none. */
	for (int ret = Z_OK; m->inflating && ret != Z_STREAM_END;) {
		unsigned char spare;
		m->zs.next_out = &spare;
		m->zs.avail_out = 1;
		ret = inflate_some(m, err);
		if (ret < 0)
			return -1;
		if (m->zs.avail_out == 0)
			return sp_fail(err, "%s: deflate stream holds more than the "
				       "directory's %llu bytes", m->label,
				       (unsigned long long)m->e->usize);
	}
	if (m->crc != m->e->crc)
		return sp_fail(err, "%s: CRC-32 mismatch (directory says %08x, data gives %08x)",
			       m->label, (unsigned)m->e->crc, (unsigned)m->crc);
	return 0;
}

void zip_member_close(struct zip_member *m)
{
	if (m->inflating)
		inflateEnd(&m->zs);
	free(m->in);
	m->in = NULL;
	m->inflating = 0;
}
