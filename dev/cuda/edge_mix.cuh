// The standalone measurement programs' stand-in for an edge list: edge e's
// destination is a hash of e (splitmix64's mixer, first two rounds), so
// destinations are uniform and nothing is read to find them.
#ifndef SPKIT_EDGE_MIX_CUH
#define SPKIT_EDGE_MIX_CUH

#include <cstdint>

__device__ __forceinline__ uint64_t edge_mix(int64_t e)
{
	uint64_t x = (uint64_t)e * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 32);
}

#endif
