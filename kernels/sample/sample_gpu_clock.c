#include "sample/sample_gpu_clock.h"

#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"

/* ctx: the clock's struct gpu_l2_flusher */
static int event_time(void *ctx, sample_call_fn fn, void *state, double *us, struct sp_err *err)
{
	struct gpu_timing t;
	if (gpu_time_flushing(fn, state, 0, 1, ctx, &t, err))
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
	struct gpu_l2_flusher *flusher = malloc(sizeof *flusher);
	if (!flusher)
		return sp_fail(err, "out of memory for the L2 flusher");
	if (gpu_l2_flusher_init(flusher, err)) {
		free(flusher);
		return -1;
	}
	c->ctx = flusher;
	c->time = event_time;
	c->sync = sync_device;
	c->range_push = gpu_range_push;
	c->range_pop = gpu_range_pop;
	return 0;
}

void sample_gpu_clock_free(struct sample_clock *c)
{
	if (c->time != event_time)
		return;
	gpu_l2_flusher_free(c->ctx);
	free(c->ctx);
	c->ctx = NULL;
}
