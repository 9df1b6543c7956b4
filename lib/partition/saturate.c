#include "partition/saturate.h"

void saturate_split(const struct partition_report *r, double *work_s, double *overhead_s)
{
	*overhead_s = (double)r->kernels * r->o->hw.launch_s;
	*work_s = r->roofline_time_s - *overhead_s;
}

/* Whether the model is latency-bound at batch b: into *bound. */
static int latency_bound(const char *path, const struct partition_options *o, int64_t b,
			 int *bound, struct sp_err *err)
{
	struct partition_options at = *o;
	struct partition_report r = {0};
	at.si.batch = b;
	int rc = partition_load(path, &r.g, err) || partition_analyse(&r, &at, err) ? -1 : 0;
	if (!rc) {
		double work, overhead;
		saturate_split(&r, &work, &overhead);
		*bound = overhead > work;
	}
	partition_free(&r);
	return rc;
}

int saturate_batch(const char *path, const struct partition_options *o, int64_t *batch,
		   struct sp_err *err)
{
	int bound;
	int64_t lo = 0, hi = 1; /* latency-bound at lo (0: not tried), not at hi */
	for (;;) {
		if (latency_bound(path, o, hi, &bound, err))
			return -1;
		if (!bound)
			break;
		if (hi == SATURATE_MAX_BATCH) {
			*batch = 0;
			return 0;
		}
		lo = hi;
		hi *= 2;
	}
	while (lo && hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		if (latency_bound(path, o, mid, &bound, err))
			return -1;
		*(bound ? &lo : &hi) = mid;
	}
	*batch = hi;
	return 0;
}
