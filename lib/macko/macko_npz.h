/* MACKO matrices on disk: a NumPy .npz with arrays values (f2), deltas (u1),
 * row_indices (i4, rows + 1) and shape (i8, 2), so NumPy users can read them. */
#ifndef SPKIT_MACKO_NPZ_H
#define SPKIT_MACKO_NPZ_H

#include "core/err.h"
#include "macko/macko.h"

struct npz; /* npz.h */

/* Loads and validates (macko_validate): a file that loads is safe to run. */
int macko_load(const char *path, struct macko *m, struct sp_err *err);
/* The same from an open archive (path names it in errors). */
int macko_read(struct npz *z, const char *path, struct macko *m, struct sp_err *err);
/* 1 when path is a .npz holding any MACKO array (values, deltas or row_indices),
 * 0 when not (or unreadable: macko_load will then say why). */
int macko_npz_probe(const char *path);
/* Atomic (temporary file + rename); deflated members when compress. */
int macko_save(const char *path, const struct macko *m, int compress, struct sp_err *err);

#endif
