// What the probes share: device 0 with its copy bandwidth, and the end of
// every probe's main (a failed run's message after the probe's name on
// stderr, and exit status 1).
#ifndef SPKIT_PROBE_H
#define SPKIT_PROBE_H

#include <cstdio>

extern "C" {
#include "core/err.h"
}
#include "core/gpu.h"

// Device 0's properties and its copy bandwidth, the "% of copy" divisor, as
// the benchmarks measure it (20 copies of GPU_COPY_BANDWIDTH_BYTES).
static inline int probe_device(struct gpu_info *info, double *copy_gbs, struct sp_err *err)
{
	return gpu_query(0, info, err) || gpu_copy_bandwidth(0, 20, copy_gbs, err) ? -1 : 0;
}

static inline int probe_exit(const char *name, int failed, const struct sp_err *err)
{
	if (!failed)
		return 0;
	std::fprintf(stderr, "%s: %s\n", name, err->msg);
	return 1;
}

#endif
