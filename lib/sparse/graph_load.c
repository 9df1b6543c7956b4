#include "sparse/graph_load.h"

#include <string.h>
#include <strings.h>

#include "sparse/csr_npz.h"
#include "sparse/csr_raw.h"
#include "core/infile.h"
#include "sparse/mtx.h"

enum graph_format { FORMAT_UNKNOWN, FORMAT_NPZ, FORMAT_MTX, FORMAT_EDGELIST, FORMAT_RAW };

static enum graph_format format_of(const char *path)
{
	if (infile_is_stdin(path)) /* the one graph format that streams */
		return FORMAT_EDGELIST;
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash))
		return FORMAT_UNKNOWN;
	if (!strcasecmp(dot, ".npz"))
		return FORMAT_NPZ;
	if (!strcasecmp(dot, ".mtx"))
		return FORMAT_MTX;
	if (!strcmp(dot, CSR_RAW_SUFFIX))
		return FORMAT_RAW;
	static const char *const edge_lists[] = {".csv", ".tsv", ".txt", ".el", ".edges"};
	for (size_t i = 0; i < sizeof edge_lists / sizeof *edge_lists; i++)
		if (!strcasecmp(dot, edge_lists[i]))
			return FORMAT_EDGELIST;
	return FORMAT_UNKNOWN;
}

int graph_load_knows(const char *path)
{
	return format_of(path) != FORMAT_UNKNOWN;
}

int graph_load(const char *path, const struct graph_load_opts *opts, struct csr *g,
	       struct sp_err *err)
{
	if (infile_check(path, err))
		return -1;
	switch (format_of(path)) {
	case FORMAT_NPZ:
		return csr_npz_load(path, g, err);
	case FORMAT_MTX:
		return mtx_read(path, g, err);
	case FORMAT_EDGELIST:
		return edgelist_read(path, opts ? &opts->edgelist : NULL, g, err);
	case FORMAT_RAW:
		return csr_raw_load(path, g, err);
	default:
		return sp_fail(err, "%s: unknown graph format (expected " GRAPH_LOAD_SUFFIXES ")",
			       path);
	}
}

int graph_load_indptr(const char *path, const struct graph_load_opts *opts, int64_t **indptr,
		      int64_t *nrows, struct sp_err *err)
{
	if (infile_check(path, err))
		return -1;
	if (format_of(path) == FORMAT_NPZ) {
		int64_t ncols, nnz;
		return csr_npz_load_indptr(path, indptr, nrows, &ncols, &nnz, err);
	}
	if (format_of(path) == FORMAT_RAW)
		return csr_raw_load_indptr(path, indptr, nrows, err);
	struct csr g;
	if (graph_load(path, opts, &g, err))
		return -1;
	*indptr = g.indptr;
	*nrows = g.nrows;
	g.indptr = NULL;
	csr_free(&g);
	return 0;
}
