#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_init(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (0x6a09e667f3bcc909ULL * (stream + 1));
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_u64(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Lemire's nearly-divisionless method. */
uint64_t rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_u64(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t threshold = -n % n;
		while (low < threshold) {
			m = (unsigned __int128)rng_u64(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double rng_uniform(struct rng *r)
{
	return (double)(rng_u64(r) >> 11) * 0x1.0p-53;
}

/* Box-Muller's radius from the first uniform; the angle takes the second. */
static double normal_radius(struct rng *r)
{
	double u1 = 1.0 - rng_uniform(r); /* (0, 1]: log is finite */
	return sqrt(-2.0 * log(u1));
}

double rng_normal(struct rng *r)
{
	double rad = normal_radius(r);
	return rad * cos(6.283185307179586 * rng_uniform(r));
}

void rng_normal2(struct rng *r, double *a, double *b)
{
	double rad = normal_radius(r), t = 6.283185307179586 * rng_uniform(r);
	*a = rad * cos(t);
	*b = rad * sin(t);
}
