/* GNN datasets: the dataset folder and the OGB raw layout loaded value for
 * value, every bad input with its one-line message naming the file, the
 * --synthetic generators (csbm's structure, determinism for seeds and
 * thread counts, power-law data) and self-loops added without repeats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sparse/csr_npz.h"
#include "gnn/gnn_data.h"
#include "core/half.h"
#include "formats/npy.h"
#include "ogb_sample.h"
#include "testutil.h"

/* ---- the dataset folder ---- */

/* The sample: 5 nodes, rows stored unsorted and with a repeat,
 *   0: 3 1 1    1: 0 1 (a self-loop)    2: none    3: 0 4    4: 3
 * features (i - 2) / 2 + k for node i, column k < 3; labels 0 2 1 2 0;
 * train {0, 1}, val {2}, test {3}, node 4 in no split. */
static int64_t g_indptr[] = {0, 3, 5, 5, 7, 8};
static int32_t g_indices[] = {3, 1, 1, 0, 1, 0, 4, 3};
static const struct csr sample_graph = {5, 5, 8, g_indptr, g_indices, NULL};
static const int64_t want_indptr[] = {0, 2, 4, 4, 6, 7};
static const int32_t want_indices[] = {1, 3, 0, 1, 0, 4, 3};
static float features[5][3];
static const int64_t labels[] = {0, 2, 1, 2, 0};
static const uint8_t masks[3][5] = {{1, 1, 0, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 0, 1, 0}};
static const char *const mask_files[] = {"train_mask.npy", "val_mask.npy", "test_mask.npy"};

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static void put_npy(const char *dir, const char *name, enum npy_dtype dt, int ndim,
		    const int64_t *shape, const void *data)
{
	struct npy_array a = {dt, npy_dtype_size(dt), ndim, {0}, (void *)data};
	memcpy(a.shape, shape, (size_t)ndim * sizeof *shape);
	char path[700];
	struct sp_err e;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (npy_write(path, &a, &e))
		fail_msg("%s", e.msg);
}

/* A fresh folder NAME in the scratch folder holding the sample. */
static const char *make_folder(const char *name)
{
	static char dir[600];
	snprintf(dir, sizeof dir, "%s", test_path("%s", name));
	assert_int_equal(mkdir(dir, 0777), 0);
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 3; k++)
			features[i][k] = (float)(i - 2) / 2 + (float)k;
	char path[700];
	struct sp_err e;
	snprintf(path, sizeof path, "%s/graph.npz", dir);
	if (csr_npz_save(path, &sample_graph, 1, &e))
		fail_msg("%s", e.msg);
	put_npy(dir, "features.npy", NPY_F4, 2, SHAPE(5, 3), features);
	put_npy(dir, "labels.npy", NPY_I8, 1, SHAPE(5), labels);
	for (int s = 0; s < 3; s++)
		put_npy(dir, mask_files[s], NPY_BOOL, 1, SHAPE(5), masks[s]);
	return dir;
}

static void expect_sample_split(const struct gnn_dataset *d)
{
	for (int i = 0; i < 5; i++) {
		int want = masks[0][i] ? GNN_TRAIN : masks[1][i] ? GNN_VAL : masks[2][i] ? GNN_TEST : 0;
		assert_int_equal(d->split[i], want);
	}
	assert_int_equal(gnn_data_count(d, GNN_TRAIN), 2);
	assert_int_equal(gnn_data_count(d, GNN_VAL), 1);
	assert_int_equal(gnn_data_count(d, GNN_TEST), 1);
	assert_int_equal(gnn_data_count(d, GNN_NONE), 1);
}

static void test_folder(void **state)
{
	const char *dir = make_folder("sample");
	struct gnn_dataset d;
	struct sp_err e;
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(d.name, "sample");
	assert_int_equal(d.n, 5);
	assert_csr(&d.graph, 5, 5, 7, want_indptr, want_indices, NULL);
	assert_int_equal(d.nfeat, 3);
	assert_memory_equal(d.features, features, sizeof features);
	assert_int_equal(d.nclass, 3);
	assert_int_equal(d.multilabel, 0);
	assert_null(d.targets);
	for (int i = 0; i < 5; i++)
		assert_int_equal(d.labels[i], labels[i]);
	expect_sample_split(&d);
	gnn_data_free(&d);
	assert_null(d.features);

	/* A trailing slash is the same folder, and the same name. */
	char slash[700];
	snprintf(slash, sizeof slash, "%s/", dir);
	assert_int_equal(gnn_data_load(slash, &d, &e), 0);
	assert_string_equal(d.name, "sample");
	gnn_data_free(&d);
}

/* The other dtypes each file may have: f8 and f2 features, u1 and i4
 * labels, labels as an n x 1 column, u1 masks; and multi-label targets. */
static void test_folder_dtypes(void **state)
{
	const char *dir = make_folder("dtypes");
	double f8[5][3];
	uint16_t f2[5][3];
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 3; k++) {
			f8[i][k] = features[i][k];
			f2[i][k] = half_from_float((float)(i - 2 + k));
		}
	static const uint8_t u1_labels[] = {0, 2, 1, 2, 0};
	static const int32_t i4_labels[] = {4, 0, 0, 1, 0};
	struct gnn_dataset d;
	struct sp_err e;

	put_npy(dir, "features.npy", NPY_F8, 2, SHAPE(5, 3), f8);
	put_npy(dir, "labels.npy", NPY_U1, 1, SHAPE(5), u1_labels);
	put_npy(dir, "train_mask.npy", NPY_U1, 1, SHAPE(5), masks[0]);
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	assert_memory_equal(d.features, features, sizeof features);
	assert_int_equal(d.nclass, 3);
	assert_int_equal(d.labels[1], 2);
	expect_sample_split(&d);
	gnn_data_free(&d);

	put_npy(dir, "features.npy", NPY_F2, 2, SHAPE(5, 3), f2);
	put_npy(dir, "labels.npy", NPY_I4, 2, SHAPE(5, 1), i4_labels);
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 3; k++)
			assert_true(d.features[i * 3 + k] == (float)(i - 2 + k));
	assert_int_equal(d.nclass, 5);
	assert_int_equal(d.multilabel, 0);
	assert_int_equal(d.labels[0], 4);
	gnn_data_free(&d);

	static const uint8_t targets[5][4] = {
		{1, 0, 0, 1}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 0, 0}, {0, 0, 1, 0}};
	put_npy(dir, "labels.npy", NPY_BOOL, 2, SHAPE(5, 4), targets);
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(d.multilabel, 1);
	assert_int_equal(d.nclass, 4);
	assert_null(d.labels);
	for (int i = 0; i < 20; i++)
		assert_true(d.targets[i] == targets[i / 4][i % 4]);
	gnn_data_free(&d);
}

static void expect_load_fails(const char *dir, const char *file, const char *problem)
{
	struct gnn_dataset d;
	struct sp_err e;
	char path[700];
	/* file "": the message names the folder */
	snprintf(path, sizeof path, "%s%s%s", dir, file[0] ? "/" : ":", file);
	if (gnn_data_load(dir, &d, &e) == 0)
		fail_msg("%s loaded; expected \"%s\"", dir, problem);
	/* Emptied, nothing leaks (the sanitizer build checks). */
	assert_null(d.graph.indptr);
	assert_null(d.features);
	assert_null(d.labels);
	assert_null(d.split);
	assert_int_equal(d.n, 0);
	assert_int_equal(strncmp(e.msg, path, strlen(path)), 0);
	assert_msg_has(&e, problem, NULL);
	assert_null(strchr(e.msg, '\n'));
}

/* One file of the sample replaced (data NULL: removed). */
struct bad_file {
	const char *file;
	enum npy_dtype dt;
	int ndim;
	int64_t shape[2];
	const void *data;
	const char *problem;
};

static void test_folder_bad_files(void **state)
{
	static float nan_at_2_1[5][3], inf_at_4_2[5][3];
	nan_at_2_1[2][1] = NAN;
	inf_at_4_2[4][2] = -INFINITY;
	static const int64_t negative[] = {0, 2, -1, 2, 0}, huge[] = {0, 70000, 1, 0, 0};
	static const int32_t i4[15];
	static const uint8_t u1_two[5][2] = {{0, 1}, {1, 1}, {0, 0}, {0, 2}, {1, 0}};
	static const uint8_t val_overlap[] = {1, 0, 1, 0, 0}, none[5], three[] = {3, 1, 0, 0, 0};
	static const struct bad_file cases[] = {
		{"features.npy", NPY_F4, 2, {4, 3}, features, "4 rows, but the graph has 5 nodes"},
		{"features.npy", NPY_F4, 2, {5, 3}, nan_at_2_1, "features.npy: NaN at row 2 column 1"},
		{"features.npy", NPY_F4, 2, {5, 3}, inf_at_4_2, "features.npy: Inf at row 4 column 2"},
		{"features.npy", NPY_I4, 2, {5, 3}, i4, "dtype i4: expected f2, f4 or f8"},
		{"features.npy", NPY_F4, 1, {15}, features, "expected a 2-D array"},
		{"features.npy", NPY_F4, 0, {0}, NULL, "cannot open: No such file"},
		{"labels.npy", NPY_I8, 1, {5}, negative, "node 2 has label -1: expected a class id"},
		{"labels.npy", NPY_I8, 1, {5}, huge, "node 1 has label 70000"},
		{"labels.npy", NPY_F4, 1, {5}, features, "dtype f4: expected integer class ids"},
		{"labels.npy", NPY_I8, 1, {4}, labels, "4 rows, but the graph has 5 nodes"},
		{"labels.npy", NPY_I4, 2, {5, 3}, NULL, "cannot open"},
		{"labels.npy", NPY_U1, 2, {5, 2}, u1_two, "value 2 at row 3 column 1: multi-label"},
		{"train_mask.npy", NPY_I4, 1, {5}, i4, "dtype i4: expected a bool (or u1) mask"},
		{"train_mask.npy", NPY_BOOL, 1, {4}, masks[0], "4 rows, but the graph has 5 nodes"},
		{"train_mask.npy", NPY_BOOL, 2, {5, 1}, masks[0], "expected a 1-D mask, found 2-D"},
		{"train_mask.npy", NPY_U1, 1, {5}, three, "value 3 at row 0: a mask holds 0 or 1"},
		{"train_mask.npy", NPY_BOOL, 1, {5}, none, "no nodes: the training split is empty"},
		{"val_mask.npy", NPY_BOOL, 1, {5}, val_overlap, "node 0 is also in train_mask.npy"},
		{"test_mask.npy", NPY_BOOL, 1, {5}, none, "no nodes: the test split is empty"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char name[32], path[700];
		snprintf(name, sizeof name, "bad%zu", c);
		const char *dir = make_folder(name);
		const struct bad_file *b = &cases[c];
		snprintf(path, sizeof path, "%s/%s", dir, b->file);
		if (b->data)
			put_npy(dir, b->file, b->dt, b->ndim, b->shape, b->data);
		else
			assert_int_equal(unlink(path), 0);
		expect_load_fails(dir, b->file, b->problem);
	}
}

/* MaxK-GNN's graph.indptr + graph.indices (raw int32) for graph.npz, and
 * splits as index arrays (i4 or i8 node ids, in any order) for masks: the
 * same dataset as the sample. */
static void test_folder_raw_graph_and_index_splits(void **state)
{
	const char *dir = make_folder("raw_idx");
	char path[700];
	snprintf(path, sizeof path, "%s/graph.npz", dir);
	assert_int_equal(unlink(path), 0);
	int32_t indptr32[6];
	for (int i = 0; i < 6; i++)
		indptr32[i] = (int32_t)g_indptr[i];
	snprintf(path, sizeof path, "%s/graph.indptr", dir);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(indptr32, 4, 6, fp), 6);
	fclose(fp);
	snprintf(path, sizeof path, "%s/graph.indices", dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(g_indices, 4, 8, fp), 8);
	fclose(fp);
	for (int s = 0; s < 3; s++) {
		snprintf(path, sizeof path, "%s/%s", dir, mask_files[s]);
		assert_int_equal(unlink(path), 0);
	}
	static const int64_t train[] = {1, 0};
	static const int32_t val[] = {2}, test[] = {3};
	put_npy(dir, "train_idx.npy", NPY_I8, 1, SHAPE(2), train);
	put_npy(dir, "val_idx.npy", NPY_I4, 1, SHAPE(1), val);
	put_npy(dir, "test_idx.npy", NPY_I4, 1, SHAPE(1), test);
	struct gnn_dataset d;
	struct sp_err e;
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	assert_csr(&d.graph, 5, 5, 7, want_indptr, want_indices, NULL);
	expect_sample_split(&d);
	gnn_data_free(&d);

	/* a mask and an index array for one split; bad ids; a node twice */
	put_npy(dir, "val_mask.npy", NPY_BOOL, 1, SHAPE(5), masks[1]);
	expect_load_fails(dir, "", "both val_mask.npy and val_idx.npy: keep one");
	snprintf(path, sizeof path, "%s/val_mask.npy", dir);
	assert_int_equal(unlink(path), 0);
	static const int32_t out_of_range[] = {5}, twice[] = {3, 3}, in_train[] = {4, 0};
	static const float floats[] = {2};
	const struct {
		enum npy_dtype dt;
		int64_t n;
		const void *data;
		const char *problem;
	} cases[] = {
		{NPY_I4, 1, out_of_range, "node 5 at position 0, out of range for 5 nodes"},
		{NPY_I4, 2, twice, "node 3 listed twice"},
		{NPY_I4, 2, in_train, "node 0 is also in train_idx.npy"},
		{NPY_F4, 1, floats, "dtype f4: expected int node ids (i4 or i8)"},
		{NPY_I4, 0, twice, "no nodes: the test split is empty"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		put_npy(dir, "test_idx.npy", cases[c].dt, 1, SHAPE(cases[c].n), cases[c].data);
		expect_load_fails(dir, "test_idx.npy", cases[c].problem);
	}
	put_npy(dir, "test_idx.npy", NPY_I4, 1, SHAPE(1), test);
	snprintf(path, sizeof path, "%s/test_idx.npy", dir);
	assert_int_equal(unlink(path), 0);
	expect_load_fails(dir, "", "no test split: expected test_mask.npy (bool) or test_idx.npy");

	/* both graph forms */
	dir = make_folder("both_graphs");
	snprintf(path, sizeof path, "%s/graph.indptr", dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	fclose(fp);
	expect_load_fails(dir, "", "both graph.npz and graph.indptr: keep one");
}

static void test_folder_bad_graph(void **state)
{
	struct sp_err e;
	char path[700];
	const char *dir = make_folder("not_square");
	struct csr wide = sample_graph;
	wide.ncols = 6;
	snprintf(path, sizeof path, "%s/graph.npz", dir);
	assert_int_equal(csr_npz_save(path, &wide, 0, &e), 0);
	expect_load_fails(dir, "graph.npz", "the graph is 5 x 6, expected a square");

	dir = make_folder("no_nodes");
	struct csr empty = {0, 0, 0, (int64_t[]){0}, (int32_t[]){0}, NULL};
	snprintf(path, sizeof path, "%s/graph.npz", dir);
	assert_int_equal(csr_npz_save(path, &empty, 0, &e), 0);
	expect_load_fails(dir, "graph.npz", "empty graph (0 nodes)");

	dir = make_folder("no_graph");
	snprintf(path, sizeof path, "%s/graph.npz", dir);
	assert_int_equal(unlink(path), 0);
	expect_load_fails(dir, "", "no graph: expected graph.npz, or graph.indptr and graph.indices");
}

static void test_not_a_dataset(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	const char *empty = test_path("empty_folder");
	assert_int_equal(mkdir(empty, 0777), 0);
	assert_int_equal(gnn_data_load(empty, &d, &e), -1);
	assert_msg_has(&e, empty, ": not a dataset: expected graph.npz (or graph.indptr), features.npy",
		       "raw/edge.csv.gz", "split/NAME/{train,valid,test}.csv.gz", NULL);
	const char *absent = test_path("absent");
	assert_int_equal(gnn_data_load(absent, &d, &e), -1);
	assert_msg_has(&e, absent, ": cannot open the dataset folder: No such file", NULL);
	const char *file = test_write("a_file", "x");
	assert_int_equal(gnn_data_load(file, &d, &e), -1);
	assert_msg_has(&e, file, ": not a folder", NULL);
	assert_null(d.split);
}

/* ---- OGB's raw layout ---- */

/* The sample again, as OGB stores it: ogb_sample.h. */

/* Folder NAME with the sample's files, file `change` (an index into
 * ogb_sample, or -1) holding `text` instead, or missing if text is NULL. */
static const char *make_ogb(const char *name, int change, const char *text)
{
	static char dir[600];
	char sub[700];
	snprintf(dir, sizeof dir, "%s", test_path("%s", name));
	const char *subs[] = {"", "/raw", "/split", "/split/time"};
	for (int i = 0; i < 4; i++) {
		snprintf(sub, sizeof sub, "%s%s", dir, subs[i]);
		assert_int_equal(mkdir(sub, 0777), 0);
	}
	for (int f = 0; f < OGB_FILES; f++) {
		const char *t = f == change ? text : ogb_sample[f][1];
		snprintf(sub, sizeof sub, "%s/%s", name, ogb_sample[f][0]);
		if (t)
			test_write_gz(sub, t, strlen(t));
	}
	return dir;
}

static void expect_ogb_sample(const struct gnn_dataset *d)
{
	static const int64_t indptr[] = {0, 2, 3, 4, 6, 7};
	static const int32_t indices[] = {1, 3, 0, 2, 0, 4, 3};
	assert_int_equal(d->n, 5);
	assert_csr(&d->graph, 5, 5, 7, indptr, indices, NULL);
	assert_int_equal(d->nfeat, 2);
	for (int i = 0; i < 5; i++) {
		assert_true(d->features[2 * i] == (float)i + 0.5f);
		assert_true(d->features[2 * i + 1] == (i == 4 ? -500.0f : -(float)(i + 1)));
	}
	assert_int_equal(d->nclass, 4);
	static const int32_t want_labels[] = {0, 3, 1, 1, 2};
	assert_memory_equal(d->labels, want_labels, sizeof want_labels);
	expect_sample_split(d);
}

static void test_ogb(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	const char *dir = make_ogb("ogbn_sample", -1, NULL);
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(d.name, "ogbn_sample");
	expect_ogb_sample(&d);
	gnn_data_free(&d);

	/* Without num-node-list the features give the node count. */
	dir = make_ogb("no_count", 0, NULL);
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	expect_ogb_sample(&d);
	gnn_data_free(&d);

	/* Multi-label, as ogbn-proteins: a row of 0/1 a node. */
	dir = make_ogb("proteins", 3, "1,0,1\n0,0,0\n1,1,1\n0,1,0\n0,0,1\n");
	if (gnn_data_load(dir, &d, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(d.multilabel, 1);
	assert_int_equal(d.nclass, 3);
	assert_null(d.labels);
	static const float want[] = {1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1};
	assert_memory_equal(d.targets, want, sizeof want);
	gnn_data_free(&d);
}

static void test_ogb_bad_files(void **state)
{
	static const struct {
		int file; /* index into ogb_sample */
		const char *text; /* NULL: missing */
		const char *problem;
	} cases[] = {
		{1, NULL, ": missing (an OGB folder holds raw/edge.csv.gz"},
		{2, NULL, ": missing"},
		{3, NULL, ": missing"},
		{5, NULL, ": missing"},
		{1, "0,1\n4,7\n", ":2: field 2: node id 7 out of range for 5 nodes"},
		{1, "0,1\n4;3\n", ":2: "},
		{2, "0.5,-1\n1.5,-2\n2.5,nan\n3.5,-4\n4.5,-5\n", ":3: field 2: 'nan' is not a finite"},
		{2, "0.5,-1\n1.5\n2.5,-3\n3.5,-4\n4.5,-5\n", ":2: 1 fields, but line 1 has 2"},
		{2, "0.5,-1\n1.5,-2\n2.5,-3\n3.5,-4\n", ": 4 rows, but "},
		{2, "", ": empty file"},
		{3, "0\n3\n-1\n1\n2\n", ": node 2 has label -1: expected a class id"},
		{3, "0\n3\n1.5\n1\n2\n", ": node 2 has label 1.5"},
		{3, "0\n3\n1\n1\n", ": 4 rows, but the graph has 5 nodes"},
		{3, "0,1\n1,1\n0,0\n2,0\n1,1\n", ": value 2 at row 3 column 0: multi-label"},
		{0, "abc\n", ":1: field 1: expected a node count, found 'abc'"},
		{4, "0\n1\n0\n", ":3: node 0 listed twice"},
		{5, "2\n0\n", ":2: node 0 is also in "},
		{6, "3\n5\n", ":2: node 5 out of range for 5 nodes"},
		{6, "", ": no nodes: the test split is empty"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char name[32], want[300];
		snprintf(name, sizeof name, "ogb_bad%zu", c);
		const char *dir = make_ogb(name, cases[c].file, cases[c].text);
		snprintf(want, sizeof want, "%s%s", ogb_sample[cases[c].file][0], cases[c].problem);
		expect_load_fails(dir, ogb_sample[cases[c].file][0], want);
	}
}

static void test_ogb_bad_folders(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	char path[700];
	const char *dir = make_ogb("two_splits", -1, NULL);
	snprintf(path, sizeof path, "%s/split/other", dir);
	assert_int_equal(mkdir(path, 0777), 0);
	assert_int_equal(gnn_data_load(dir, &d, &e), -1);
	assert_msg_has(&e, "/split: holds more than one split (", "other", NULL);

	dir = make_ogb("no_split_folder", -1, NULL);
	snprintf(path, sizeof path, "rm -r %s/split/time", dir);
	assert_int_equal(system(path), 0);
	assert_int_equal(gnn_data_load(dir, &d, &e), -1);
	assert_msg_has(&e, "/split: no split folder inside (an OGB folder holds", NULL);

	/* A gzip stream cut short is an error, not a shorter file. */
	dir = make_ogb("cut", -1, NULL);
	char text[20000];
	size_t n = 0, size;
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 999; k++)
			n += (size_t)snprintf(text + n, sizeof text - n, k < 998 ? "%d," : "%d\n",
					      (i * 7919 + k * 104729) % 1000);
	const char *feat = test_write_gz("cut/raw/node-feat.csv.gz", text, n);
	unsigned char *gz = test_slurp(feat, &size);
	test_spit(feat, gz, size - 12);
	free(gz);
	expect_load_fails(dir, "raw/node-feat.csv.gz", "corrupt or truncated gzip data");

	/* Seen reading the code, then confirmed with fuzz_ogb: the features
	 * were allocated for num-node-list's count before any row was read
	 * (here 2^31 - 1 rows of 999 floats, 8 TiB: "out of memory", or a
	 * crash under ASan). */
	dir = make_ogb("huge_count", 0, "2147483647\n");
	test_write_gz("huge_count/raw/node-feat.csv.gz", text, n);
	expect_load_fails(dir, "raw/node-feat.csv.gz", "raw/node-feat.csv.gz: 5 rows, but ");
}

/* ---- self-loops ---- */

static void test_add_selfloops(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	if (gnn_data_load(make_folder("loops"), &d, &e))
		fail_msg("%s", e.msg);
	/* Rows 0 1 3 4 get theirs at the start, kept, in the middle and at
	 * the end; row 1 has one already; row 2 was empty. */
	static const int64_t indptr[] = {0, 3, 5, 6, 9, 11};
	static const int32_t indices[] = {0, 1, 3, 0, 1, 2, 0, 3, 4, 3, 4};
	for (int round = 0; round < 2; round++) {
		assert_int_equal(gnn_data_add_selfloops(&d, &e), 0);
		assert_csr(&d.graph, 5, 5, 11, indptr, indices, NULL);
	}
	gnn_data_free(&d);
}

/* ---- --synthetic ---- */

static int is_symmetric(const struct csr *g)
{
	struct csr t;
	struct sp_err e;
	assert_int_equal(csr_transpose(g, NULL, &t, &e), 0);
	int same = t.nnz == g->nnz &&
		   !memcmp(t.indptr, g->indptr, (size_t)(g->nrows + 1) * sizeof *g->indptr) &&
		   !memcmp(t.indices, g->indices, (size_t)g->nnz * sizeof *g->indices);
	csr_free(&t);
	return same;
}

static int same_data(const struct gnn_dataset *a, const struct gnn_dataset *b)
{
	return a->n == b->n && a->nfeat == b->nfeat && a->graph.nnz == b->graph.nnz &&
	       !memcmp(a->graph.indptr, b->graph.indptr, (size_t)(a->n + 1) * sizeof(int64_t)) &&
	       !memcmp(a->graph.indices, b->graph.indices, (size_t)a->graph.nnz * 4) &&
	       !memcmp(a->features, b->features, (size_t)(a->n * a->nfeat) * 4) &&
	       !memcmp(a->labels, b->labels, (size_t)a->n * 4) &&
	       !memcmp(a->split, b->split, (size_t)a->n);
}

/* Generate spec: it must work, give these sizes and a graph without
 * repeated edges, single-label. */
static void synthesize(const char *spec, struct gnn_dataset *d, const char *name, int64_t n,
		       int nfeat, int nclass)
{
	struct sp_err e;
	if (gnn_data_synthetic(spec, d, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(d->name, name);
	assert_int_equal(d->n, n);
	assert_int_equal(d->nfeat, nfeat);
	assert_int_equal(d->nclass, nclass);
	assert_int_equal(d->multilabel, 0);
	assert_int_equal(csr_validate(&d->graph, CSR_CHECK_UNIQUE, spec, &e), 0);
}

static void test_csbm_defaults(void **state)
{
	struct gnn_dataset d;
	synthesize("csbm", &d, "csbm", 3000, 32, 5);
	assert_true(is_symmetric(&d.graph));
	int64_t inside = 0, per_class[5] = {0};
	for (int64_t i = 0; i < d.n; i++) {
		assert_int_equal(d.labels[i], i % 5);
		per_class[d.labels[i]]++;
		for (int64_t j = d.graph.indptr[i]; j < d.graph.indptr[i + 1]; j++) {
			assert_int_not_equal(d.graph.indices[j], i);
			inside += d.labels[d.graph.indices[j]] == d.labels[i];
		}
	}
	for (int c = 0; c < 5; c++)
		assert_int_equal(per_class[c], 600);
	/* Mean degree 10 less the few repeats; 70% of edges inside a class. */
	double degree = (double)d.graph.nnz / (double)d.n, in = (double)inside / (double)d.graph.nnz;
	if (degree < 9.7 || degree > 10.0 || fabs(in - 0.7) > 0.02)
		fail_msg("mean degree %.3f, fraction inside %.3f", degree, in);
	assert_int_equal(gnn_data_count(&d, GNN_TRAIN), 1800);
	assert_int_equal(gnn_data_count(&d, GNN_VAL), 600);
	assert_int_equal(gnn_data_count(&d, GNN_TEST), 600);
	gnn_data_free(&d);
}

/* snr is the distance of each class mean from the origin in noise
 * deviations: the features' class averages sit there. */
static void test_csbm_options(void **state)
{
	struct gnn_dataset d;
	synthesize("csbm:nodes=4000,classes=4,feat=8,deg=6,p_in=1,snr=5,seed=3", &d, "csbm", 4000,
		   8, 4);
	double mean[4][8] = {{0}};
	for (int64_t i = 0; i < d.n; i++) {
		for (int k = 0; k < 8; k++)
			mean[d.labels[i]][k] += d.features[i * 8 + k] / 1000.0;
		for (int64_t j = d.graph.indptr[i]; j < d.graph.indptr[i + 1]; j++)
			assert_int_equal(d.labels[d.graph.indices[j]], d.labels[i]);
	}
	for (int c = 0; c < 4; c++) {
		double norm = 0;
		for (int k = 0; k < 8; k++)
			norm += mean[c][k] * mean[c][k];
		if (fabs(sqrt(norm) - 5) > 0.2)
			fail_msg("class %d's mean lies %.3f from the origin, expected 5", c, sqrt(norm));
	}
	gnn_data_free(&d);
}

static void test_synthetic_is_deterministic(void **state)
{
	static const char *const specs[][2] = {
		{"csbm:nodes=20000,seed=4", "csbm:nodes=20000,seed=5"},
		{"powerlaw:nodes=9000,edges=50000,feat=5", "powerlaw:nodes=9000,edges=50000,feat=5,seed=2"},
	};
	struct gnn_dataset a, b, c;
	struct sp_err e;
	for (int s = 0; s < 2; s++) {
		/* Several row and edge blocks, so threads share the work. */
		setenv("SPKIT_THREADS", "1", 1);
		if (gnn_data_synthetic(specs[s][0], &a, &e))
			fail_msg("%s", e.msg);
		setenv("SPKIT_THREADS", "3", 1);
		assert_int_equal(gnn_data_synthetic(specs[s][0], &b, &e), 0);
		assert_int_equal(gnn_data_synthetic(specs[s][1], &c, &e), 0);
		unsetenv("SPKIT_THREADS");
		assert_true(same_data(&a, &b));
		assert_false(same_data(&a, &c));
		assert_true(memcmp(a.features, c.features, 4 * 100) != 0);
		gnn_data_free(&a);
		gnn_data_free(&b);
		gnn_data_free(&c);
	}
}

/* The power-law path at a small size (reddit_like takes seconds, the same
 * code): features N(0, 1), labels uniform over the classes. */
static void test_powerlaw(void **state)
{
	struct gnn_dataset d;
	synthesize("powerlaw:nodes=2000,edges=30000,feat=9,classes=4,seed=3", &d, "powerlaw", 2000,
		   9, 4);
	assert_int_equal(d.graph.nnz, 30000);
	double sum = 0, sq = 0;
	for (int64_t i = 0; i < d.n * 9; i++) {
		sum += d.features[i];
		sq += (double)d.features[i] * d.features[i];
	}
	double mean = sum / 18000, var = sq / 18000 - mean * mean;
	if (fabs(mean) > 0.03 || fabs(var - 1) > 0.05)
		fail_msg("features: mean %.4f, variance %.4f", mean, var);
	int64_t per_class[4] = {0};
	for (int64_t i = 0; i < d.n; i++) {
		assert_in_range(d.labels[i], 0, 3);
		per_class[d.labels[i]]++;
	}
	for (int c = 0; c < 4; c++)
		assert_in_range(per_class[c], 400, 600);
	assert_int_equal(gnn_data_count(&d, GNN_TRAIN), 1200);
	assert_int_equal(gnn_data_count(&d, GNN_VAL), 400);
	assert_int_equal(gnn_data_count(&d, GNN_TEST), 400);
	gnn_data_free(&d);
}

static void test_synthetic_errors(void **state)
{
	static const char *const cases[][2] = {
		{"cora", "unknown dataset 'cora' (csbm, reddit_like"},
		{"csbm:nodes=9", "9 nodes are too few for 5 classes"},
		{"csbm:p_in=1.5", "p_in=1.5: expected a number in [0, 1]"},
		{"csbm:feat=1.5", "feat=1.5: expected an integer in [1, 1048576]"},
		{"csbm:classes=1", "classes=1: expected an integer in [2, 65536]"},
		{"csbm:colour=3", "unknown key 'colour' (csbm: nodes, classes"},
		{"csbm:deg", "'deg' is not key=value"},
		{"csbm:nodes=10,deg=20", "mean degree 20 exceeds the 9 other nodes"},
		{"reddit_like:feat=0", "feat=0: expected an integer in [1, 1048576]"},
		{"reddit_like:size=3", "unknown key 'size'"},
		{"powerlaw:nodes=5,edges=100", "do not fit"},
		{"powerlaw:nodes=2,edges=1", "2 nodes leave a split empty"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		struct gnn_dataset d;
		struct sp_err e;
		if (gnn_data_synthetic(cases[c][0], &d, &e) == 0)
			fail_msg("'%s' was accepted", cases[c][0]);
		assert_null(d.features);
		assert_null(d.graph.indptr);
		assert_int_equal(strncmp(e.msg, "--synthetic: ", 13), 0);
		assert_msg_has(&e, cases[c][1], NULL);
		/* The check alone finds the same, but an empty split, which only
		 * the random split shows. */
		if (strstr(cases[c][1], "split empty"))
			continue;
		if (gnn_data_synthetic_check(cases[c][0], &e) == 0)
			fail_msg("check: '%s' was accepted", cases[c][0]);
		assert_msg_has(&e, cases[c][1], NULL);
	}
	static const char *const good[] = {"csbm", "csbm:nodes=100,deg=3", "reddit_like",
					   "products_like:seed=3", "powerlaw:nodes=100,edges=500"};
	for (size_t c = 0; c < sizeof good / sizeof *good; c++) {
		struct sp_err e;
		if (gnn_data_synthetic_check(good[c], &e))
			fail_msg("check: '%s': %s", good[c], e.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folder),
		cmocka_unit_test(test_folder_dtypes),
		cmocka_unit_test(test_folder_bad_files),
		cmocka_unit_test(test_folder_raw_graph_and_index_splits),
		cmocka_unit_test(test_folder_bad_graph),
		cmocka_unit_test(test_not_a_dataset),
		cmocka_unit_test(test_ogb),
		cmocka_unit_test(test_ogb_bad_files),
		cmocka_unit_test(test_ogb_bad_folders),
		cmocka_unit_test(test_add_selfloops),
		cmocka_unit_test(test_csbm_defaults),
		cmocka_unit_test(test_csbm_options),
		cmocka_unit_test(test_synthetic_is_deterministic),
		cmocka_unit_test(test_powerlaw),
		cmocka_unit_test(test_synthetic_errors),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
