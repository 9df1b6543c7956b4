/* Who runs which ranks of a partitioned training run, on which GPUs, and
 * NCCL's id handed between processes: maxk-train's --gpus, --rendezvous,
 * --run-id and --comm-timeout over the launch environment (cli_launch.h).
 *
 *   one process:   --gpus N: ranks 0..N-1 as threads, on cuda:D..D+N-1
 *                  (D from --device cuda:D, else 0); the id made in the
 *                  process, no rendezvous.
 *   several (srun, torchrun): each process runs --gpus G ranks (default
 *                  1), ranks rank x G .. rank x G + G - 1 of size x G, on
 *                  its local GPUs local_rank x G .. (or from cuda:0 when
 *                  it sees only G, as with srun --gpus-per-task or
 *                  CUDA_VISIBLE_DEVICES per task); the id through a file
 *                  in --rendezvous DIR, named by --run-id or the
 *                  launcher's job id.
 * Every failure here exits: a usage error (2) for options that do not
 * fit, one line naming the problem (1) otherwise. */
#ifndef SPKIT_CLI_RANKS_H
#define SPKIT_CLI_RANKS_H

#include "core/rendezvous.h"
#include "gnn/gnn_nccl_api.h"

struct cli_ranks {
	int threads, first_rank, world, first_device;
	int gpu;
	int processes, process; /* the launch's */
	const char *dir;
	char run_id[RENDEZVOUS_RUN_ID_MAX + 1];
	unsigned char id[GNN_NCCL_ID_BYTES];
	int have_id; /* several processes: the id is in id[] */
};

/* per_process: --gpus (0 when not given); gpu: the ranks run on GPUs;
 * dir, run_id: --rendezvous and --run-id (NULL when not given). */
void cli_ranks_plan(struct cli_ranks *r, int per_process, int gpu, const char *dir,
		    const char *run_id);
/* Several processes: rank 0's makes the id and publishes it, the others
 * wait for it at most timeout_s. Nothing for one process. */
void cli_ranks_rendezvous(struct cli_ranks *r, double timeout_s);
/* Rank 0, once every rank has joined or the run failed: the rendezvous
 * file goes (nothing in other processes). */
void cli_ranks_joined(const struct cli_ranks *r);

#endif
