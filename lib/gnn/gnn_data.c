/* Datasets from files: the SPEC.md dataset folder and OGB's raw layout.
 * Both end in the same checks (gnn_data.h), written once here: the graph
 * made square, sorted and free of repeats; labels that are class ids or
 * 0/1 targets; splits that are disjoint and non-empty; finite features. */
#include "gnn/gnn_data.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/infile.h"
#include "sparse/edgelist.h"
#include "sparse/graph_load.h"
#include "formats/gztext.h"
#include "formats/npy.h"
#include "core/textscan.h"

enum { PATH_LEN = 4096 };

static const char *const split_noun[] = {"", "training", "validation", "test"};

static int path_join(char *out, const char *dir, const char *name, struct sp_err *err)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (snprintf(out, PATH_LEN, "%.*s/%s", (int)n, dir, name) >= PATH_LEN)
		return sp_fail(err, "%s: path too long", dir);
	return 0;
}

static int is_kind(const char *path, mode_t kind)
{
	struct stat st;
	return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

/* What struct gnn_dataset promises of its graph: square, at least one
 * node, a pattern, rows sorted, no repeated edge. */
static int graph_finish(struct gnn_dataset *d, const char *name, struct sp_err *err)
{
	struct csr *g = &d->graph;
	if (g->nrows != g->ncols)
		return sp_fail(err, "%s: the graph is %lld x %lld, expected a square adjacency matrix",
			       name, (long long)g->nrows, (long long)g->ncols);
	if (g->nrows == 0)
		return sp_fail(err, "%s: empty graph (0 nodes)", name);
	free(g->values);
	g->values = NULL;
	/* Rows that are sorted already (SciPy's usual CSR, every edge list)
	 * skip the sort. */
	if (csr_validate(g, CSR_CHECK_SORTED, name, NULL) && csr_sort_rows(g, name, err))
		return -1;
	csr_drop_duplicates(g);
	d->n = g->nrows;
	d->split = calloc((size_t)d->n, 1);
	if (!d->split)
		return sp_fail(err, "%s: out of memory for %lld nodes", name, (long long)d->n);
	return 0;
}

static int check_finite(const float *x, int64_t rows, int cols, const char *name,
			struct sp_err *err)
{
	for (int64_t i = 0; i < rows * cols; i++)
		if (!isfinite(x[i]))
			return sp_fail(err, "%s: %s at row %lld column %lld", name,
				       isnan(x[i]) ? "NaN" : "Inf", (long long)(i / cols),
				       (long long)(i % cols));
	return 0;
}

static int check_rows(int64_t rows, const struct gnn_dataset *d, const char *name,
		      struct sp_err *err)
{
	if (rows != d->n)
		return sp_fail(err, "%s: %lld rows, but the graph has %lld nodes", name,
			       (long long)rows, (long long)d->n);
	return 0;
}

/* Labels as n x cols floats (any integer file type converts exactly: class
 * ids are below GNN_MAX_CLASSES). One column: class ids; more: 0/1 targets,
 * multi-label. Takes v (malloc'd) on success. */
static int labels_take(struct gnn_dataset *d, float *v, int64_t cols, const char *name,
		       struct sp_err *err)
{
	if (cols < 1 || cols > GNN_MAX_CLASSES)
		return sp_fail(err, "%s: %lld label columns, expected 1..%d", name, (long long)cols,
			       GNN_MAX_CLASSES);
	if (cols > 1) {
		for (int64_t i = 0; i < d->n * cols; i++)
			if (v[i] != 0 && v[i] != 1)
				return sp_fail(err, "%s: value %g at row %lld column %lld: multi-label "
						    "targets must be 0 or 1", name, v[i],
					       (long long)(i / cols), (long long)(i % cols));
		d->multilabel = 1;
		d->nclass = (int)cols;
		d->targets = v;
		return 0;
	}
	int32_t *ids = malloc((size_t)d->n * sizeof *ids);
	if (!ids)
		return sp_fail(err, "%s: out of memory for %lld labels", name, (long long)d->n);
	int32_t top = 0;
	for (int64_t i = 0; i < d->n; i++) {
		if (v[i] < 0 || v[i] != floorf(v[i]) || v[i] >= GNN_MAX_CLASSES) {
			free(ids);
			return sp_fail(err, "%s: node %lld has label %g: expected a class id in 0..%d",
				       name, (long long)i, v[i], GNN_MAX_CLASSES - 1);
		}
		ids[i] = (int32_t)v[i];
		if (ids[i] > top)
			top = ids[i];
	}
	free(v);
	d->labels = ids;
	d->nclass = top + 1;
	return 0;
}

/* Node `node` joins split s. Returns the split it was in already (for the
 * caller's message), or GNN_NONE when all is well. */
static enum gnn_split split_put(struct gnn_dataset *d, int64_t node, enum gnn_split s)
{
	enum gnn_split was = (enum gnn_split)d->split[node];
	if (was == GNN_NONE)
		d->split[node] = (uint8_t)s;
	return was;
}

static int check_nonempty(const struct gnn_dataset *d, enum gnn_split s, const char *name,
			  struct sp_err *err)
{
	if (gnn_data_count(d, s) == 0)
		return sp_fail(err, "%s: no nodes: the %s split is empty", name, split_noun[s]);
	return 0;
}

/* ---- the dataset folder ---- */

/* The graph is graph.npz or MaxK-GNN's graph.indptr + graph.indices; each
 * split a boolean mask, SPLIT_mask.npy, or an index array, SPLIT_idx.npy
 * (the int node ids OGB's get_idx_split and DGL's samplers give). */
static const char *const folder_files[] = {"graph.npz",	     "features.npy",  "labels.npy",
					   "train_mask.npy", "val_mask.npy", "test_mask.npy"};
static const char *const graph_files[] = {"graph.npz", "graph.indptr"};
static const char *const index_files[] = {"", "train_idx.npy", "val_idx.npy", "test_idx.npy"};

static int is_float_dtype(enum npy_dtype t)
{
	return t == NPY_F2 || t == NPY_F4 || t == NPY_F8;
}

static int npy_features(const char *path, struct gnn_dataset *d, struct sp_err *err)
{
	struct npy_array a;
	if (npy_read(path, &a, err))
		return -1;
	int rc = -1;
	if (a.ndim != 2)
		sp_fail(err, "%s: expected a 2-D array (nodes x features), found %d-D", path, a.ndim);
	else if (!is_float_dtype(a.dtype))
		sp_fail(err, "%s: dtype %s: expected f2, f4 or f8 features", path,
			npy_dtype_name(a.dtype));
	else if (a.shape[1] < 1 || a.shape[1] > INT32_MAX)
		sp_fail(err, "%s: %lld features per node, expected 1..%d", path,
			(long long)a.shape[1], INT32_MAX);
	else if (!check_rows(a.shape[0], d, path, err) && !npy_cast(&a, NPY_F4, path, err))
		rc = check_finite(a.data, a.shape[0], (int)a.shape[1], path, err);
	if (!rc) {
		d->features = a.data;
		d->nfeat = (int)a.shape[1];
		a.data = NULL;
	}
	npy_free(&a);
	return rc;
}

static int npy_labels(const char *path, struct gnn_dataset *d, struct sp_err *err)
{
	struct npy_array a;
	if (npy_read(path, &a, err))
		return -1;
	int rc = -1;
	int64_t cols = a.ndim == 2 ? a.shape[1] : 1;
	if (a.ndim != 1 && a.ndim != 2)
		sp_fail(err, "%s: expected class ids (1-D) or a 0/1 matrix (2-D), found %d-D", path,
			a.ndim);
	else if (a.dtype == NPY_BYTES || (cols == 1 && is_float_dtype(a.dtype)))
		sp_fail(err, "%s: dtype %s: expected integer class ids (u1, i4, i8)%s", path,
			npy_dtype_name(a.dtype), a.ndim == 2 ? " or a 0/1 matrix" : "");
	else if (!check_rows(a.shape[0], d, path, err) && !npy_cast(&a, NPY_F4, path, err))
		rc = labels_take(d, a.data, cols, path, err);
	if (!rc)
		a.data = NULL;
	npy_free(&a);
	return rc;
}

/* A mask (bool or u1, one per node) or an index array (i4 or i8 node
 * ids, each once) puts its nodes into split s; files[] names the splits'
 * files, for the message of a node in two. */
static int npy_split(const char *path, int is_index, enum gnn_split s, const char *const *files,
		     struct gnn_dataset *d, struct sp_err *err)
{
	struct npy_array a;
	if (npy_read(path, &a, err))
		return -1;
	int rc = -1;
	if (a.ndim != 1)
		sp_fail(err, "%s: expected a 1-D %s, found %d-D", path, is_index ? "index array" : "mask",
			a.ndim);
	else if (!is_index && a.dtype != NPY_BOOL && a.dtype != NPY_U1)
		sp_fail(err, "%s: dtype %s: expected a bool (or u1) mask", path,
			npy_dtype_name(a.dtype));
	else if (is_index && a.dtype != NPY_I4 && a.dtype != NPY_I8)
		sp_fail(err, "%s: dtype %s: expected int node ids (i4 or i8)", path,
			npy_dtype_name(a.dtype));
	else if (is_index || !check_rows(a.shape[0], d, path, err))
		rc = 0;
	for (int64_t i = 0; !rc && i < a.shape[0]; i++) {
		int64_t node = i;
		if (is_index) {
			node = a.dtype == NPY_I4 ? ((const int32_t *)a.data)[i]
						 : ((const int64_t *)a.data)[i];
			if (node < 0 || node >= d->n) {
				rc = sp_fail(err, "%s: node %lld at position %lld, out of range for %lld "
						  "nodes", path, (long long)node, (long long)i,
					     (long long)d->n);
				break;
			}
		} else if (((const uint8_t *)a.data)[i] > 1) {
			rc = sp_fail(err, "%s: value %d at row %lld: a mask holds 0 or 1", path,
				     ((const uint8_t *)a.data)[i], (long long)i);
			break;
		} else if (!((const uint8_t *)a.data)[i]) {
			continue;
		}
		enum gnn_split was = split_put(d, node, s);
		if (was == s)
			rc = sp_fail(err, "%s: node %lld listed twice", path, (long long)node);
		else if (was != GNN_NONE)
			rc = sp_fail(err, "%s: node %lld is also in %s", path, (long long)node,
				     files[was]);
	}
	npy_free(&a);
	return rc ? -1 : check_nonempty(d, s, path, err);
}

/* DIR/name, when it is a file. */
static int folder_has(const char *dir, const char *name, char *path, struct sp_err *err)
{
	return !path_join(path, dir, name, err) && is_kind(path, S_IFREG);
}

static int load_folder(const char *dir, struct gnn_dataset *d, struct sp_err *err)
{
	char path[PATH_LEN];
	int npz = folder_has(dir, graph_files[0], path, err);
	if (!npz && !folder_has(dir, graph_files[1], path, err))
		return sp_fail(err, "%s: no graph: expected graph.npz, or graph.indptr and "
				  "graph.indices as MaxK-GNN writes them", dir);
	if (npz && folder_has(dir, graph_files[1], path, err))
		return sp_fail(err, "%s: both graph.npz and graph.indptr: keep one", dir);
	if (path_join(path, dir, graph_files[!npz], err) || graph_load(path, NULL, &d->graph, err) ||
	    graph_finish(d, path, err))
		return -1;
	if (path_join(path, dir, "features.npy", err) || npy_features(path, d, err))
		return -1;
	if (path_join(path, dir, "labels.npy", err) || npy_labels(path, d, err))
		return -1;
	const char *files[4] = {""};
	for (int s = GNN_TRAIN; s <= GNN_TEST; s++) {
		char mask[PATH_LEN];
		int has_mask = folder_has(dir, folder_files[2 + s], mask, err);
		int has_index = folder_has(dir, index_files[s], path, err);
		if (has_mask && has_index)
			return sp_fail(err, "%s: both %s and %s: keep one", dir, folder_files[2 + s],
				       index_files[s]);
		if (!has_mask && !has_index)
			return sp_fail(err, "%s: no %s split: expected %s (bool) or %s (node ids)", dir,
				       split_noun[s], folder_files[2 + s], index_files[s]);
		files[s] = has_index ? index_files[s] : folder_files[2 + s];
		if (npy_split(has_mask ? mask : path, has_index, (enum gnn_split)s, files, d, err))
			return -1;
	}
	return 0;
}

/* ---- OGB's raw layout ---- */

static const char ogb_expected[] = "an OGB folder holds raw/edge.csv.gz, raw/node-feat.csv.gz, "
				   "raw/node-label.csv.gz and split/NAME/{train,valid,test}.csv.gz";

struct ogb_paths {
	char edge[PATH_LEN], feat[PATH_LEN], label[PATH_LEN], nodes[PATH_LEN];
	char split[4][PATH_LEN]; /* by enum gnn_split */
};

/* The one folder inside DIR/split (OGB names it for how it splits:
 * ogbn-products' sales_ranking, ogbn-arxiv's time). */
static int ogb_split_folder(const char *dir, char *out, struct sp_err *err)
{
	char split[PATH_LEN], sub[PATH_LEN];
	if (path_join(split, dir, "split", err))
		return -1;
	DIR *dp = opendir(split);
	if (!dp)
		return sp_fail_errno(err, "%s: missing (%s)", split, ogb_expected);
	int found = 0;
	for (struct dirent *e; (e = readdir(dp));) {
		if (e->d_name[0] == '.' || path_join(sub, split, e->d_name, NULL) ||
		    !is_kind(sub, S_IFDIR))
			continue;
		if (found++) {
			sp_fail(err, "%s: holds more than one split (%s and %s); expected one folder",
				split, strrchr(out, '/') + 1, e->d_name);
			break;
		}
		strcpy(out, sub);
	}
	closedir(dp);
	if (!found)
		return sp_fail(err, "%s: no split folder inside (%s)", split, ogb_expected);
	return found == 1 ? 0 : -1;
}

static int ogb_paths(const char *dir, struct ogb_paths *p, struct sp_err *err)
{
	static const char *const lists[] = {"", "train.csv.gz", "valid.csv.gz", "test.csv.gz"};
	char split[PATH_LEN];
	if (path_join(p->edge, dir, "raw/edge.csv.gz", err) ||
	    path_join(p->feat, dir, "raw/node-feat.csv.gz", err) ||
	    path_join(p->label, dir, "raw/node-label.csv.gz", err) ||
	    path_join(p->nodes, dir, "raw/num-node-list.csv.gz", err))
		return -1;
	/* Every file is looked for before any is read: products' features
	 * take seconds to parse, a missing split file should not. */
	const char *need[] = {p->edge, p->feat, p->label};
	for (int i = 0; i < 3; i++)
		if (!is_kind(need[i], S_IFREG))
			return sp_fail(err, "%s: missing (%s)", need[i], ogb_expected);
	if (ogb_split_folder(dir, split, err))
		return -1;
	for (int s = GNN_TRAIN; s <= GNN_TEST; s++)
		if (path_join(p->split[s], split, lists[s], err))
			return -1;
		else if (!is_kind(p->split[s], S_IFREG))
			return sp_fail(err, "%s: missing (%s)", p->split[s], ogb_expected);
	return 0;
}

/* A .csv.gz of comma-separated numbers, the same count on every line, into
 * rows x cols floats; `what` names a field in messages ("a feature"). The
 * array doubles from a few MiB, and stops at `expect` rows when that is
 * known (num-node-list's count): neither a count nor a line of commas
 * allocates much before the rows are there. */
static int ogb_table(const char *path, const char *what, int64_t expect, float **out,
		     int64_t *rows_out, int64_t *cols_out, struct sp_err *err)
{
	struct gztext t;
	struct text_span line, rest, field;
	if (gztext_open(&t, path, err))
		return -1;
	float *v = NULL;
	int64_t rows = 0, cap = 0, cols = 0;
	int rc;
	while ((rc = gztext_line(&t, &line, err)) == 1) {
		if (!cols)
			for (rest = line, cols = 0; text_next_field(&rest, ',', &field);)
				cols++;
		if (rows == cap) {
			int64_t first = (4 << 20) / (cols * (int64_t)sizeof *v);
			cap = cap ? cap * 2 : first > 1 ? first : 1;
			if (expect > rows && cap > expect)
				cap = expect;
			float *bigger = realloc(v, (size_t)(cap * cols) * sizeof *v);
			if (!bigger) {
				rc = sp_fail(err, "%s: out of memory at line %lld", path,
					     (long long)t.scan.line);
				break;
			}
			v = bigger;
		}
		float *row = v + rows * cols;
		int64_t k = 0;
		for (rest = line; rc == 1 && text_next_field(&rest, ',', &field); k++)
			if (k < cols && text_field_float(&t.scan, field, (int)k + 1, what, &row[k], err))
				rc = -1;
		if (rc == 1 && k != cols)
			rc = text_scan_fail(&t.scan, err, "%lld fields, but line 1 has %lld",
					    (long long)k, (long long)cols);
		if (rc != 1)
			break;
		rows++;
	}
	gztext_close(&t);
	if (!rc && !rows)
		rc = sp_fail(err, "%s: empty file", path);
	if (rc) {
		free(v);
		return -1;
	}
	*out = v;
	*rows_out = rows;
	*cols_out = cols;
	return 0;
}

static int ogb_node_count(const char *path, int64_t *n, struct sp_err *err)
{
	struct gztext t;
	struct text_span line;
	if (gztext_open(&t, path, err))
		return -1;
	int rc = gztext_line(&t, &line, err);
	if (rc == 0)
		rc = sp_fail(err, "%s: empty file", path);
	else if (rc == 1 && !text_field_i64(&t.scan, text_span_trim(line), 1, "a node count", n, err))
		rc = *n >= 1 && *n <= CSR_MAX_DIM
			     ? 0
			     : sp_fail(err, "%s:1: node count %lld outside 1..%lld", path,
				       (long long)*n, (long long)CSR_MAX_DIM);
	else
		rc = -1;
	gztext_close(&t);
	return rc;
}

/* The edges as stored, each also reversed: OGB stores an undirected graph
 * (ogbn-products, ogbn-proteins) one direction per edge, and a GNN
 * aggregates over both; a directed one (ogbn-arxiv's citations) is made
 * undirected, as OGB's own examples do with to_undirected. Edges given
 * both ways collapse to one each way. */
static int ogb_edges(const char *path, struct gnn_dataset *d, struct sp_err *err)
{
	char *text;
	size_t len;
	if (gztext_read(path, &text, &len, err))
		return -1;
	struct edgelist_opts o = {.undirected = 1, .nodes = d->n};
	int rc = edgelist_parse(text, len, path, &o, &d->graph, err);
	free(text);
	return rc ? -1 : graph_finish(d, path, err);
}

static int ogb_split(const char *path, enum gnn_split s, const struct ogb_paths *p,
		     struct gnn_dataset *d, struct sp_err *err)
{
	struct gztext t;
	struct text_span line;
	if (gztext_open(&t, path, err))
		return -1;
	int rc;
	int64_t id;
	while ((rc = gztext_line(&t, &line, err)) == 1) {
		if (text_field_i64(&t.scan, text_span_trim(line), 1, "a node id", &id, err)) {
			rc = -1;
			break;
		}
		if (id < 0 || id >= d->n) {
			rc = text_scan_fail(&t.scan, err, "node %lld out of range for %lld nodes",
					    (long long)id, (long long)d->n);
			break;
		}
		enum gnn_split was = split_put(d, id, s);
		if (was != GNN_NONE) {
			rc = was == s ? text_scan_fail(&t.scan, err, "node %lld listed twice", (long long)id)
				      : text_scan_fail(&t.scan, err, "node %lld is also in %s",
						       (long long)id, p->split[was]);
			break;
		}
	}
	gztext_close(&t);
	return rc ? -1 : check_nonempty(d, s, path, err);
}

static int load_ogb(const char *dir, struct gnn_dataset *d, struct sp_err *err)
{
	struct ogb_paths p;
	int64_t rows, cols, n = 0;
	float *labels;
	if (ogb_paths(dir, &p, err) || (is_kind(p.nodes, S_IFREG) && ogb_node_count(p.nodes, &n, err)))
		return -1;
	if (ogb_table(p.feat, "a feature", n, &d->features, &rows, &cols, err))
		return -1;
	if (n && rows != n)
		return sp_fail(err, "%s: %lld rows, but %s says %lld nodes", p.feat, (long long)rows,
			       p.nodes, (long long)n);
	if (cols > INT32_MAX)
		return sp_fail(err, "%s: %lld features per node, expected at most %d", p.feat,
			       (long long)cols, INT32_MAX);
	d->n = rows;
	d->nfeat = (int)cols;
	if (ogb_table(p.label, "a label", d->n, &labels, &rows, &cols, err))
		return -1;
	if (check_rows(rows, d, p.label, err) || labels_take(d, labels, cols, p.label, err)) {
		free(labels);
		return -1;
	}
	if (ogb_edges(p.edge, d, err))
		return -1;
	for (int s = GNN_TRAIN; s <= GNN_TEST; s++)
		if (ogb_split(p.split[s], (enum gnn_split)s, &p, d, err))
			return -1;
	return 0;
}

int gnn_data_load(const char *dir, struct gnn_dataset *d, struct sp_err *err)
{
	memset(d, 0, sizeof *d);
	struct stat st;
	if (infile_is_stdin(dir))
		return sp_fail(err, "-: a dataset is a folder, not standard input");
	if (stat(dir, &st) != 0)
		return sp_fail_errno(err, "%s: cannot open the dataset folder", dir);
	if (!S_ISDIR(st.st_mode))
		return sp_fail(err, "%s: not a folder (a dataset is a folder of files)", dir);
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	const char *base = dir + len;
	while (base > dir && base[-1] != '/')
		base--;
	snprintf(d->name, sizeof d->name, "%.*s", (int)(dir + len - base), base);

	char path[PATH_LEN];
	int folder = folder_has(dir, graph_files[1], path, err);
	for (size_t i = 0; i < sizeof folder_files / sizeof *folder_files; i++)
		folder |= folder_has(dir, folder_files[i], path, err);
	for (int s = GNN_TRAIN; s <= GNN_TEST; s++)
		folder |= folder_has(dir, index_files[s], path, err);
	int ogb;
	ogb = (!path_join(path, dir, "raw", err) && is_kind(path, S_IFDIR)) ||
	      (!path_join(path, dir, "split", err) && is_kind(path, S_IFDIR));
	int rc;
	if (folder)
		rc = load_folder(dir, d, err);
	else if (ogb)
		rc = load_ogb(dir, d, err);
	else
		rc = sp_fail(err, "%s: not a dataset: expected graph.npz (or graph.indptr), "
				  "features.npy, labels.npy, train_mask.npy, val_mask.npy and "
				  "test_mask.npy (or *_idx.npy), or %s", dir, ogb_expected);
	if (rc)
		gnn_data_free(d);
	return rc;
}

int gnn_data_add_selfloops(struct gnn_dataset *d, struct sp_err *err)
{
	struct csr *g = &d->graph, out;
	int64_t missing = 0;
	for (int64_t r = 0; r < g->nrows; r++) {
		int has = 0;
		for (int64_t j = g->indptr[r]; j < g->indptr[r + 1] && g->indices[j] <= r; j++)
			has |= g->indices[j] == r;
		missing += !has;
	}
	if (!missing)
		return 0;
	if (csr_alloc(&out, g->nrows, g->ncols, g->nnz + missing, 0, d->name, err))
		return -1;
	int64_t o = 0;
	for (int64_t r = 0; r < g->nrows; r++) {
		int64_t j = g->indptr[r], end = g->indptr[r + 1];
		for (; j < end && g->indices[j] < r; j++)
			out.indices[o++] = g->indices[j];
		if (j == end || g->indices[j] != r)
			out.indices[o++] = (int32_t)r;
		for (; j < end; j++)
			out.indices[o++] = g->indices[j];
		out.indptr[r + 1] = o;
	}
	csr_free(g);
	*g = out;
	return 0;
}

int64_t gnn_data_count(const struct gnn_dataset *d, enum gnn_split s)
{
	int64_t n = 0;
	for (int64_t i = 0; i < d->n; i++)
		n += d->split[i] == s;
	return n;
}

void gnn_data_free(struct gnn_dataset *d)
{
	csr_free(&d->graph);
	free(d->features);
	free(d->labels);
	free(d->targets);
	free(d->split);
	memset(d, 0, sizeof *d);
}
