/* The matrix a user names, compressed to MACKO: a dense 2-d .npy (f2, f4 or
 * f8, rounded to fp16), a sparse matrix (a SciPy .npz, CSR or COO, a
 * Matrix Market .mtx, whose pattern matrices have values 1 as SciPy reads
 * them, or an edge list, edgelist.h), or a seeded random matrix
 * (randmat.h), or one member of a multi-array .npz (np.savez of a model's
 * layers) taken as a dense matrix; a file's matrix first pruned by magnitude when asked. The
 * format is told by the name: .npy is dense, the suffixes graph_load knows
 * are sparse, any other is an error. A MACKO .npz is no input here
 * (macko_input_is_macko): it is loaded as it is (macko_load). */
#ifndef SPKIT_MACKO_INPUT_H
#define SPKIT_MACKO_INPUT_H

#include <stdint.h>

#include "core/err.h"
#include "core/report.h"
#include "macko/macko.h"

enum macko_prune {
	MACKO_PRUNE_NONE,
	MACKO_PRUNE_DENSITY, /* keep the fraction `keep` of all entries, the largest */
	MACKO_PRUNE_BELOW,   /* zero every entry with |v| < threshold */
};

struct macko_input {
	const char *path; /* the file, or NULL for a random matrix */
	/* an array of the .npz path, read alone (a checkpoint's layer), as a
	 * dense .npy would be; or NULL */
	const char *member;
	const char *name; /* the matrix in messages: path, or what asked for the random one */
	/* a random matrix: its shape, the chance that an entry is nonzero, and
	 * the seed of its stream */
	int64_t rows, cols;
	double density;
	uint64_t seed;
	/* a file's matrix: pruned first (values rounded to fp16, the precision
	 * MACKO keeps; a sparse matrix's density is of all its entries) */
	enum macko_prune prune;
	double keep, threshold;
};

/* Read (or make), prune and compress in into m. Reports "read and prune:
 * T s" and "compress: T s" at level 2; r may be NULL. */
int macko_input_compress(const struct macko_input *in, struct macko *m, const struct sp_report *r,
			 struct sp_err *err);

/* 1 when path names a MACKO .npz (a .npz holding any MACKO array), else 0. */
int macko_input_is_macko(const char *path);

#endif
