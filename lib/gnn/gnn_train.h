/* Full-graph training of a gnn_model: epochs of forward, loss, backward
 * and one Adam step; evaluation without dropout every eval_every epochs
 * (and after the last), scored on the host (gnn_metrics.h); the test score
 * at the best validation score; a per-epoch log; checkpoints to resume
 * from.
 *
 * Inside an epoch nothing leaves the backend but the scalar loss. Epoch e
 * (counted from 1) draws its dropout masks from (seed, e, layer) alone and
 * takes Adam step e, so a run resumed from a checkpoint repeats exactly
 * what the uninterrupted run would have done: on the CPU backend the final
 * weights, metrics and log (timing columns aside) are the same bit for bit.
 *
 * A checkpoint is an .npz (written atomically) holding the parameters, the
 * Adam moments, the epoch, the best-validation bookkeeping, the log so far
 * and the settings that must not change on resume (model shape, dataset
 * size, seed, dropout, learning rate, weight decay, metric, evaluation
 * interval), so resuming with other settings is an error that names them. */
#ifndef SPKIT_GNN_TRAIN_H
#define SPKIT_GNN_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "gnn/gnn_data.h"
#include "gnn/gnn_metrics.h"
#include "gnn/gnn_model.h"

struct gnn_train_opts {
	int64_t epochs;           /* the run ends after this epoch */
	int64_t eval_every;       /* evaluate after every this many epochs */
	int64_t checkpoint_every; /* with checkpoint: write after every this many */
	float lr, weight_decay;
	enum gnn_metric metric;
	const char *checkpoint;   /* path, or NULL */
	const char *log;          /* CSV path, or NULL */
};

/* One epoch of the log. Scores are NaN in epochs without evaluation. */
struct gnn_epoch {
	int64_t epoch;
	double loss, train, val, test;
	double forward_ms, backward_ms, epoch_ms;
};

struct gnn_trainer {
	struct gnn_model *m;
	const struct gnn_dataset *d;
	struct gnn_train_opts o;
	int64_t epoch;      /* epochs done */
	int64_t best_epoch; /* 0 until the first evaluation */
	double best_train, best_val, best_test;
	struct gnn_epoch *log; /* epoch rows */
	size_t cap_log;
	float *logits;        /* host, n x classes: the last evaluation's */
	int64_t logits_epoch; /* which epoch's weights gave them; -1: none */
};

int gnn_trainer_init(struct gnn_trainer *t, struct gnn_model *m, const struct gnn_dataset *d,
		     const struct gnn_train_opts *o, struct sp_err *err);
void gnn_trainer_free(struct gnn_trainer *t);

/* Continue from a checkpoint written with the same settings. */
int gnn_trainer_resume(struct gnn_trainer *t, const char *path, struct sp_err *err);
int gnn_trainer_checkpoint(const struct gnn_trainer *t, const char *path, struct sp_err *err);

/* One epoch (the next), evaluated when due; appends its log row. Fails if
 * the loss is not finite. */
int gnn_trainer_epoch(struct gnn_trainer *t, struct sp_err *err);
/* Scores of the current weights (into t->logits). */
int gnn_trainer_evaluate(struct gnn_trainer *t, double *train, double *val, double *test,
			 struct sp_err *err);
/* The log as CSV: epoch,loss,train,val,test,forward_ms,backward_ms,epoch_ms
 * (empty scores in epochs without evaluation), written whole to path. */
int gnn_trainer_write_log(const struct gnn_trainer *t, const char *path, struct sp_err *err);
/* The same to o.log ("-": standard output) as a stream (csv_writer.h): the
 * rows so far now, each later one as it is logged. */
struct csv_writer;
int gnn_trainer_log_open(const struct gnn_trainer *t, struct csv_writer *w, struct sp_err *err);
/* Mean forward, backward and whole-epoch times in ms over the logged
 * epochs, the first left out when there are others (it pays for warm-up). */
void gnn_trainer_mean_times(const struct gnn_trainer *t, double *forward, double *backward,
			    double *epoch);

struct gnn_train_hooks {
	void *ctx;
	/* After each epoch, its row (t->log[t->epoch - 1]). */
	void (*epoch_done)(void *ctx, const struct gnn_trainer *t, const struct gnn_epoch *row);
	/* Polled after each epoch: nonzero stops the run there. */
	int (*stop)(void *ctx);
};

/* Epochs until o->epochs, writing the checkpoint every checkpoint_every
 * epochs, after the last and when stopped, and the log (o.log) a row as
 * each epoch ends, so it can be followed (tail -f) and a killed run keeps
 * its rows. Returns 0 when done, 1 when stopped early (the checkpoint, if
 * any, written), -1 on error. hooks may be NULL. */
int gnn_train_run(struct gnn_trainer *t, const struct gnn_train_hooks *hooks,
		  struct sp_err *err);

#endif
