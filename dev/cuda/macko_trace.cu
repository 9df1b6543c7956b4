// A per-warp timeline of the MACKO SpMV kernel (one vector), and of two
// kernels that only read as many bytes: a plain grid-stride read (the read
// floor's, stream_read.cuh) and MACKO's walk of the rows without the decode
// (walk_read.cuh, rows one after the other, .cs loads; in the
// pattern-misaligned run the rows start at 16- and 4-byte offsets, as
// MACKO's do). Each kernel is timed by the benchmarks' gpu_time (L2 flushed
// before each launch, one warm-up, median of REPS) and the stamps of its
// last launch are kept. Where a kernel loses time against a plain read (a
// late start, a slower steady rate, a long tail) shows in these files, not
// in one total time (bench/RESULTS.md, macko-spmv, "Timelines").
//   make dev && build/dev/macko_trace ROWS COLS DENSITY OUTDIR
//     writes OUTDIR/trace-{macko,read,pattern,pattern-misaligned}-ROWSxCOLS-dDENSITY.bin
//   python3 scripts/macko-trace.py OUTDIR/trace-*.bin
// A file holds TRACE_SLOTS 64-bit words a warp (macko_trace.cuh).
#include "macko_trace.cuh"
#include "macko/macko_spmv.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" {
#include "macko/randmat.h"
}
#include "probe.h"
#include "stream_read.cuh"
#include "walk_read.cuh"

enum { WARMUP = 1, REPS = 5, READ_BLOCKS = 264, READ_THREADS = 512, STEP_BYTES = 1280 };
enum { MAX_WARPS = 16384 };
static const char *const names[] = {"macko", "read", "pattern", "pattern-misaligned"};

struct trace_job {
	int kind; /* an index of names[] */
	const macko_dev *d;
	const void *x;
	void *y;
	const unsigned char *rb; /* the read kernels' bytes */
	size_t read_bytes;
	int rows, spr;
	unsigned *sink;
};

static int enqueue_traced(void *ctx, struct sp_err *err)
{
	const trace_job *j = (const trace_job *)ctx;
	if (j->kind == 0)
		return macko_dev_spmv(j->d, j->x, 1, 1.0f, 0.0f, NULL, j->y, MACKO_OUT_F16, err);
	if (j->kind == 1)
		stream_read<4><<<READ_BLOCKS, READ_THREADS>>>((const uint4 *)j->rb, j->read_bytes / 16,
							      j->sink);
	else
		walk_read<ROW_MAJOR, true><<<READ_BLOCKS, READ_THREADS>>>(j->rb, j->rows, j->spr,
									  j->kind == 3, j->sink);
	GPU_CHECK_LAUNCH(err, "read kernel");
	return 0;
}

// Every launch of one kernel stamps the same slots (the rows each warp takes
// are fixed), so the buffer is cleared once a kernel and holds its last
// launch's stamps.
static int trace_kernel(trace_job *job, unsigned long long *trace, std::vector<unsigned long long> &host,
			const char *path, struct sp_err *err)
{
	const size_t words = host.size();
	GPU_CHECK(err, cudaMemset(trace, 0, words * 8));
	struct gpu_timing t;
	if (gpu_time(enqueue_traced, job, WARMUP, REPS, 1, &t, err) ||
	    gpu_download(host.data(), trace, words * 8, err))
		return -1;
	size_t warps = MAX_WARPS;
	while (warps > 0 && host[(warps - 1) * TRACE_SLOTS + TRACE_ENTRY] == 0)
		warps--;
	FILE *f = std::fopen(path, "wb");
	if (!f || std::fwrite(host.data(), 8, warps * TRACE_SLOTS, f) != warps * TRACE_SLOTS ||
	    std::fclose(f))
		return sp_fail(err, "cannot write %s", path);
	std::printf("%-18s median %8.2f us, min %8.2f (%d launches, each after an L2 flush); "
		    "%zu warps of the last -> %s\n",
		    names[job->kind], t.median_ms * 1e3, t.min_ms * 1e3, REPS, warps, path);
	return 0;
}

static int run(int64_t rows, int64_t cols, double density, const char *dir, struct sp_err *err)
{
	macko m;
	{
		std::vector<uint16_t> dense((size_t)rows * cols);
		randmat_fp16(dense.data(), rows, cols, density, 1);
		if (macko_compress_dense(dense.data(), rows, cols, &m, "random matrix", err))
			return -1;
	}
	macko_dev d;
	const int uploaded = macko_dev_upload(&m, 1, &d, err);
	macko_free(&m);
	if (uploaded)
		return -1;
	std::vector<uint16_t> xh(cols);
	for (int64_t c = 0; c < cols; c++)
		xh[c] = (uint16_t)(0x3800 | ((c * 2654435761u) & 0x3ff)); // 0.5 to 1

	// The read kernels move MACKO's bytes: whole 1280-byte steps, spr a row.
	const int spr = std::max(1, (int)std::lround(2.5 * d.padded / rows / STEP_BYTES));
	const size_t read_bytes = (size_t)rows * spr * STEP_BYTES;
	const size_t words = (size_t)MAX_WARPS * TRACE_SLOTS;
	void *x = NULL, *y = NULL, *sink = NULL, *rb = NULL, *trace = NULL;
	int rc = -1;
	if (gpu_malloc(&x, cols * 2, "x", err) || gpu_malloc(&y, rows * 2, "y", err) ||
	    gpu_malloc(&sink, 4, "sink", err) || gpu_malloc(&rb, read_bytes + 4096, "bytes to read", err) ||
	    gpu_malloc(&trace, words * 8, "trace", err) || gpu_upload(x, xh.data(), cols * 2, err) ||
	    GPU_FAILED(err, cudaMemset(rb, 1, read_bytes + 4096)) ||
	    GPU_FAILED(err, cudaMemcpyToSymbol(g_macko_trace, &trace, sizeof trace)))
		goto done;
	{
		std::vector<unsigned long long> host(words);
		for (int k = 0; k < 4; k++) {
			trace_job job = {k, &d, x, y, (const unsigned char *)rb, read_bytes, (int)rows, spr,
					 (unsigned *)sink};
			char path[4096];
			std::snprintf(path, sizeof path, "%s/trace-%s-%lldx%lld-d%g.bin", dir, names[k],
				      (long long)rows, (long long)cols, density);
			if (trace_kernel(&job, (unsigned long long *)trace, host, path, err))
				goto done;
		}
	}
	std::printf("bytes: macko %.0f, read and pattern %zu (%d steps of %d bytes a row)\n",
		    macko_dev_bytes(&d, 1, MACKO_OUT_F16, 0), read_bytes, spr, STEP_BYTES);
	rc = 0;
done:
	gpu_free(x);
	gpu_free(y);
	gpu_free(sink);
	gpu_free(rb);
	gpu_free(trace);
	macko_dev_free(&d);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		std::fprintf(stderr, "usage: macko_trace ROWS COLS DENSITY OUTDIR\n");
		return 2;
	}
	const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]);
	const double density = std::atof(argv[3]);
	if (rows < 1 || cols < 1 || !(density > 0 && density <= 1)) {
		std::fprintf(stderr, "macko_trace: ROWS and COLS must be positive, DENSITY in (0, 1]\n");
		return 2;
	}
	struct sp_err err;
	return probe_exit("macko_trace", run(rows, cols, density, argv[4], &err), &err);
}
