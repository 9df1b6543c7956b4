/* libFuzzer target for kernel-sample's timing models (sample_model.h): the
 * input as a model file. Properties: no crash, leak or hang; every error
 * names the file; a model that loads predicts a positive or zero
 * (underflowed) time, never NaN, at shapes of its columns, walking trees
 * whose children all come after their parents; and written back and read
 * again, it predicts the same. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "sample/sample_model.h"

#define NAME "fuzz.model"

static void check_predictions(const struct sample_model *m, const struct sample_model *again)
{
	static const int64_t values[] = {1, 2, 3, 64, 1000, 4096};
	int64_t shape[SAMPLE_MAX_DIMS];
	struct sp_err err;
	for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
		for (int c = 0; c < m->ncols; c++)
			shape[c] = values[(v + (size_t)c) % (sizeof values / sizeof *values)];
		double us, us2;
		if (sample_model_predict(m, shape, &us, &err)) {
			if (!err.msg[0])
				abort();
			continue; /* a shape the operator refuses */
		}
		if (isnan(us) || us < 0)
			abort();
		if (again && (sample_model_predict(again, shape, &us2, &err) || us != us2))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_model m, again;
	struct sp_err err;
	if (sample_model_read_buffer(data, size, NAME, &m, &err)) {
		if (strncmp(err.msg, NAME, strlen(NAME)))
			abort();
		return 0;
	}
	for (int t = 0; t < m.gbt.ntrees; t++)
		for (int i = 0; i < m.gbt.trees[t].n; i++) {
			const struct gbt_node *nd = &m.gbt.trees[t].nodes[i];
			if (nd->feature >= 0 && (nd->left <= i || nd->right <= i ||
						 nd->left >= m.gbt.trees[t].n ||
						 nd->right >= m.gbt.trees[t].n || nd->feature >= m.feat.n))
				abort();
		}
	/* written out and read back: the same model */
	char path[] = "/tmp/spkit_fuzz_model.XXXXXX";
	int fd = mkstemp(path);
	const struct sample_model *list[1] = {&m};
	const char *paths[1] = {path};
	int saved = fd >= 0 && !sample_model_save(list, paths, 1, &err);
	if (saved && sample_model_read(path, &again, &err))
		abort();
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	check_predictions(&m, saved ? &again : NULL);
	if (saved)
		sample_model_free(&again);
	sample_model_free(&m);
	return 0;
}
