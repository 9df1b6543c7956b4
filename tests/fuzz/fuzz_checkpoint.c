/* libFuzzer target for maxk-train's checkpoints (gnn_trainer_resume): the
 * input is the checkpoint's members, the raw .npy bytes of state, config,
 * best, params, adam_m1, adam_m2 and log in that order, separated by
 * SEPARATOR (an empty one leaves the member out), stored into an .npz
 * here (so the CRCs hold and the fuzzer reaches past the ZIP layer, which
 * fuzz_npz covers). A tiny CPU model (csbm, one SAGE layer with MaxK)
 * resumes from it, then trains to its last epoch and writes its log:
 * every bad checkpoint must be a clean error, never a crash, a leak or
 * undefined behaviour. The seeds are this setup's checkpoints
 * after 1, 2 and 3 epochs (gnn_trainer_checkpoint), split the same way. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>

#include "gnn/gnn_train.h"
#include "formats/zipfile.h"

#define SEPARATOR "@@@@"

static const char *const members[] = {"state", "config", "best", "params", "adam_m1", "adam_m2",
				      "log"};
enum { NMEMBERS = sizeof members / sizeof *members };

static const struct gnn_model_config cfg = {
	.conv = GNN_SAGE, .nonlinear = GNN_MAXK, .layers = 1, .hidden = 4, .maxk = 2,
	.dropout = 0.5f, .seed = 1,
};
static const struct gnn_train_opts opts = {
	.epochs = 3, .eval_every = 1, .checkpoint_every = 1, .lr = 0.01f,
	.metric = GNN_ACCURACY,
};

static struct gnn_dataset data;
static struct gnn_backend *backend;
static struct gnn_model *model;

static void setup(void)
{
	struct sp_err err;
	if (gnn_data_synthetic("csbm:nodes=50,classes=3,feat=4,deg=4", &data, &err) ||
	    gnn_cpu_backend(&backend, &err) || gnn_model_create(backend, &data, &cfg, &model, &err))
		abort();
}

/* The members of data[0, size) into an .npz at path. */
static void write_checkpoint(const char *path, const uint8_t *data_, size_t size)
{
	struct zip_writer w;
	struct sp_err err;
	const uint8_t *p = data_, *end = data_ + size;
	if (zip_writer_open(&w, path, &err))
		abort();
	for (int i = 0; i < NMEMBERS && p <= end; i++) {
		const uint8_t *next = memmem(p, (size_t)(end - p), SEPARATOR, strlen(SEPARATOR));
		size_t n = next ? (size_t)(next - p) : (size_t)(end - p);
		char name[32];
		snprintf(name, sizeof name, "%s.npy", members[i]);
		if (n && (zip_writer_begin(&w, name, 0, &err) || zip_writer_write(&w, p, n, &err) ||
			  zip_writer_end(&w, &err)))
			abort();
		p = next ? next + strlen(SEPARATOR) : end + 1;
	}
	if (zip_writer_commit(&w, &err))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data_, size_t size)
{
	static char path[512], log[512];
	if (!model) {
		setup();
		snprintf(path, sizeof path, "%s/checkpoint.npz", fuzz_dir());
		snprintf(log, sizeof log, "%s/log.csv", fuzz_dir());
	}
	write_checkpoint(path, data_, size);
	struct gnn_trainer t;
	struct sp_err err;
	double f, b, e;
	if (gnn_trainer_init(&t, model, &data, &opts, &err))
		abort();
	if (gnn_trainer_resume(&t, path, &err) || gnn_train_run(&t, NULL, &err) ||
	    gnn_trainer_write_log(&t, log, &err))
		fuzz_check_message(err.msg);
	else
		gnn_trainer_mean_times(&t, &f, &b, &e);
	gnn_trainer_free(&t);
	return 0;
}
