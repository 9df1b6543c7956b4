#include "partition/roofline.h"

#include <string.h>

const char *rl_class_name(enum rl_class c)
{
	static const char *const names[RL_NCLASSES] = {"none", "compute_bound", "memory_bound",
						       "latency_bound", "balanced",
						       "bandwidth_bound"};
	return names[c];
}

static enum rl_class seed_class(double intensity)
{
	return intensity > RL_SEED_COMPUTE    ? RL_COMPUTE
	       : intensity > RL_SEED_BALANCED ? RL_BALANCED
	       : intensity > RL_SEED_MEMORY   ? RL_MEMORY
					      : RL_BANDWIDTH;
}

void rl_estimate(const struct hw_spec *hw, enum hw_dtype dtype, enum rl_thresholds th,
		 const struct rl_op *op, struct rl_estimate *e)
{
	memset(e, 0, sizeof *e);
	double peak = op->matrix ? hw->peak_flops[dtype] : hw->vector_flops;
	e->ridge = peak / hw->bandwidth;
	if (!op->kernel)
		return; /* RL_NONE, no time */
	e->compute_s = (double)op->flops / peak;
	e->memory_s = (double)op->bytes / hw->bandwidth;
	double work = e->compute_s > e->memory_s ? e->compute_s : e->memory_s;
	e->time_s = work + hw->launch_s;
	double intensity = op->bytes ? (double)op->flops / (double)op->bytes : 0;
	if (th == RL_SEED)
		e->cls = seed_class(intensity);
	else if (hw->launch_s > work)
		e->cls = RL_LATENCY;
	else
		e->cls = intensity >= e->ridge ? RL_COMPUTE : RL_MEMORY;
}
