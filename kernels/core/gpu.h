/* The GPU helper layer, as plain C: device discovery and --device, device
 * memory with sizes in its messages, event timing with warm-up, medians and
 * an L2 flush, the copy-bandwidth ceiling, and NVTX ranges.
 *
 * kernels/gpu.cu implements it with the CUDA runtime; lib/gpu_none.c is the
 * same API for builds without nvcc (no device, every call an error);
 * lib/gpu_device.c holds the policy both share (gpu_count, gpu_resolve).
 * Functions that can fail return 0 or -1 and fill a struct sp_err; none
 * prints or exits. Work is enqueued on the default stream (0). */
#ifndef SPKIT_GPU_H
#define SPKIT_GPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/err.h"

/* Devices this build can run on (compute capability at least the lowest
 * CUDA_ARCH it was compiled for); 0 when there is no driver, no device or
 * none new enough, and then `why` (may be NULL) says which. Never prints. */
int gpu_probe(struct sp_err *why);
/* gpu_probe(NULL). */
int gpu_count(void);

struct gpu_info {
	char name[256];
	int major, minor, sms;
	size_t l2_bytes, mem_bytes, smem_optin; /* smem_optin: per block, after opting in */
	double peak_bw_gbs; /* 2 x memory clock x bus width, 0 when the driver does not say */
	int driver_version, runtime_version; /* 13000 = 13.0 */
};
int gpu_query(int device, struct gpu_info *info, struct sp_err *err);
/* Make `device` current for this thread (creating its context), after
 * checking that it exists and that this build has code for it. */
int gpu_select(int device, struct sp_err *err);

/* Device memory. Messages name the size and what it was for:
 * "cudaMalloc(68719476736 bytes) for 'features': out of memory (...)". */
int gpu_malloc(void **p, size_t n, const char *what, struct sp_err *err);
void gpu_free(void *p); /* NULL is fine */
int gpu_upload(void *dst, const void *src, size_t n, struct sp_err *err);   /* synchronous */
int gpu_download(void *dst, const void *src, size_t n, struct sp_err *err); /* synchronous */
/* Wait for all enqueued work; a fault inside a kernel is reported here. */
int gpu_sync(struct sp_err *err);
/* After a failed launch or copy: 1 when the device still works (the error
 * was the call's own and is now cleared), 0 when the context is broken for
 * good (an illegal address or a kernel fault sticks to every later call),
 * so that a sweep stops instead of recording every later row as failed. */
int gpu_context_usable(void);

/* A job for gpu_time: enqueue work, check its own launches, return 0 or -1. */
typedef int (*gpu_enqueue_fn)(void *ctx, struct sp_err *err);

/* The device-to-device copy of `bytes` as a gpu_time job (ctx is a struct
 * gpu_copy_job): the baseline memory-bound benchmarks run beside their kernels. */
struct gpu_copy_job {
	void *dst;
	const void *src;
	size_t bytes;
};
int gpu_copy_enqueue(void *job, struct sp_err *err);

/* Inputs smaller than the L2 cache (60 MB on an H200) stay in it from one
 * timed repetition to the next, so without a flush a benchmark measures the
 * cache, not device memory. The flusher reads a buffer of twice the L2 size
 * (read, not written: it leaves clean lines, so the timed work does not pay
 * for writing back someone else's dirty data). */
struct gpu_l2_flusher {
	void *buf;
	size_t bytes;
	int blocks;
};
int gpu_l2_flusher_init(struct gpu_l2_flusher *f, struct sp_err *err);
/* Enqueues the flush; `flusher` is a struct gpu_l2_flusher (a gpu_enqueue_fn). */
int gpu_l2_flusher_run(void *flusher, struct sp_err *err);
void gpu_l2_flusher_free(struct gpu_l2_flusher *f);

struct gpu_timing {
	int reps;
	double median_ms, min_ms, max_ms, mean_ms;
};
/* Run `enqueue` warmup times, then reps more, each between its own pair of
 * events, with the L2 flushed before each timed repetition (outside the
 * events) when flush_l2. The repetitions are queued back to back and
 * synchronized once, so host-side launch gaps stay out of the times. First
 * it waits out the device's slow spell after gpu_free gave back memory
 * (about 5 ms after 2 GB; gpu.cu says what was measured). */
int gpu_time(gpu_enqueue_fn enqueue, void *ctx, int warmup, int reps, int flush_l2,
	     struct gpu_timing *out, struct sp_err *err);
/* gpu_time with `before(before_ctx)` enqueued ahead of each timed
 * repetition, outside its events (NULL: nothing): gpu_l2_flusher_run, or
 * gpu_spin for callers that time one repetition at a time, whose start
 * event an idle device would record as soon as it is queued, timing the
 * host's launch of the work with the work. */
int gpu_time_after(gpu_enqueue_fn enqueue, void *ctx, int warmup, int reps, gpu_enqueue_fn before,
		   void *before_ctx, struct gpu_timing *out, struct sp_err *err);
/* Enqueues a kernel that keeps the device busy for *(double *)us
 * microseconds (a gpu_enqueue_fn). */
int gpu_spin(void *us, struct sp_err *err);

/* The bandwidth ceiling: median of reps device-to-device copies of `bytes`
 * (0: GPU_COPY_BANDWIDTH_BYTES), in GB/s counting bytes read plus written
 * (about 4300 on an H200). */
#define GPU_COPY_BANDWIDTH_BYTES ((size_t)1 << 30)
int gpu_copy_bandwidth(size_t bytes, int reps, double *gbs, struct sp_err *err);

/* NVTX ranges, for `ncu --nvtx --nvtx-include` and Nsight Systems. */
void gpu_range_push(const char *name);
void gpu_range_pop(void);

#ifdef __cplusplus
}
#endif

/* Where work may run, as a program's --device asks: DEVICE_AUTO takes the
 * GPU when gpu_count() > 0; DEVICE_CUDA without one is an error that says
 * why ("no usable CUDA device (...)"); the caller names its option. */
enum gpu_device_choice { DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA };
int gpu_resolve(enum gpu_device_choice want, int *use_gpu, struct sp_err *err);

#endif
