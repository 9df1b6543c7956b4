#include "sample/sample_gpu_clock.h"

#include <string.h>

#include "core/gpu.h"

/* The device kept busy this long ahead of each run's start event: longer
 * than the host takes to queue the event and the run's first launch. */
static double lead_us = 20;

static int event_time(void *ctx, sample_call_fn fn, void *state, double *us, struct sp_err *err)
{
	struct gpu_timing t;
	if (gpu_time_after(fn, state, 0, 1, gpu_spin, &lead_us, &t, err))
		return -1;
	*us = t.median_ms * 1000;
	return 0;
}

static int sync_device(void *ctx, struct sp_err *err)
{
	return gpu_sync(err);
}

int sample_gpu_clock(int device, struct sample_clock *c, struct sp_err *err)
{
	struct gpu_info info;
	memset(c, 0, sizeof *c);
	if (gpu_select(device, err) || gpu_query(device, &info, err))
		return -1;
	sample_device_name(info.name, c->device, sizeof c->device);
	c->time = event_time;
	c->sync = sync_device;
	c->range_push = gpu_range_push;
	c->range_pop = gpu_range_pop;
	return 0;
}
