/* How the MACKO code cuts rows into parallel blocks (private to lib/macko*.c).
 * The cut depends only on the shape, never on the thread count. */
#ifndef SPKIT_MACKO_BLOCKS_H
#define SPKIT_MACKO_BLOCKS_H

#include <stdint.h>

/* About this many matrix entries per block: big enough to make the
 * scheduling cost nothing, small enough to balance two to a few dozen
 * threads on the matrices MACKO is for (thousands of rows). */
#define MACKO_BLOCK_ENTRIES ((int64_t)1 << 18)

static inline int64_t macko_block_rows(int64_t cols)
{
	return cols >= MACKO_BLOCK_ENTRIES ? 1 : MACKO_BLOCK_ENTRIES / (cols > 0 ? cols : 1);
}

static inline int64_t macko_block_count(int64_t rows, int64_t per_block)
{
	return (rows + per_block - 1) / per_block;
}

/* One past the last row of the block that starts at row r0. */
static inline int64_t macko_block_end(int64_t r0, int64_t per_block, int64_t rows)
{
	return rows - r0 < per_block ? rows : r0 + per_block;
}

/* fn(ctx, r) for every row, in parallel blocks, rows in order within one. */
typedef void (*macko_row_fn)(void *ctx, int64_t r);
void macko_for_rows(int64_t rows, int64_t cols, macko_row_fn fn, void *ctx);

#endif
