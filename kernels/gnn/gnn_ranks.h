/* Training on several ranks (maxk-train --gpus N, and one process a GPU
 * under srun or torchrun): this process runs `threads` ranks, one thread
 * each, ranks first_rank .. first_rank + threads - 1 of `world`. Each
 * thread takes its GPU (first_device + its index) and backend, its block
 * of the graph (gnn_part.h), a communicator (NCCL on the GPU; on the host,
 * gnn_comm_local, for one process only), its model and trainer, and runs
 * the epochs; the ranks meet in every layer (gnn_dist.h) and stop after
 * the same epoch.
 *
 * Rank 0 alone writes the checkpoint and the log and gets the hooks'
 * epoch_done and `finish`; every rank reads a checkpoint to resume from
 * (the weights are the same on all, so a checkpoint resumes on any
 * number of ranks). A rank that fails makes the others fail (at once in
 * this process, at the communicator's timeout in others); the error
 * returned is the first rank's that failed for a reason of its own. */
#ifndef SPKIT_GNN_RANKS_H
#define SPKIT_GNN_RANKS_H

#include <stdint.h>

#include "core/err.h"
#include "gnn/gnn_part.h"
#include "gnn/gnn_train.h"

struct gnn_ranks_opts {
	int threads, first_rank, world;
	int gpu;          /* the GPU backend, one device a rank; else the host */
	int first_device; /* the device of this process's first rank */
	int tf32;
	enum gnn_exchange exchange;
	double timeout_s;
	/* several processes: rank 0's NCCL id (gnn_comm_nccl.h), handed over
	 * by the caller; NULL: one process, the id made here */
	const unsigned char *nccl_id;
	const char *resume; /* checkpoint to resume from, or NULL */
	void *ctx;
	/* On rank 0, once every rank has joined (the caller may then remove
	 * its rendezvous file). */
	void (*joined)(void *ctx);
	/* On rank 0 after the last epoch (with the logits of the final weights
	 * in t->logits): the caller's outputs and report. Not called when the
	 * run stopped early. */
	void (*finish)(void *ctx, struct gnn_trainer *t);
};

/* What each rank of this process measured. */
struct gnn_rank_stats {
	int rank;
	int64_t epoch; /* the epochs done when the run ended (all ranks alike) */
	int64_t rows, halo_rows;
	double peak_mib;       /* the backend's peak memory */
	double sent_mb_epoch;  /* bytes sent an epoch (the mean over the epochs run) */
};

/* Returns 0 when done, 1 when stopped early (hooks->stop), -1 on error;
 * stats (threads entries) filled when not NULL. */
int gnn_ranks_train(const struct gnn_dataset *d, const struct gnn_model_config *cfg,
		    const struct gnn_train_opts *o, const struct gnn_ranks_opts *r,
		    const struct gnn_train_hooks *hooks, struct gnn_rank_stats *stats,
		    struct sp_err *err);

#endif
