/* Random sparse fp16 matrices for benchmarks and tests: each entry is
 * nonzero with probability `density`, uniform in [-1, -1/64] U [1/64, 1]
 * (never rounding to zero). Generated in parallel, in fixed row blocks
 * with their own streams, so the same seed gives the same matrix for any
 * thread count. */
#ifndef SPKIT_RANDMAT_H
#define SPKIT_RANDMAT_H

#include <stdint.h>

void randmat_fp16(uint16_t *a, int64_t rows, int64_t cols, double density, uint64_t seed);

#endif
