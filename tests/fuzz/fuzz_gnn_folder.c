/* libFuzzer target for the dataset folder's checks (gnn_data_load): a
 * folder of small valid files (graph.npz, features.npy, labels.npy and the
 * three masks), one .npy of which (chosen by the first byte) holds the rest
 * of the input instead, so every dtype, shape and value check of the
 * features, labels and masks meets odd arrays. The .npy and .npz readers
 * themselves have their own targets. What loads gets its self-loops; an
 * error has a message. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>

#include "sparse/csr_npz.h"
#include "fuzz_dataset.h"
#include "gnn/gnn_data.h"
#include "formats/npy.h"

/* tests/unit/test_gnn_data.c's sample: 5 nodes, 3 features, labels
 * 0 2 1 2 0, train {0, 1}, val {2}, test {3}. */
static int64_t g_indptr[] = {0, 3, 5, 5, 7, 8};
static int32_t g_indices[] = {3, 1, 1, 0, 1, 0, 4, 3};
static float features[5][3] = {{-1, 0, 1}, {-0.5f, 0.5f, 1.5f}, {0, 1, 2}, {0.5f, 1.5f, 2.5f},
			       {1, 2, 3}};
static int64_t labels[] = {0, 2, 1, 2, 0};
static uint8_t masks[3][5] = {{1, 1, 0, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 0, 1, 0}};

static const struct {
	const char *name;
	struct npy_array a;
} arrays[] = {
	{"features.npy", {NPY_F4, 4, 2, {5, 3}, features}},
	{"labels.npy", {NPY_I8, 8, 1, {5}, labels}},
	{"train_mask.npy", {NPY_BOOL, 1, 1, {5}, masks[0]}},
	{"val_mask.npy", {NPY_BOOL, 1, 1, {5}, masks[1]}},
	{"test_mask.npy", {NPY_BOOL, 1, 1, {5}, masks[2]}},
};
enum { NARRAYS = sizeof arrays / sizeof *arrays };

static void put_array(int i)
{
	char path[512];
	struct sp_err err;
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), arrays[i].name);
	if (npy_write(path, &arrays[i].a, &err))
		abort();
}

static void make_folder(void)
{
	const struct csr g = {5, 5, 8, g_indptr, g_indices, NULL};
	char path[512];
	struct sp_err err;
	snprintf(path, sizeof path, "%s/graph.npz", fuzz_dir());
	if (csr_npz_save(path, &g, 0, &err))
		abort();
	for (int i = 0; i < NARRAYS; i++)
		put_array(i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int made;
	if (!made++)
		make_folder();
	if (size == 0)
		return 0;
	int which = data[0] % NARRAYS;
	fuzz_put(arrays[which].name, data + 1, size - 1);
	fuzz_load_dataset();
	put_array(which);
	return 0;
}
