/* The dropout mask as a pure function of (seed, index), so the CPU and the
 * GPU drop the same elements and the backward recomputes the mask instead
 * of storing it. splitmix64's finaliser on seed + index * golden ratio;
 * the top 24 bits against p. Included by C and CUDA. */
#ifndef SPKIT_GNN_DROPOUT_H
#define SPKIT_GNN_DROPOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define GNN_HOST_DEVICE __host__ __device__
#else
#define GNN_HOST_DEVICE
#endif

static inline GNN_HOST_DEVICE int gnn_dropout_keep(uint64_t seed, uint64_t i, float p)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (float)(z >> 40) >= p * 16777216.0f;
}

/* The seed under which element i draws what element first + i draws under
 * seed: a rank holding the rows from `first` elements on drops what the
 * run on one rank drops. */
static inline GNN_HOST_DEVICE uint64_t gnn_dropout_shift(uint64_t seed, uint64_t first)
{
	return seed + first * 0x9e3779b97f4a7c15ull;
}

#endif
