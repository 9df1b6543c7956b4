/* NumPy .npz archives: a ZIP of .npy members named NAME.npy, stored
 * (np.savez) or deflated (np.savez_compressed).
 *
 * Reading takes one member at a time by name, without touching the others:
 * its .npy header is parsed from the member's first bytes and its data read
 * (or inflated) straight into the array's buffer. Writing is atomic: the
 * archive appears at its path complete, or not at all. */
#ifndef SPKIT_NPZ_H
#define SPKIT_NPZ_H

#include <stdio.h>

#include "core/err.h"
#include "formats/npy.h"
#include "formats/zipfile.h"

struct npz {
	struct zip_reader zip;
};

int npz_open(struct npz *z, const char *path, struct sp_err *err);
/* From an open seekable stream (fmemopen, for fuzzing); npz_close leaves
 * fp open. */
int npz_open_stream(struct npz *z, FILE *fp, const char *name, struct sp_err *err);
void npz_close(struct npz *z);

/* Is there a member `name` (without ".npy")? */
int npz_has(const struct npz *z, const char *name);
/* Read member `name` whole; sizes and CRC-32 are checked. Messages start
 * "PATH: member 'NAME'". */
int npz_read(struct npz *z, const char *name, struct npy_array *a, struct sp_err *err);
/* Only the member's header: dtype and shape, a->data NULL. Reads a few
 * hundred bytes whatever the member's size. */
int npz_member_shape(struct npz *z, const char *name, struct npy_array *a, struct sp_err *err);

struct npz_writer {
	struct zip_writer zip;
	int compress;
	uint64_t left; /* data bytes the open member still expects */
};

int npz_writer_open(struct npz_writer *w, const char *path, int compress, struct sp_err *err);
/* Member `name` holding a whole array. */
int npz_writer_add(struct npz_writer *w, const char *name, const struct npy_array *a,
		   struct sp_err *err);
/* Or in pieces, for data made on the fly: begin writes the header for a's
 * dtype and shape (a->data is not used), write appends data, end checks
 * that exactly npy_nbytes(a) bytes came. */
int npz_writer_begin(struct npz_writer *w, const char *name, const struct npy_array *a,
		     struct sp_err *err);
int npz_writer_write(struct npz_writer *w, const void *buf, size_t n, struct sp_err *err);
int npz_writer_end(struct npz_writer *w, struct sp_err *err);
int npz_writer_commit(struct npz_writer *w, struct sp_err *err);
/* After a failure (any but commit's, which cleans up itself): remove the
 * temporary; nothing appears at the path. */
void npz_writer_abort(struct npz_writer *w);

#endif
