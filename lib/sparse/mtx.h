/* Matrix Market (.mtx) coordinate files into CSR.
 *
 * Read: "%%MatrixMarket matrix coordinate real|integer|pattern
 * general|symmetric|skew-symmetric" (any case), '%' comment lines and blank
 * lines, the size line "rows cols entries", then the entries "i j [value]"
 * with 1-based indices. Symmetric files give each off-diagonal entry twice,
 * (i, j) and (j, i), whichever triangle it is written in; skew-symmetric
 * ones with the mirror negated (a diagonal entry, which should not be
 * there, is kept once, as SciPy's mmread does). Rows come out sorted by
 * column; duplicates are kept, in file order. Values are float (as
 * (float)strtod would round them); a pattern gives values NULL. Not read:
 * array (dense) files, complex and hermitian matrices.
 *
 * Every problem is one message naming the file and the line:
 * "a.mtx:7: row index 9 out of range [1, 5]",
 * "a.mtx:102: expected 100 entries, found 98". */
#ifndef SPKIT_MTX_H
#define SPKIT_MTX_H

#include <stddef.h>
#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

enum mtx_field { MTX_REAL, MTX_INTEGER, MTX_PATTERN };
enum mtx_symmetry { MTX_GENERAL, MTX_SYMMETRIC, MTX_SKEW_SYMMETRIC };

/* What the banner and the size line say. */
struct mtx_header {
	enum mtx_field field;
	enum mtx_symmetry symmetry;
	int64_t rows, cols, entries;
};

/* Parse the text in buf (len bytes, no NUL needed); `name` starts the
 * messages. mtx_read maps the file and calls mtx_parse, so both take the
 * same path. g is filled on success and left empty on failure. */
int mtx_parse(const char *buf, size_t len, const char *name, struct csr *g, struct sp_err *err);
int mtx_read(const char *path, struct csr *g, struct sp_err *err);

/* Only the banner and the size line, e.g. to see a matrix's shape before
 * deciding to load it. */
int mtx_parse_header(const char *buf, size_t len, const char *name, struct mtx_header *h,
		     struct sp_err *err);

#endif
