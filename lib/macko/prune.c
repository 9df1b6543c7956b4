/* Magnitude pruning of dense fp16 matrices, before MACKO compression.
 *
 * Magnitudes are compared through the bits: with the sign cleared, the order
 * of fp16 bit patterns is the order of their magnitudes (NaNs above inf).
 * So prune_to_density is an exact O(n) selection: a histogram of the 32768
 * magnitude patterns, the cut where the count from the top reaches the
 * number to keep, then everything above the cut and, at the cut, the first
 * entries by position: the result is the same every time. Pruned entries
 * become +0.
 *
 * Both passes run in parallel over fixed chunks of the array (their number
 * depends only on n), each chunk with its own histogram; the entries at the
 * cut that may be kept are handed out to the chunks in order, so ties still
 * go by position. Entries are zeroed without branches on the data: at
 * density 0.5 "above the cut?" is a coin toss, and mispredicting it took
 * most of the time. */
#include "macko/macko.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "core/parallel.h"

#define MAGNITUDES (HALF_ABS + 1)
#define PRUNE_MIN_CHUNK ((int64_t)1 << 22)
#define PRUNE_MAX_CHUNKS 256
/* per-chunk histograms count in uint32 */
#define PRUNE_MAX_N ((int64_t)PRUNE_MAX_CHUNKS * UINT32_MAX)

struct prune_job {
	uint16_t *dense;
	int64_t n, chunk;
	uint32_t *hist;  /* chunks x MAGNITUDES */
	int64_t cut;     /* keep magnitudes above, and ... */
	int64_t *quota;  /* ... this many of each chunk's entries at the cut */
};

static int64_t chunk_end(const struct prune_job *j, int64_t c)
{
	return j->n - c * j->chunk < j->chunk ? j->n : (c + 1) * j->chunk;
}

static void histogram_chunk(void *ctx, int64_t c)
{
	struct prune_job *j = ctx;
	uint32_t *h = j->hist + c * MAGNITUDES;
	for (int64_t i = c * j->chunk, end = chunk_end(j, c); i < end; i++)
		h[j->dense[i] & HALF_ABS]++;
}

/* Zero the n entries from p whose magnitude bits are below lo (at most
 * 0x8000, which zeroes all). Four at a time, without branches: with the sign
 * cleared a lane is at most 0x7fff, so adding 0x8000 - lo sets its top bit
 * exactly when it is >= lo, never carrying into the next lane. */
static void zero_below(uint16_t *p, int64_t n, unsigned lo)
{
	const uint64_t abs4 = 0x7fff7fff7fff7fffULL, lanes = 0x0001000100010001ULL;
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) {
		uint64_t w;
		memcpy(&w, p + i, sizeof w);
		uint64_t at_least = (((w & abs4) + (0x8000 - lo) * lanes) >> 15) & lanes;
		w &= at_least * 0xffff;
		memcpy(p + i, &w, sizeof w);
	}
	for (; i < n; i++)
		p[i] &= (uint16_t)-((p[i] & HALF_ABS) >= lo);
}

/* Keep what is above the cut, and at the cut the chunk's first quota
 * entries: everything at or above the cut up to just past the last of
 * those, and only what is above it after. */
static void select_chunk(void *ctx, int64_t c)
{
	struct prune_job *j = ctx;
	int64_t start = c * j->chunk, end = chunk_end(j, c), split = start;
	if (j->quota[c] == j->hist[c * MAGNITUDES + j->cut])
		split = end;
	else
		for (int64_t seen = 0; seen < j->quota[c]; split++)
			seen += (j->dense[split] & HALF_ABS) == j->cut;
	zero_below(j->dense + start, split - start, (unsigned)j->cut);
	zero_below(j->dense + split, end - split, (unsigned)j->cut + 1);
}

int prune_to_density(uint16_t *dense, int64_t n, double density, struct sp_err *err)
{
	if (!(density > 0 && density <= 1))
		return sp_fail(err, "density %g is outside (0, 1]", density);
	if (n > PRUNE_MAX_N)
		return sp_fail(err, "%lld entries are more than pruning handles (%lld)", (long long)n,
			       (long long)PRUNE_MAX_N);
	int64_t keep = llround(density * (double)n);
	if (keep == 0) {
		zero_below(dense, n, MAGNITUDES); /* everything */
		return 0;
	}
	struct prune_job j = {dense, n, PRUNE_MIN_CHUNK, NULL, 0, NULL};
	if (n > j.chunk * PRUNE_MAX_CHUNKS)
		j.chunk = (n + PRUNE_MAX_CHUNKS - 1) / PRUNE_MAX_CHUNKS;
	int64_t chunks = (n + j.chunk - 1) / j.chunk;
	j.hist = calloc((size_t)chunks * MAGNITUDES, sizeof *j.hist);
	j.quota = malloc((size_t)chunks * sizeof *j.quota);
	if (!j.hist || !j.quota) {
		free(j.hist);
		free(j.quota);
		return sp_fail(err, "out of memory for %lld magnitude histograms", (long long)chunks);
	}
	parallel_for(chunks, histogram_chunk, &j);

	/* The cut: the magnitude where the count from the top reaches keep;
	 * at_cut of its entries still fit, the first ones by position. */
	int64_t above = 0, at_cut = 0;
	for (j.cut = MAGNITUDES - 1;; j.cut--) {
		int64_t here = 0;
		for (int64_t c = 0; c < chunks; c++)
			here += j.hist[c * MAGNITUDES + j.cut];
		if (above + here >= keep) {
			at_cut = keep - above;
			break;
		}
		above += here;
	}
	for (int64_t c = 0; c < chunks; c++) {
		int64_t here = j.hist[c * MAGNITUDES + j.cut];
		j.quota[c] = at_cut < here ? at_cut : here;
		at_cut -= j.quota[c];
	}
	parallel_for(chunks, select_chunk, &j);
	free(j.hist);
	free(j.quota);
	return 0;
}

void prune_below(uint16_t *dense, int64_t n, double threshold)
{
	if (!(threshold > 0))
		return; /* nothing has |v| < 0, nor < NaN */
	/* The smallest magnitude pattern whose value is >= threshold (inf at
	 * worst), found once: magnitudes are monotone in their bits. */
	uint16_t lo = 0, hi = HALF_INF;
	while (lo < hi) {
		uint16_t mid = (uint16_t)((lo + hi) / 2);
		if (half_to_float(mid) >= threshold)
			hi = mid;
		else
			lo = (uint16_t)(mid + 1);
	}
	zero_below(dense, n, lo);
}
