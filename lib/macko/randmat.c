#include "macko/randmat.h"

#include "core/half.h"
#include "core/parallel.h"
#include "core/rng.h"

enum { BLOCK_ROWS = 64 };

struct job {
	uint16_t *a;
	int64_t rows, cols;
	double density;
	uint64_t seed;
};

static void fill_block(void *ctx, int64_t block)
{
	const struct job *j = ctx;
	struct rng r;
	rng_init(&r, j->seed, (uint64_t)block);
	int64_t end = (block + 1) * BLOCK_ROWS < j->rows ? (block + 1) * BLOCK_ROWS : j->rows;
	/* Compare 53-bit uniforms as integers: cheaper than converting each. */
	uint64_t cut = (uint64_t)(j->density * 9007199254740992.0);
	for (int64_t i = block * BLOCK_ROWS * j->cols; i < end * j->cols; i++) {
		uint64_t u = rng_u64(&r);
		if ((u >> 11) < cut) {
			float mag = 1.0f / 64 + (float)(u & 0x3ff) * (63.0f / 64 / 1024);
			j->a[i] = half_from_float((u >> 10) & 1 ? -mag : mag);
		} else {
			j->a[i] = 0;
		}
	}
}

void randmat_fp16(uint16_t *a, int64_t rows, int64_t cols, double density, uint64_t seed)
{
	struct job j = {a, rows, cols, density, seed};
	parallel_for((rows + BLOCK_ROWS - 1) / BLOCK_ROWS, fill_block, &j);
}
