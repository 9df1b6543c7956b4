#include "partition/onnx_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/infile.h"

/* What a length-delimited field holds, for the fields this pass looks into. */
enum kind { K_OTHER, K_MODEL, K_GRAPH, K_NODE, K_ATTR, K_TENSOR, K_SPARSE, K_FUNCTION,
	    K_VALUE_INFO, K_TYPE, K_TYPE_ELEM /* Sequence, Optional */, K_TYPE_MAP,
	    K_DATA /* tensor data: dropped when large */, K_DROP /* always dropped */ };

/* The field numbers of onnx.proto that lead to tensors, and to the messages
 * that can nest without end (graphs in attributes, TypeProto in itself):
 * this pass walks those too, so that its depth limit holds before
 * protobuf-c, which recurses once per level, unpacks them. */
static const struct {
	enum kind parent;
	uint32_t field;
	enum kind kind;
} fields[] = {
	{K_MODEL, 7, K_GRAPH}, {K_MODEL, 20, K_DROP}, {K_MODEL, 25, K_FUNCTION},
	{K_FUNCTION, 7, K_NODE},
	{K_GRAPH, 1, K_NODE}, {K_GRAPH, 5, K_TENSOR}, {K_GRAPH, 15, K_SPARSE},
	{K_NODE, 5, K_ATTR},
	{K_ATTR, 5, K_TENSOR}, {K_ATTR, 6, K_GRAPH}, {K_ATTR, 10, K_TENSOR}, {K_ATTR, 11, K_GRAPH},
	{K_ATTR, 22, K_SPARSE}, {K_ATTR, 23, K_SPARSE},
	{K_SPARSE, 1, K_TENSOR}, {K_SPARSE, 2, K_TENSOR},
	{K_GRAPH, 11, K_VALUE_INFO}, {K_GRAPH, 12, K_VALUE_INFO}, {K_GRAPH, 13, K_VALUE_INFO},
	{K_VALUE_INFO, 2, K_TYPE}, {K_ATTR, 14, K_TYPE}, {K_ATTR, 15, K_TYPE},
	/* sequence_type, optional_type, map_type; their elem_type, value_type */
	{K_TYPE, 4, K_TYPE_ELEM}, {K_TYPE, 9, K_TYPE_ELEM}, {K_TYPE, 5, K_TYPE_MAP},
	{K_TYPE_ELEM, 1, K_TYPE}, {K_TYPE_MAP, 2, K_TYPE},
	/* float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data */
	{K_TENSOR, 4, K_DATA}, {K_TENSOR, 5, K_DATA}, {K_TENSOR, 6, K_DATA}, {K_TENSOR, 7, K_DATA},
	{K_TENSOR, 9, K_DATA}, {K_TENSOR, 10, K_DATA}, {K_TENSOR, 11, K_DATA},
};

static enum kind field_kind(enum kind parent, uint32_t field)
{
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (fields[i].parent == parent && fields[i].field == field)
			return fields[i].kind;
	return K_OTHER;
}

/* The bytes being read, through a window: all of them for memory; for a
 * file, WINDOW bytes read at a time, so that dropped fields past the
 * window are never read at all (the next read seeks over them). */
enum { WINDOW = 1 << 20 };

struct in {
	FILE *fp;
	const unsigned char *win; /* bytes from win_start on, win_len of them */
	unsigned char *buf;       /* the file's window */
	uint64_t pos, size, win_start, win_len, fpos;
	const char *name;
	struct onnx_wire_stats *st;
	struct sp_err *err;
};

static int bad(const struct in *in, uint64_t at)
{
	return sp_fail(in->err, "%s: not an ONNX model: truncated or another format (at byte %llu)",
		       in->name, (unsigned long long)at);
}

/* Make pos fall inside the window; -1 at the end or on a read error. */
static int refill(struct in *in)
{
	if (in->pos - in->win_start < in->win_len)
		return 0;
	if (!in->fp || in->pos >= in->size)
		return -1;
	if (in->fpos != in->pos && fseeko(in->fp, (off_t)in->pos, SEEK_SET))
		return -1;
	size_t want = in->size - in->pos < WINDOW ? (size_t)(in->size - in->pos) : WINDOW;
	size_t got = fread(in->buf, 1, want, in->fp);
	in->win = in->buf;
	in->win_start = in->pos;
	in->win_len = got;
	in->fpos = in->pos + got;
	return got ? 0 : -1;
}

static int get_bytes(struct in *in, void *dst, uint64_t n)
{
	if (n > in->size - in->pos)
		return -1;
	unsigned char *d = dst;
	while (n) {
		if (refill(in))
			return -1;
		uint64_t off = in->pos - in->win_start, k = in->win_len - off;
		k = k < n ? k : n;
		memcpy(d, in->win + off, k);
		d += k;
		in->pos += k;
		n -= k;
	}
	return 0;
}

static int skip_bytes(struct in *in, uint64_t n)
{
	if (n > in->size - in->pos)
		return -1;
	in->pos += n; /* the next read seeks when this leaves the window */
	return 0;
}

static int get_varint(struct in *in, uint64_t end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (in->pos >= end || refill(in))
			return -1;
		unsigned char c = in->win[in->pos++ - in->win_start];
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

static int put_varint(struct buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return buf_add(b, tmp, n);
}

static int oom(const struct in *in)
{
	return sp_fail(in->err, "%s: out of memory", in->name);
}

/* The bytes of a sub-message's length as this pass writes it: 5, the most
 * protobuf-c reads for a length, enough for 32 GiB. */
enum { LEN_BYTES = 5 };

/* Copy the fields of a message of this kind, from in->pos up to end, into out. */
static int slim(struct in *in, enum kind kind, uint64_t end, struct buf *out, int depth)
{
	if (depth > ONNX_WIRE_MAX_DEPTH)
		return sp_fail(in->err, "%s: messages nested deeper than %d (at byte %llu)",
			       in->name, ONNX_WIRE_MAX_DEPTH, (unsigned long long)in->pos);
	while (in->pos < end) {
		uint64_t at = in->pos, key, v, len;
		if (get_varint(in, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
			return bad(in, at);
		unsigned char fixed[8];
		switch (key & 7) {
		case 0:
			if (get_varint(in, end, &v))
				return bad(in, at);
			if (put_varint(out, key) || put_varint(out, v))
				return oom(in);
			continue;
		case 1:
		case 5: {
			size_t n = (key & 7) == 1 ? 8 : 4;
			if (end - in->pos < n || get_bytes(in, fixed, n))
				return bad(in, at);
			if (put_varint(out, key) || buf_add(out, fixed, n))
				return oom(in);
			continue;
		}
		case 2: break;
		default: return bad(in, at); /* groups are not in onnx.proto */
		}
		if (get_varint(in, end, &len) || len > end - in->pos)
			return bad(in, at);
		enum kind sub = field_kind(kind, (uint32_t)(key >> 3));
		if (sub == K_DROP || (sub == K_DATA && len > ONNX_WIRE_KEEP_BYTES)) {
			if (skip_bytes(in, len))
				return bad(in, at);
			in->st->dropped_bytes += len;
			in->st->dropped_fields++;
			continue;
		}
		if (put_varint(out, key))
			return oom(in);
		if (sub == K_OTHER || sub == K_DATA) {
			if (put_varint(out, len) || buf_reserve(out, len))
				return oom(in);
			if (get_bytes(in, out->data + out->len, len))
				return bad(in, at);
			out->len += len;
			continue;
		}
		/* A message that may hold tensors: written in place, its slimmed length
		 * patched in after as a varint padded to LEN_BYTES, which protobuf
		 * decoders read as any other (it saves copying every level). */
		size_t at_len = out->len;
		if (buf_reserve(out, LEN_BYTES))
			return oom(in);
		out->len += LEN_BYTES;
		if (slim(in, sub, in->pos + len, out, depth + 1))
			return -1;
		uint64_t inner = out->len - at_len - LEN_BYTES;
		unsigned char *p = (unsigned char *)out->data + at_len;
		for (int i = 0; i < LEN_BYTES; i++, inner >>= 7)
			p[i] = (unsigned char)((inner & 0x7f) | (i + 1 < LEN_BYTES ? 0x80 : 0));
	}
	return in->pos == end ? 0 : bad(in, in->pos);
}

int onnx_wire_slim_mem(const void *data, size_t size, const char *name, struct buf *out,
		       struct onnx_wire_stats *st, struct sp_err *err)
{
	struct in in = {.win = data, .size = size, .win_len = size, .name = name, .st = st,
			.err = err};
	memset(st, 0, sizeof *st);
	return slim(&in, K_MODEL, size, out, 0);
}

int onnx_wire_slim_file(const char *path, struct buf *out, struct onnx_wire_stats *st,
			struct sp_err *err)
{
	struct in in = {.name = path, .st = st, .err = err};
	memset(st, 0, sizeof *st);
	if (infile_open(path, &in.fp, &in.size, err))
		return -1;
	setvbuf(in.fp, NULL, _IONBF, 0); /* the window is the buffer */
	in.buf = malloc(WINDOW);
	int rc = in.buf ? slim(&in, K_MODEL, in.size, out, 0) : sp_fail(err, "%s: out of memory", path);
	if (ferror(in.fp))
		rc = sp_fail_errno(err, "%s: read error", path);
	free(in.buf);
	fclose(in.fp);
	return rc;
}
