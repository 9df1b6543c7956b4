/* The launch from the environment: see cli_launch.h. */
#include "common/cli_launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"

/* An environment integer in [min, max]: 1 read, 0 unset (or empty), -1 bad. */
static int env_int(const char *name, long min, long max, int *out, struct sp_err *err)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	char *end, shown[64];
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno || v < min || v > max)
		return sp_fail(err, "%s='%s': not an integer in %ld..%ld", name,
			       sp_clip(shown, sizeof shown, s), min, max);
	*out = (int)v;
	return 1;
}

/* rank, size and local rank from three variables, size first. */
static int read_ranks(struct cli_launch *l, const char *rank, const char *size,
		      const char *local, int local_required, struct sp_err *err)
{
	if (env_int(size, 1, INT_MAX, &l->size, err) < 0 ||
	    env_int(rank, 0, l->size - 1, &l->rank, err) < 0)
		return -1;
	int got = env_int(local, 0, INT_MAX, &l->local_rank, err);
	if (got < 0)
		return -1;
	if (!got && local_required)
		return sp_fail(err, "%s: not set, where %s and %s are (torchrun sets all three)",
			       local, rank, size);
	return 0;
}

static int set(const char *name)
{
	const char *s = getenv(name);
	return s && *s;
}

int cli_launch_parse(struct cli_launch *l, struct sp_err *err)
{
	memset(l, 0, sizeof *l);
	l->size = 1;
	if (set("RANK") && set("WORLD_SIZE")) {
		l->source = "torchrun";
		if (read_ranks(l, "RANK", "WORLD_SIZE", "LOCAL_RANK", 1, err))
			return -1;
		const char *id = getenv("TORCHELASTIC_RUN_ID");
		if (id && *id && strcmp(id, "none"))
			snprintf(l->run_id, sizeof l->run_id, "%s", id);
		return 0;
	}
	const char *tasks = set("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
	if (set("SLURM_PROCID") && set(tasks)) {
		l->source = "SLURM";
		if (read_ranks(l, "SLURM_PROCID", tasks, "SLURM_LOCALID", 0, err))
			return -1;
		const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
		if (job && *job)
			snprintf(l->run_id, sizeof l->run_id, "%s%s%s", job,
				 step && *step ? "." : "", step && *step ? step : "");
	}
	return 0;
}

void cli_launch_read(struct cli_launch *l)
{
	struct sp_err err;
	if (cli_launch_parse(l, &err))
		cli_usage_error("%s", err.msg);
}
