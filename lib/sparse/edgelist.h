/* Edge lists (CSV, TSV, whitespace-separated text) into CSR.
 *
 * One edge a line, "SRC<sep>DST" or "SRC<sep>DST<sep>WEIGHT". The separator
 * is a comma, a tab or spaces, taken from the first edge line (a comma if it
 * has one, else a tab if it has one, else spaces) and then required on every
 * line. Blank lines and lines starting with '#' or '%' are skipped, and so is
 * a header: a first line whose first field is not a number ("src,dst").
 * Either every edge has a weight or none has. Node ids are 0-based unless
 * one_based; the graph has max id + 1 nodes unless opts->nodes says how
 * many. Rows come out sorted by column; duplicate edges are kept, in file
 * order.
 *
 * Every problem is one message naming the file and the line:
 * "g.csv:17: field 2: expected a node id, found 'abc'". */
#ifndef SPKIT_EDGELIST_H
#define SPKIT_EDGELIST_H

#include <stddef.h>
#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

struct edgelist_opts {
	int one_based;  /* ids start at 1 */
	int undirected; /* also add DST -> SRC for every edge that is not a self-loop */
	int64_t nodes;  /* > 0: the node count, and ids must be below it; 0: max id + 1 */
};

/* Parse the text in buf (len bytes, no NUL needed); `name` starts the
 * messages; opts may be NULL for the defaults (all zero). edgelist_read maps
 * the file and calls edgelist_parse, so both take the same path. g is filled
 * on success and left empty on failure. A file with no edges is an error
 * unless opts->nodes is set (then g has that many empty rows). */
int edgelist_parse(const char *buf, size_t len, const char *name,
		   const struct edgelist_opts *opts, struct csr *g, struct sp_err *err);
int edgelist_read(const char *path, const struct edgelist_opts *opts, struct csr *g,
		  struct sp_err *err);

#endif
