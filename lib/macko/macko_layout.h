/* The layout the GPU kernel reads a MACKO matrix in: every row starts at a
 * multiple of 8 elements, so no 8-element chunk (the kernel's unit of load
 * and decode) holds elements of two rows, and the kernel needs no masks for
 * its neighbours' elements. The gaps between rows are zero (value and
 * delta). It costs at most 7 elements a row; the bytes the format must move
 * are still counted from the MACKO arrays.
 *
 * Row r's elements are [start, ends[r + 1]) with start = ends[r] rounded up
 * to 8; ends[0] = 0. */
#ifndef SPKIT_MACKO_ALIGNED_H
#define SPKIT_MACKO_ALIGNED_H

#include <stdint.h>

#include "core/err.h"
#include "macko/macko.h"

struct macko_layout {
	int64_t elements; /* ends[rows] rounded up to 8: the length of values */
	uint16_t *values; /* fp16 bits */
	uint8_t *deltas;  /* elements / 2 bytes, element i in nibble i as in MACKO */
	int32_t *ends;    /* rows + 1 */
};

static inline int64_t macko_layout_start(const struct macko_layout *a, int64_t r)
{
	return (a->ends[r] + 7) & ~(int64_t)7;
}

/* m (valid) in the aligned layout. Fails when the result would not fit
 * int32 element indices, or on running out of memory. */
int macko_align(const struct macko *m, struct macko_layout *a, const char *name,
		struct sp_err *err);
void macko_layout_free(struct macko_layout *a);

#endif
