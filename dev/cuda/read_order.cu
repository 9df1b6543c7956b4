// Whether the order of MACKO's reads costs time, without its decode: three
// kernels read ROWS x STEPS steps of 1280 bytes on 264 blocks of 512
// threads, timed by the benchmarks' own gpu_time (kernels/core/gpu.h: the L2
// flushed before each repetition, events around the one launch, the
// median of REPS after 3 warm-up launches):
//   read         a plain grid-stride read of the same bytes (stream_read.cuh);
//   rowmajor     MACKO's walk of the rows (walk_read.cuh), a row's steps
//                stored one after the other, rows one after the other;
//   interleaved  the same walk, step k of a turn's rows stored side by
//                side, so the warps, at about the same step, read one
//                contiguous region (bench/RESULTS.md, macko-spmv,
//                "Turn-by-turn step placement").
// All three with .cs loads (evict first), so only the order differs.
//   make dev && build/dev/read_order ROWS STEPS [REPS]
#include <cstdio>
#include <cstdlib>

#include "core/gpu_check.cuh"
#include "probe.h"
#include "stream_read.cuh"
#include "walk_read.cuh"

enum { BLOCKS = 264, THREADS = 512, WARMUP = 3 };

struct read_job {
	const unsigned char *data;
	int rows, steps, kind; /* kind: 0 read, 1 rowmajor, 2 interleaved */
	unsigned *sink;
};

static int enqueue(void *ctx, struct sp_err *err)
{
	const read_job *j = (const read_job *)ctx;
	if (j->kind == 0)
		stream_read<4><<<BLOCKS, THREADS>>>((const uint4 *)j->data,
						    (size_t)j->rows * j->steps * 1280 / 16, j->sink);
	else if (j->kind == 1)
		walk_read<ROW_MAJOR, true><<<BLOCKS, THREADS>>>(j->data, j->rows, j->steps, 0, j->sink);
	else
		walk_read<INTERLEAVED, true><<<BLOCKS, THREADS>>>(j->data, j->rows, j->steps, 0, j->sink);
	GPU_CHECK_LAUNCH(err, "read-order kernel");
	return 0;
}

static int run(int rows, int steps, int reps, struct sp_err *err)
{
	static const char *const names[] = {"read", "rowmajor", "interleaved"};
	const size_t bytes = (size_t)rows * steps * 1280;
	void *data = NULL, *sink = NULL;
	int rc = -1;
	if (gpu_malloc(&data, bytes, "bytes to read", err) || gpu_malloc(&sink, 4, "sink", err) ||
	    GPU_FAILED(err, cudaMemset(data, 1, bytes)))
		goto done;
	std::printf("rows %d steps %d (%.1f MB):", rows, steps, bytes / 1e6);
	for (int kind = 0; kind < 3; kind++) {
		read_job job = {(const unsigned char *)data, rows, steps, kind, (unsigned *)sink};
		struct gpu_timing t;
		if (gpu_time(enqueue, &job, WARMUP, reps, 1, &t, err))
			goto done;
		std::printf(" %s %.2f", names[kind], t.median_ms * 1e3);
	}
	std::printf(" us, medians of %d\n", reps);
	rc = 0;
done:
	gpu_free(data);
	gpu_free(sink);
	return rc;
}

// A whole positive decimal number of at most 9 digits, else -1.
static long positive(const char *s)
{
	char *end;
	const long v = std::strtol(s, &end, 10);
	return end != s && !*end && v > 0 && v < 1000000000 ? v : -1;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		std::fprintf(stderr, "usage: read_order ROWS STEPS [REPS]\n");
		return 2;
	}
	const long rows = positive(argv[1]), steps = positive(argv[2]);
	const long reps = argc > 3 ? positive(argv[3]) : 30;
	if (rows < 1 || steps < 1 || reps < 1 || (double)rows * steps * 1280 > 8e9) {
		std::fprintf(stderr, "read_order: ROWS, STEPS and REPS must be whole positive numbers, "
				     "and the bytes at most 8 GB\n");
		return 2;
	}
	struct sp_err err;
	return probe_exit("read_order", run((int)rows, (int)steps, (int)reps, &err), &err);
}
