/* Magnitude pruning of dense fp16 matrices, before MACKO compression.
 *
 * Magnitudes are compared through the bits: with the sign cleared, the order
 * of fp16 bit patterns is the order of their magnitudes (NaNs above inf).
 * So prune_to_density is an exact O(n) selection: a histogram of the 32768
 * magnitude patterns, the cut where the count from the top reaches the
 * number to keep, then everything above the cut and, at the cut, the first
 * entries by position: the result is the same every time. Pruned entries
 * become +0. */
#include "macko.h"

#include <math.h>
#include <stdlib.h>

#include "fp16.h"

#define MAGNITUDES (FP16_ABS + 1)

int prune_to_density(uint16_t *dense, int64_t n, double density, struct sp_err *err)
{
	if (!(density > 0 && density <= 1))
		return sp_fail(err, "density %g is outside (0, 1]", density);
	int64_t keep = llround(density * (double)n);
	int64_t *count = calloc(MAGNITUDES, sizeof *count);
	if (!count)
		return sp_fail(err, "out of memory for the magnitude histogram");
	for (int64_t i = 0; i < n; i++)
		count[dense[i] & FP16_ABS]++;
	/* cut: the magnitude where the count from the top reaches keep; at_cut:
	 * how many entries of exactly that magnitude still fit */
	int64_t above = 0, cut = MAGNITUDES, at_cut = 0;
	while (cut > 0 && above < keep) {
		cut--;
		if (above + count[cut] >= keep)
			at_cut = keep - above;
		above += count[cut];
	}
	free(count);
	for (int64_t i = 0; i < n; i++) {
		int64_t mag = dense[i] & FP16_ABS;
		if (mag > cut)
			continue;
		if (mag == cut && at_cut > 0)
			at_cut--;
		else
			dense[i] = 0;
	}
	return 0;
}

void prune_below(uint16_t *dense, int64_t n, double threshold)
{
	if (!(threshold > 0))
		return; /* nothing has |v| < 0, nor < NaN */
	/* The smallest magnitude pattern whose value is >= threshold (inf at
	 * worst), found once: magnitudes are monotone in their bits. */
	uint16_t lo = 0, hi = FP16_INF;
	while (lo < hi) {
		uint16_t mid = (uint16_t)((lo + hi) / 2);
		if (fp16_to_float(mid) >= threshold)
			hi = mid;
		else
			lo = (uint16_t)(mid + 1);
	}
	for (int64_t i = 0; i < n; i++)
		if ((dense[i] & FP16_ABS) < lo)
			dense[i] = 0;
}
