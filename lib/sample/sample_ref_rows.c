/* The CPU references' parallel loop over rows (sample_ref.h). */
#include "core/parallel.h"
#include "sample/sample_ref.h"

/* Rows a chunk: enough to amortise taking a chunk, few enough to balance. */
#define ROWS_PER_CHUNK 16

struct rows_job {
	const void *ctx;
	int64_t rows;
	sample_ref_rows_fn fn;
};

static void rows_chunk(void *ctx, int64_t chunk)
{
	const struct rows_job *j = ctx;
	int64_t lo = chunk * ROWS_PER_CHUNK, hi = lo + ROWS_PER_CHUNK;
	j->fn(j->ctx, lo, hi < j->rows ? hi : j->rows);
}

void sample_ref_for_rows(const void *ctx, int64_t rows, sample_ref_rows_fn fn)
{
	struct rows_job j = {ctx, rows, fn};
	parallel_for((rows + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, rows_chunk, &j);
}

int sample_ref_state_rows(void *state, sample_ref_rows_fn fn)
{
	const struct sample_state *st = state;
	sample_ref_for_rows(st, st->d.rows, fn);
	return 0;
}
