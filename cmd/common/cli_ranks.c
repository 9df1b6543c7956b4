/* Ranks, GPUs and the rendezvous (cli_ranks.h). */
#include "common/cli_ranks.h"

#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "common/cli_launch.h"
#include "core/gpu.h"
#include "gnn/gnn_comm_nccl.h"

/* The ranks' GPUs exist and are of one kind: the row blocks are balanced
 * for equal GPUs, and a slower one would hold every other back. */
static void check_gpus(const struct cli_ranks *r)
{
	struct sp_err err;
	const int have = gpu_count();
	if (r->first_device + r->threads > have)
		cli_die("--gpus %d: this process sees %d GPU%s%s (from cuda:%d, it needs %d)",
			r->threads, have, sp_plural(have),
			have ? "" : " (no usable CUDA device)", r->first_device,
			r->first_device + r->threads);
	struct gpu_info first, other;
	if (gpu_query(r->first_device, &first, &err))
		cli_fatal(&err);
	for (int i = 1; i < r->threads; i++) {
		if (gpu_query(r->first_device + i, &other, &err))
			cli_fatal(&err);
		if (strcmp(first.name, other.name) || first.mem_bytes != other.mem_bytes)
			cli_die("--gpus %d: the GPUs differ (cuda:%d is %s, cuda:%d is %s); the "
				"ranks need GPUs of one kind", r->threads, r->first_device,
				first.name, r->first_device + i, other.name);
	}
}

void cli_ranks_plan(struct cli_ranks *r, int per_process, int gpu, const char *dir,
		    const char *run_id)
{
	struct cli_launch l;
	cli_launch_read(&l);
	memset(r, 0, sizeof *r);
	r->gpu = gpu;
	r->processes = l.size;
	r->process = l.rank;
	r->threads = per_process ? per_process : 1;
	r->world = l.size * r->threads;
	r->first_rank = l.rank * r->threads;
	r->first_device = cli_device_index();
	if (l.size == 1) {
		if (dir || run_id)
			cli_usage_error("%s is for several processes (srun, torchrun); one process "
					"runs its --gpus ranks itself", dir ? "--rendezvous" : "--run-id");
	} else {
		if (!gpu)
			cli_usage_error("%d processes (%s): ranks on the host run in one process; "
					"several processes need --device cuda", l.size, l.source);
		if (!dir)
			cli_usage_error("%d processes (%s) need --rendezvous DIR, a folder all "
					"of them see", l.size, l.source);
		const char *id = run_id ? run_id : l.run_id;
		if (!id[0])
			cli_usage_error("%d processes (%s) and no job id in the environment: give "
					"--run-id ID, the same for all and new for each run", l.size,
					l.source);
		struct sp_err err;
		if (rendezvous_check_run_id(id, &err))
			cli_usage_error("--run-id: %s", err.msg);
		snprintf(r->run_id, sizeof r->run_id, "%s", id);
		r->dir = dir;
		/* a process that sees exactly its own GPUs numbers them from 0 */
		if (gpu_count() != r->threads)
			r->first_device = l.local_rank * r->threads;
	}
	if (gpu)
		check_gpus(r);
}

void cli_ranks_rendezvous(struct cli_ranks *r, double timeout_s)
{
	struct sp_err err;
	if (r->processes == 1)
		return;
	if (r->process == 0) {
		if (gnn_nccl_unique_id(r->id, &err) ||
		    rendezvous_publish(r->dir, r->run_id, r->world, r->id, sizeof r->id, &err))
			cli_fatal(&err);
	} else if (rendezvous_wait(r->dir, r->run_id, r->world, r->id, sizeof r->id, timeout_s,
				   &err)) {
		cli_fatal(&err);
	}
	r->have_id = 1;
}

void cli_ranks_joined(const struct cli_ranks *r)
{
	struct sp_err err;
	if (r->processes > 1 && r->process == 0 && rendezvous_remove(r->dir, r->run_id, &err))
		cli_warn("%s", err.msg);
}
