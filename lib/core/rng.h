/* Seeded random numbers, the same on every machine for the same seed:
 * xoshiro256** seeded through splitmix64. Independent streams for threads
 * come from rng_init(seed, stream), so a parallel generator gives the same
 * output whatever the thread count, as long as work is cut into the same
 * streams. */
#ifndef SPKIT_RNG_H
#define SPKIT_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_init(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_u64(struct rng *r);
/* Uniform in [0, n), unbiased; n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Uniform in [0, 1) with 53 random bits. */
double rng_uniform(struct rng *r);
/* Standard normal (Box-Muller, no cached second value so streams stay simple). */
double rng_normal(struct rng *r);
/* Two independent standard normals from one Box-Muller draw (its cosine and
 * its sine): bulk generation at half rng_normal's cost. */
void rng_normal2(struct rng *r, double *a, double *b);

#endif
