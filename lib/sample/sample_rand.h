/* The random inputs of kernel-sample's operators as a pure function of
 * (seed, tensor, element), so the GPU fills its tensors in a kernel and the
 * CPU reference computes the very same numbers: a counter-based generator
 * (splitmix64's finalizer over seed, tensor number and element index). A
 * value is 24 random bits as a float in [-1, 1) times a power of two, exact
 * in fp32; rounding it to fp16 or bf16 (nearest, ties to even) is the same
 * on both sides. Included by C and by CUDA (host and device). */
#ifndef SPKIT_SAMPLE_RAND_H
#define SPKIT_SAMPLE_RAND_H

#include <stdint.h>

#ifdef __CUDACC__
#define SAMPLE_HD __host__ __device__ __forceinline__
#else
#define SAMPLE_HD static inline
#endif

SAMPLE_HD uint64_t sample_mix64(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ull;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The stream of tensor `index` under `seed`: computed once per tensor. */
SAMPLE_HD uint64_t sample_rand_stream(uint64_t seed, int index)
{
	return sample_mix64(seed * 0x9e3779b97f4a7c15ull + (uint64_t)index + 1);
}

/* Uniform in [-scale, scale), scale a power of two. */
SAMPLE_HD float sample_rand_value(uint64_t stream, uint64_t i, float scale)
{
	uint64_t h = sample_mix64(stream + i * 0x9e3779b97f4a7c15ull);
	return ((float)(int32_t)(h >> 40) * 0x1p-23f - 1.0f) * scale;
}

/* Uniform in [0, range), range below 2^31. */
SAMPLE_HD int32_t sample_rand_id(uint64_t stream, uint64_t i, int64_t range)
{
	uint64_t h = sample_mix64(stream + i * 0x9e3779b97f4a7c15ull);
	return (int32_t)((h >> 32) % (uint64_t)range);
}

#endif
