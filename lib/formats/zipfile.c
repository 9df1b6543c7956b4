/* ZIP reading, part one: the end records and the central directory. Every
 * offset and length read from the archive is checked against the archive's
 * size before it is used, so a corrupt or hostile file fails with a message
 * instead of reading or allocating past reason. */
#include "formats/zipfile.h"

#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/infile.h"

enum {
	EOCD_SIZE = 22,      /* end of central directory record, without comment */
	LOCATOR_SIZE = 20,   /* ZIP64 end of central directory locator */
	EOCD64_SIZE = 56,    /* ZIP64 end of central directory record */
	CENTRAL_SIZE = 46,   /* central directory header, without name/extra/comment */
	MAX_COMMENT = 65535,
};

int zip_read_at(struct zip_reader *z, uint64_t offset, void *buf, size_t n, struct sp_err *err)
{
	if (fseeko(z->fp, (off_t)offset, SEEK_SET) != 0)
		return sp_fail_errno(err, "%s: cannot seek to byte %llu", z->path,
				     (unsigned long long)offset);
	if (fread(buf, 1, n, z->fp) != n)
		return ferror(z->fp) ? sp_fail_errno(err, "%s: read failed at byte %llu", z->path,
						     (unsigned long long)offset)
				     : sp_fail(err, "%s: file ended early at byte %llu", z->path,
					       (unsigned long long)offset);
	return 0;
}

/* Where the directory is and how many entries it has. */
struct directory {
	uint64_t offset, size, count;
	uint64_t end; /* the directory must end by here (the first end record) */
};

/* The ZIP64 end record, located through the locator just before the EOCD. */
static int read_eocd64(struct zip_reader *z, uint64_t locator_at, struct directory *d,
		       struct sp_err *err)
{
	unsigned char loc[LOCATOR_SIZE], rec[EOCD64_SIZE];
	if (zip_read_at(z, locator_at, loc, sizeof loc, err))
		return -1;
	uint64_t at = le64(loc + 8);
	if (at > locator_at || locator_at - at < EOCD64_SIZE)
		return sp_fail(err, "%s: ZIP64 end record at byte %llu is out of place", z->path,
			       (unsigned long long)at);
	if (zip_read_at(z, at, rec, sizeof rec, err))
		return -1;
	if (memcmp(rec, "PK\6\6", 4) != 0)
		return sp_fail(err, "%s: no ZIP64 end record at byte %llu", z->path,
			       (unsigned long long)at);
	if (le32(rec + 16) != 0 || le32(rec + 20) != 0 || le64(rec + 24) != le64(rec + 32))
		return sp_fail(err, "%s: multi-disk archives are not supported", z->path);
	d->count = le64(rec + 32);
	d->size = le64(rec + 40);
	d->offset = le64(rec + 48);
	d->end = at;
	return 0;
}

/* The end of central directory record is the last thing in the file but
 * for a comment of up to 64 KiB, so search backwards for its signature and
 * take the one whose comment length reaches exactly the end. */
static int find_directory(struct zip_reader *z, struct directory *d, struct sp_err *err)
{
	uint64_t tail = z->size < EOCD_SIZE + MAX_COMMENT ? z->size : EOCD_SIZE + MAX_COMMENT;
	uint64_t base = z->size - tail;
	unsigned char *buf = malloc(tail ? tail : 1);
	if (!buf)
		return sp_fail(err, "%s: out of memory", z->path);
	if (zip_read_at(z, base, buf, tail, err)) {
		free(buf);
		return -1;
	}
	int64_t at = (int64_t)tail - EOCD_SIZE;
	while (at >= 0 && (memcmp(buf + at, "PK\5\6", 4) != 0 ||
			   (uint64_t)at + EOCD_SIZE + le16(buf + at + 20) != tail))
		at--;
	if (at < 0) {
		free(buf);
		return sp_fail(err, "%s: no end-of-central-directory record (not a zip file, or "
			       "truncated)", z->path);
	}
	const unsigned char *r = buf + at;
	uint64_t eocd = base + (uint64_t)at;
	int disks_ok = le16(r + 4) == 0 && le16(r + 6) == 0 && le16(r + 8) == le16(r + 10);
	d->count = le16(r + 10);
	d->size = le32(r + 12);
	d->offset = le32(r + 16);
	d->end = eocd;
	free(buf);
	unsigned char sig[4];
	if (eocd >= LOCATOR_SIZE) {
		if (zip_read_at(z, eocd - LOCATOR_SIZE, sig, sizeof sig, err))
			return -1;
		if (memcmp(sig, "PK\6\7", 4) == 0)
			return read_eocd64(z, eocd - LOCATOR_SIZE, d, err);
	}
	if (!disks_ok)
		return sp_fail(err, "%s: multi-disk archives are not supported", z->path);
	return 0;
}

/* In the ZIP64 extra field, the 64-bit values of exactly those fields that
 * hold 0xFFFFFFFF, in this order. */
static int apply_zip64_extra(struct zip_entry *e, const unsigned char *x, size_t xlen)
{
	uint64_t *fields[] = {&e->usize, &e->csize, &e->offset};
	while (xlen >= 4) {
		size_t id = le16(x), len = le16(x + 2);
		if (len > xlen - 4)
			return -1;
		if (id == 1) {
			size_t used = 0;
			for (int i = 0; i < 3; i++) {
				if (*fields[i] != 0xffffffff)
					continue;
				if (used + 8 > len)
					return -1;
				*fields[i] = le64(x + 4 + used);
				used += 8;
			}
			return 0;
		}
		x += 4 + len;
		xlen -= 4 + len;
	}
	return e->usize == 0xffffffff || e->csize == 0xffffffff || e->offset == 0xffffffff ? -1 : 0;
}

static int parse_directory(struct zip_reader *z, const unsigned char *cd, const struct directory *d,
			   struct sp_err *err)
{
	z->entries = calloc(d->count ? d->count : 1, sizeof *z->entries);
	z->names = malloc(d->size + d->count + 1);
	if (!z->entries || !z->names)
		return sp_fail(err, "%s: out of memory for %llu members", z->path,
			       (unsigned long long)d->count);
	char *name = z->names;
	uint64_t p = 0;
	/* Names seen: NumPy's zipfile reads the last of two members of one
	 * name and a first-match lookup the first, so an archive with both
	 * would mean different arrays to NumPy and to spkit: refused. */
	struct strmap seen = {0};
	int rc = 0;
	for (z->count = 0; z->count < d->count && !rc; z->count++) {
		struct zip_entry *e = &z->entries[z->count];
		const unsigned char *h = cd + p;
		if (d->size - p < CENTRAL_SIZE || memcmp(h, "PK\1\2", 4) != 0)
			goto corrupt;
		size_t nlen = le16(h + 28), xlen = le16(h + 30), clen = le16(h + 32);
		if (d->size - p - CENTRAL_SIZE < nlen + xlen + clen)
			goto corrupt;
		e->flags = le16(h + 8);
		e->method = le16(h + 10);
		e->crc = le32(h + 16);
		e->csize = le32(h + 20);
		e->usize = le32(h + 24);
		e->offset = le32(h + 42);
		e->name = name;
		memcpy(name, h + CENTRAL_SIZE, nlen);
		name[nlen] = 0;
		name += nlen + 1;
		int added;
		char shown[128];
		if (apply_zip64_extra(e, h + CENTRAL_SIZE + nlen, xlen))
			rc = sp_fail(err, "%s: member '%s': bad ZIP64 extra field (at byte %llu)",
				     z->path, sp_clip(shown, sizeof shown, e->name),
				     (unsigned long long)(d->offset + p));
		else if (!strmap_insert(&seen, e->name, nlen, &added))
			rc = sp_fail(err, "%s: out of memory", z->path);
		else if (!added)
			rc = sp_fail(err, "%s: two members named '%s' (NumPy would read the last)",
				     z->path, sp_clip(shown, sizeof shown, e->name));
		p += CENTRAL_SIZE + nlen + xlen + clen;
	}
	strmap_free(&seen);
	return rc;
corrupt:
	strmap_free(&seen);
	return sp_fail(err, "%s: central directory entry %zu is corrupt (at byte %llu)", z->path,
		       z->count, (unsigned long long)(d->offset + p));
}

static int open_archive(struct zip_reader *z, struct sp_err *err)
{
	if (fseeko(z->fp, 0, SEEK_END) != 0 || ftello(z->fp) < 0)
		return sp_fail_errno(err, "%s: cannot seek", z->path);
	z->size = (uint64_t)ftello(z->fp);
	struct directory d = {0};
	if (find_directory(z, &d, err))
		return -1;
	if (d.offset > d.end || d.size > d.end - d.offset)
		return sp_fail(err, "%s: central directory (%llu bytes at byte %llu) overruns its "
			       "end record at byte %llu (truncated?)", z->path,
			       (unsigned long long)d.size, (unsigned long long)d.offset,
			       (unsigned long long)d.end);
	if (d.count > d.size / CENTRAL_SIZE)
		return sp_fail(err, "%s: %llu members cannot fit a central directory of %llu bytes",
			       z->path, (unsigned long long)d.count, (unsigned long long)d.size);
	z->cd_offset = d.offset;
	unsigned char *cd = malloc(d.size ? d.size : 1);
	if (!cd)
		return sp_fail(err, "%s: out of memory", z->path);
	int rc = zip_read_at(z, d.offset, cd, d.size, err);
	if (rc == 0)
		rc = parse_directory(z, cd, &d, err);
	free(cd);
	return rc;
}

int zip_open_stream(struct zip_reader *z, FILE *fp, const char *name, struct sp_err *err)
{
	memset(z, 0, sizeof *z);
	z->fp = fp;
	z->path = strdup(name);
	if (!z->path)
		return sp_fail(err, "%s: out of memory", name);
	if (open_archive(z, err)) {
		zip_close(z);
		return -1;
	}
	return 0;
}

int zip_open(struct zip_reader *z, const char *path, struct sp_err *err)
{
	FILE *fp;
	memset(z, 0, sizeof *z);
	if (infile_open(path, &fp, NULL, err))
		return -1;
	if (zip_open_stream(z, fp, path, err)) {
		fclose(fp);
		return -1;
	}
	z->own_fp = 1;
	return 0;
}

void zip_close(struct zip_reader *z)
{
	if (z->own_fp && z->fp)
		fclose(z->fp);
	free(z->path);
	free(z->entries);
	free(z->names);
	memset(z, 0, sizeof *z);
}

const struct zip_entry *zip_find(const struct zip_reader *z, const char *name)
{
	for (size_t i = 0; i < z->count; i++)
		if (strcmp(z->entries[i].name, name) == 0)
			return &z->entries[i];
	return NULL;
}
