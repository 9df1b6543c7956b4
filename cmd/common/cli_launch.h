/* Who this process is in a launch of several processes, one a GPU (srun,
 * torchrun), from the environment the launcher sets. The CLI layer reads
 * it; the library is handed the numbers.
 *
 * Precedence:
 *   1. torchrun: RANK and WORLD_SIZE both set (LOCAL_RANK then required).
 *      torchrun inside a SLURM allocation sets them, and they describe its
 *      processes, where SLURM's describe the srun tasks that started it.
 *      Run id: TORCHELASTIC_RUN_ID, unless unset or "none".
 *   2. SLURM: SLURM_PROCID set with SLURM_STEP_NUM_TASKS (what srun sets:
 *      the tasks of this step) or SLURM_NTASKS; SLURM_LOCALID the local
 *      rank (0 when unset). Run id: SLURM_JOB_ID.SLURM_STEP_ID (the job id
 *      alone without a step id).
 *   3. Otherwise a single process: rank 0 of 1, local rank 0, no run id.
 * A value that is not an integer in range (0 <= rank < size, local rank
 * >= 0) is an error naming the variable, not a silent single process. */
#ifndef SPKIT_CLI_LAUNCH_H
#define SPKIT_CLI_LAUNCH_H

#include "core/err.h"

struct cli_launch {
	int rank, size, local_rank; /* 0, 1, 0 for a single process */
	const char *source;	    /* "SLURM", "torchrun" or NULL */
	char run_id[128];	    /* see above; empty when there is none */
};

/* The launch from the environment; -1 with err naming the variable. */
int cli_launch_parse(struct cli_launch *l, struct sp_err *err);
/* cli_launch_parse, a bad value a usage error (exit 2). */
void cli_launch_read(struct cli_launch *l);

#endif
