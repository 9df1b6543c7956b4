/* The GPU helper layer (gpu.h) on the CUDA runtime. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomic>

#include <nvtx3/nvToolsExt.h>

#include "core/gpu.h"
#include "core/gpu_check.cuh"

extern "C" {
#include "core/num.h"
}

/* The lowest compute capability this file was compiled for, times 100 as in
 * __CUDA_ARCH_LIST__ (800,900): a device below it has no code of ours. Above
 * it there is code as long as CUDA_ARCH leaves out no major version between:
 * with the default 80 90, sm_80 runs on 8.x, sm_90 on 9.0, and the driver
 * compiles the compute_90 PTX for anything newer. */
static int lowest_arch(void)
{
	static const int archs[] = {__CUDA_ARCH_LIST__};
	int low = archs[0];
	for (size_t i = 1; i < sizeof archs / sizeof archs[0]; i++)
		low = archs[i] < low ? archs[i] : low;
	return low;
}

static int device_arch(int device, int *major, int *minor)
{
	if (cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
	    cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
		cudaGetLastError();
		return -1;
	}
	return *major * 100 + *minor * 10;
}

int gpu_probe(struct sp_err *why)
{
	int n = 0;
	cudaError_t rc = cudaGetDeviceCount(&n);
	if (rc != cudaSuccess) {
		/* cudaErrorNoDevice, cudaErrorInsufficientDriver, ...: no GPU for us.
		 * The runtime says "driver version is insufficient" also when there
		 * is no driver at all, which then reports version 0. */
		int driver = 0, runtime = 0;
		cudaDriverGetVersion(&driver);
		cudaRuntimeGetVersion(&runtime);
		if (rc == cudaErrorInsufficientDriver && driver == 0)
			sp_fail(why, "no NVIDIA driver found");
		else if (rc == cudaErrorInsufficientDriver)
			sp_fail(why, "the NVIDIA driver supports CUDA %d.%d, this build needs %d.%d",
				driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
		else
			sp_fail(why, "%s", gpu_status_message(rc));
		cudaGetLastError();
		return 0;
	}
	int usable = 0, major = 0, minor = 0;
	for (int d = 0; d < n; d++)
		usable += device_arch(d, &major, &minor) >= lowest_arch();
	if (n == 0)
		sp_fail(why, "the driver lists no CUDA device");
	else if (usable == 0)
		sp_fail(why, "%d device(s), device %d has compute capability %d.%d; "
			     "this build needs %d.%d or higher (CUDA_ARCH)",
			n, n - 1, major, minor, lowest_arch() / 100, lowest_arch() % 100 / 10);
	return usable;
}

/* A device ordinal that exists, or an error that says how many do. */
static int check_ordinal(int device, struct sp_err *err)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		n = 0;
	}
	if (device < 0 || device >= n)
		return sp_fail(err, "CUDA device %d: no such device (%d present)", device, n);
	return 0;
}

int gpu_query(int device, struct gpu_info *info, struct sp_err *err)
{
	memset(info, 0, sizeof *info);
	if (check_ordinal(device, err))
		return -1;
	cudaDeviceProp p;
	GPU_CHECK(err, cudaGetDeviceProperties(&p, device));
	snprintf(info->name, sizeof info->name, "%s", p.name);
	info->major = p.major;
	info->minor = p.minor;
	info->sms = p.multiProcessorCount;
	info->l2_bytes = (size_t)p.l2CacheSize;
	info->mem_bytes = p.totalGlobalMem;
	info->smem_optin = p.sharedMemPerBlockOptin;
	/* CUDA 13 dropped memoryClockRate from cudaDeviceProp; the attribute
	 * remains but a driver may not report it. Double data rate: 2 transfers
	 * a clock, bus width in bits. */
	int clock_khz = 0, bus_bits = 0;
	if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
	    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
		cudaGetLastError();
		clock_khz = 0;
	}
	info->peak_bw_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
	GPU_CHECK(err, cudaDriverGetVersion(&info->driver_version));
	GPU_CHECK(err, cudaRuntimeGetVersion(&info->runtime_version));
	return 0;
}

int gpu_select(int device, struct sp_err *err)
{
	int major, minor;
	if (check_ordinal(device, err))
		return -1;
	if (device_arch(device, &major, &minor) < lowest_arch())
		return sp_fail(err, "CUDA device %d has compute capability %d.%d; this build needs "
				    "%d.%d or higher (rebuild with CUDA_ARCH=%d%d)",
			       device, major, minor, lowest_arch() / 100, lowest_arch() % 100 / 10,
			       major, minor);
	/* Since CUDA 12 this also creates the device's primary context, so a
	 * broken device fails here rather than at the first allocation. */
	GPU_CHECK(err, cudaSetDevice(device));
	return 0;
}

int gpu_malloc(void **p, size_t n, const char *what, struct sp_err *err)
{
	cudaError_t rc = cudaMalloc(p, n);
	if (rc == cudaSuccess)
		return 0;
	*p = NULL;
	const char *msg = gpu_status_message(rc);
	size_t free_b = 0, total_b = 0;
	if (rc == cudaErrorMemoryAllocation && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
		return sp_fail(err, "cudaMalloc(%zu bytes) for '%s': %s (%zu of %zu bytes free)", n,
			       what, msg, free_b, total_b);
	return sp_fail(err, "cudaMalloc(%zu bytes) for '%s': %s", n, what, msg);
}

/* For some milliseconds after a large cudaFree the device moves memory about
 * 15% slower: the driver's work on the freed memory. Measured on an H100
 * (2026-11-28, kernel-sample's res_add at b4 l2048 dim4096, 3 warm-ups and
 * 20 timed runs): 64.3 us fresh, 74.3 us right after freeing 2 GB, 64.5 us
 * when 20 ms passed after the free; 23 back-to-back 1 GB copies with no
 * free changed nothing. So gpu_free counts the bytes it gives back, and
 * gpu_time waits for them at FREED_SETTLE_GBS before it times anything (2 GB:
 * 10.7 ms; the slow spell lasted about 5 ms). */
#define FREED_SETTLE_GBS 200.0
#define FREED_SETTLE_MIN_BYTES ((size_t)16 << 20)
static std::atomic<size_t> freed_unsettled{0};

void gpu_free(void *p)
{
	size_t before, after, total;
	const bool counted = p && cudaMemGetInfo(&before, &total) == cudaSuccess;
	/* Only an invalid pointer or an earlier fault makes cudaFree fail, and
	 * a fault is reported again by the next synchronizing call. */
	gpu_status_message(cudaFree(p));
	if (counted && cudaMemGetInfo(&after, &total) == cudaSuccess && after > before)
		freed_unsettled += after - before;
}

/* Sleep out the slow spell after the frees since the last call (above). */
static void settle_freed(void)
{
	const size_t bytes = freed_unsettled.exchange(0);
	if (bytes < FREED_SETTLE_MIN_BYTES)
		return;
	const double seconds = (double)bytes / (FREED_SETTLE_GBS * 1e9);
	struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind, int async,
		struct sp_err *err)
{
	const char *way = kind == cudaMemcpyHostToDevice   ? "host to device"
			  : kind == cudaMemcpyDeviceToHost ? "device to host"
							   : "device to device";
	cudaError_t rc = async ? cudaMemcpyAsync(dst, src, n, kind, 0) : cudaMemcpy(dst, src, n, kind);
	const char *msg = gpu_status_message(rc);
	return msg ? sp_fail(err, "cudaMemcpy(%zu bytes, %s): %s", n, way, msg) : 0;
}

int gpu_upload(void *dst, const void *src, size_t n, struct sp_err *err)
{
	return copy(dst, src, n, cudaMemcpyHostToDevice, 0, err);
}

int gpu_download(void *dst, const void *src, size_t n, struct sp_err *err)
{
	return copy(dst, src, n, cudaMemcpyDeviceToHost, 0, err);
}

int gpu_copy_enqueue(void *job, struct sp_err *err)
{
	const struct gpu_copy_job *j = (const struct gpu_copy_job *)job;
	return copy(j->dst, j->src, j->bytes, cudaMemcpyDeviceToDevice, 1, err);
}

int gpu_sync(struct sp_err *err)
{
	const char *msg = gpu_status_message(cudaDeviceSynchronize());
	return msg ? sp_fail(err, "CUDA device work failed: %s", msg) : 0;
}

extern "C" int gpu_context_usable(void)
{
	cudaGetLastError();
	if (cudaDeviceSynchronize() == cudaSuccess)
		return 1;
	cudaGetLastError(); /* a sticky error survives this and the next sync */
	return cudaDeviceSynchronize() == cudaSuccess;
}

/* Reads every 16-byte word of the buffer once, grid-stride. The sum only
 * keeps the loads alive: it is stored when it hits an unlikely value. */
static __global__ void l2_flush_read(uint4 *p, size_t n)
{
	unsigned sum = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = p[i];
		sum += v.x + v.y + v.z + v.w;
	}
	if (sum == 0x9e3779b9u)
		p[0].x = sum;
}

enum { FLUSH_THREADS = 256, FLUSH_BLOCKS_PER_SM = 8 };

/* One thread that returns `ns` nanoseconds after it starts, by the
 * device's global timer. */
static __global__ void spin_for(unsigned long long ns)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

int gpu_spin(void *us, struct sp_err *err)
{
	spin_for<<<1, 1>>>((unsigned long long)(*(const double *)us * 1e3));
	GPU_CHECK_LAUNCH(err, "spin_for");
	return 0;
}

int gpu_l2_flusher_init(struct gpu_l2_flusher *f, struct sp_err *err)
{
	int device, l2, sms;
	memset(f, 0, sizeof *f);
	GPU_CHECK(err, cudaGetDevice(&device));
	GPU_CHECK(err, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
	GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
	size_t bytes = ((size_t)2 * l2 + 15) / 16 * 16;
	if (gpu_malloc(&f->buf, bytes, "L2 flush buffer", err))
		return -1;
	/* Written once so that the reads see initialised memory. */
	if (GPU_FAILED(err, cudaMemset(f->buf, 0x5a, bytes))) {
		gpu_l2_flusher_free(f);
		return -1;
	}
	f->bytes = bytes;
	f->blocks = sms * FLUSH_BLOCKS_PER_SM;
	return 0;
}

int gpu_l2_flusher_run(void *flusher, struct sp_err *err)
{
	struct gpu_l2_flusher *f = (struct gpu_l2_flusher *)flusher;
	l2_flush_read<<<f->blocks, FLUSH_THREADS>>>((uint4 *)f->buf, f->bytes / sizeof(uint4));
	GPU_CHECK_LAUNCH(err, "l2_flush_read");
	return 0;
}

void gpu_l2_flusher_free(struct gpu_l2_flusher *f)
{
	gpu_free(f->buf);
	memset(f, 0, sizeof *f);
}

/* Enqueue every timed repetition, each between events ev[2r] and ev[2r+1],
 * then wait once and read the times. */
static int time_reps(gpu_enqueue_fn enqueue, void *ctx, int reps, gpu_enqueue_fn before,
		     void *before_ctx, cudaEvent_t *ev, double *ms, struct sp_err *err)
{
	for (int r = 0; r < reps; r++) {
		if (before && before(before_ctx, err))
			return -1;
		GPU_CHECK(err, cudaEventRecord(ev[2 * r], 0));
		if (enqueue(ctx, err))
			return -1;
		GPU_CHECK(err, cudaEventRecord(ev[2 * r + 1], 0));
	}
	GPU_CHECK(err, cudaEventSynchronize(ev[2 * reps - 1]));
	for (int r = 0; r < reps; r++) {
		float t;
		GPU_CHECK(err, cudaEventElapsedTime(&t, ev[2 * r], ev[2 * r + 1]));
		ms[r] = t;
	}
	return 0;
}

static void summarize(double *ms, int reps, struct gpu_timing *out)
{
	num_sort(ms, (size_t)reps);
	double sum = 0;
	for (int r = 0; r < reps; r++)
		sum += ms[r];
	out->reps = reps;
	out->min_ms = ms[0];
	out->max_ms = ms[reps - 1];
	out->median_ms = num_median_sorted(ms, (size_t)reps);
	out->mean_ms = sum / reps;
}

int gpu_time_after(gpu_enqueue_fn enqueue, void *ctx, int warmup, int reps, gpu_enqueue_fn before,
		   void *before_ctx, struct gpu_timing *out, struct sp_err *err)
{
	memset(out, 0, sizeof *out);
	if (reps < 1 || warmup < 0)
		return sp_fail(err, "gpu_time: need reps >= 1 and warmup >= 0 (got %d and %d)", reps,
			       warmup);
	/* Warm-up keeps module loading, lazy allocation and library handle set-up
	 * out of the times; a failure in it is reported before timing starts. */
	settle_freed();
	for (int i = 0; i < warmup; i++)
		if (enqueue(ctx, err))
			return -1;
	if (gpu_sync(err))
		return -1;

	cudaEvent_t *ev = (cudaEvent_t *)calloc(2 * (size_t)reps, sizeof *ev);
	double *ms = (double *)calloc(reps, sizeof *ms);
	int created = 0, rc = -1;
	if (!ev || !ms) {
		sp_fail(err, "gpu_time: out of host memory for %d repetitions", reps);
		goto done;
	}
	for (; created < 2 * reps; created++)
		if (GPU_FAILED(err, cudaEventCreate(&ev[created])))
			goto done;
	rc = time_reps(enqueue, ctx, reps, before, before_ctx, ev, ms, err);
	if (rc == 0)
		summarize(ms, reps, out);
done:
	for (int i = 0; i < created; i++)
		cudaEventDestroy(ev[i]);
	free(ev);
	free(ms);
	return rc;
}

int gpu_time(gpu_enqueue_fn enqueue, void *ctx, int warmup, int reps, int flush_l2,
	     struct gpu_timing *out, struct sp_err *err)
{
	struct gpu_l2_flusher flusher = {0};
	memset(out, 0, sizeof *out);
	if (flush_l2 && gpu_l2_flusher_init(&flusher, err))
		return -1;
	const int rc = gpu_time_after(enqueue, ctx, warmup, reps, flush_l2 ? gpu_l2_flusher_run : NULL,
				      &flusher, out, err);
	gpu_l2_flusher_free(&flusher);
	return rc;
}

int gpu_copy_bandwidth(size_t bytes, int reps, double *gbs, struct sp_err *err)
{
	struct gpu_copy_job job = {NULL, NULL, bytes ? bytes : GPU_COPY_BANDWIDTH_BYTES};
	void *src = NULL;
	struct gpu_timing t;
	int rc = -1;
	*gbs = 0;
	if (gpu_malloc(&src, job.bytes, "copy-bandwidth source", err))
		return -1;
	if (gpu_malloc(&job.dst, job.bytes, "copy-bandwidth destination", err))
		goto done;
	job.src = src;
	/* Not zeros: real data, as everything we time. The copy is far larger
	 * than L2, so no flush is needed. */
	if (GPU_FAILED(err, cudaMemset(src, 0xa5, job.bytes)))
		goto done;
	rc = gpu_time(gpu_copy_enqueue, &job, 3, reps, 0, &t, err);
	if (rc == 0)
		*gbs = 2.0 * job.bytes / (t.median_ms * 1e-3) / 1e9;
done:
	gpu_free(job.dst);
	gpu_free(src);
	return rc;
}

void gpu_range_push(const char *name)
{
	nvtxRangePushA(name);
}

void gpu_range_pop(void)
{
	nvtxRangePop();
}
