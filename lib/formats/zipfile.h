/* Minimal ZIP archives on zlib, for .npz: members stored or deflated, ZIP64
 * throughout (NumPy's savez writes every member with force_zip64).
 *
 * Reading: the central directory is parsed once; a member is then read in
 * order, straight into the caller's buffers (stored: fread at its data
 * offset; deflated: raw inflate from the file into the buffer), with its
 * sizes and CRC-32 checked at the end. Writing: members one after another
 * into an atomic output (outfile.h), CRC computed on the way, sizes patched
 * into the local header afterwards, then the central directory. */
#ifndef SPKIT_ZIPFILE_H
#define SPKIT_ZIPFILE_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "core/outfile.h"
#include "core/err.h"

enum { ZIP_STORED = 0, ZIP_DEFLATED = 8 };

struct zip_entry {
	char *name;
	uint64_t csize, usize; /* compressed and uncompressed bytes */
	uint64_t offset;       /* of the local header */
	uint32_t crc;
	uint16_t method, flags;
};

struct zip_reader {
	FILE *fp;
	int own_fp;
	char *path;         /* for messages */
	uint64_t size;      /* of the archive */
	uint64_t cd_offset; /* members' data lies before the central directory */
	struct zip_entry *entries;
	size_t count;
	char *names; /* storage for every entry's name */
};

int zip_open(struct zip_reader *z, const char *path, struct sp_err *err);
/* Read an archive from an open seekable stream (fmemopen, for fuzzing);
 * name is for messages; zip_close leaves fp open. */
int zip_open_stream(struct zip_reader *z, FILE *fp, const char *name, struct sp_err *err);
void zip_close(struct zip_reader *z);
/* The entry with this exact name, or NULL. */
const struct zip_entry *zip_find(const struct zip_reader *z, const char *name);
/* n raw bytes of the archive at offset (and the file position after them). */
int zip_read_at(struct zip_reader *z, uint64_t offset, void *buf, size_t n, struct sp_err *err);

/* One member being read. Members of one reader are read one at a time (they
 * share its file position). */
struct zip_member {
	struct zip_reader *z;
	const struct zip_entry *e;
	const char *label;    /* starts every message: "g.npz: member 'data'" */
	uint64_t data_offset; /* where the member's (compressed) bytes start */
	uint64_t in_left;     /* compressed bytes not yet read from the file */
	uint64_t out_done;    /* uncompressed bytes delivered */
	uint32_t crc;         /* of the bytes delivered */
	int inflating;
	z_stream zs;
	unsigned char *in; /* inflate's input buffer */
};

/* Check the local header and position the reader at the member's data. */
int zip_member_open(struct zip_member *m, struct zip_reader *z, const struct zip_entry *e,
		    const char *label, struct sp_err *err);
/* The next n uncompressed bytes, into buf. */
int zip_member_read(struct zip_member *m, void *buf, size_t n, struct sp_err *err);
/* After reading the whole member: the deflate stream ends there, and the
 * CRC-32 matches the directory's. */
int zip_member_finish(struct zip_member *m, struct sp_err *err);
void zip_member_close(struct zip_member *m);

struct zip_written {
	char *name;
	uint64_t offset, csize, usize;
	uint32_t crc;
	uint16_t method;
};

struct zip_writer {
	struct outfile out;
	struct zip_written *members;
	size_t count, cap;
	uint64_t offset; /* bytes written so far */
	/* Sizes and counts from here up are written as ZIP64 fields. Set to the
	 * format's limits by zip_writer_open; tests lower them to exercise
	 * ZIP64 without writing 4 GiB. */
	uint64_t limit32;
	uint32_t limit16;
	int open; /* a member is being written: the last of members[] */
	int deflating;
	z_stream zs;
	unsigned char *buf; /* deflate's output buffer */
};

/* After any failure but commit's, call zip_writer_abort (commit cleans up
 * after itself; a further abort is harmless). */
int zip_writer_open(struct zip_writer *w, const char *path, struct sp_err *err);
/* Start a member; its bytes follow through zip_writer_write. */
int zip_writer_begin(struct zip_writer *w, const char *name, int deflate, struct sp_err *err);
int zip_writer_write(struct zip_writer *w, const void *buf, size_t n, struct sp_err *err);
/* Finish the member: flush the deflate stream, patch sizes and CRC. */
int zip_writer_end(struct zip_writer *w, struct sp_err *err);
/* Central directory, end records, and rename into place. */
int zip_writer_commit(struct zip_writer *w, struct sp_err *err);
/* Remove the temporary; nothing appears at the path. */
void zip_writer_abort(struct zip_writer *w);

#endif
