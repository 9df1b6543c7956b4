#include "partition/roofline.h"

#include <string.h>

const char *roofline_class_name(enum roofline_class c)
{
	static const char *const names[ROOFLINE_NCLASSES] = {"none",         "compute_bound",
							     "memory_bound", "latency_bound",
							     "balanced",     "bandwidth_bound"};
	return names[c];
}

const char *const roofline_thresholds_names[ROOFLINE_NTHRESHOLDS + 1] = {
	[ROOFLINE_RIDGE] = "ridge", [ROOFLINE_FIXED] = "fixed", [ROOFLINE_NTHRESHOLDS] = NULL};

static enum roofline_class fixed_class(double intensity)
{
	return intensity > ROOFLINE_FIXED_COMPUTE    ? ROOFLINE_COMPUTE
	       : intensity > ROOFLINE_FIXED_BALANCED ? ROOFLINE_BALANCED
	       : intensity > ROOFLINE_FIXED_MEMORY   ? ROOFLINE_MEMORY
						     : ROOFLINE_BANDWIDTH;
}

void roofline_estimate(const struct hardware_spec *hw, enum hardware_dtype dtype,
		       enum roofline_thresholds th, const struct roofline_op *op,
		       struct roofline_estimate *e)
{
	memset(e, 0, sizeof *e);
	double peak = op->matrix ? hw->peak_flops[dtype] : hw->vector_flops;
	e->ridge = peak / hw->bandwidth;
	if (!op->kernel)
		return; /* ROOFLINE_NONE, no time */
	e->compute_s = (double)op->flops / peak;
	e->memory_s = (double)op->bytes / hw->bandwidth;
	double work = e->compute_s > e->memory_s ? e->compute_s : e->memory_s;
	e->time_s = work + hw->launch_s;
	double intensity = op->bytes ? (double)op->flops / (double)op->bytes : 0;
	if (th == ROOFLINE_FIXED)
		e->cls = fixed_class(intensity);
	else if (hw->launch_s > work)
		e->cls = ROOFLINE_LATENCY;
	else
		e->cls = intensity >= e->ridge ? ROOFLINE_COMPUTE : ROOFLINE_MEMORY;
}
