/* MACKO rows moved to 8-element boundaries for the GPU (macko_layout.h). */
#include "macko/macko_layout.h"

#include <stdlib.h>
#include <string.h>

#include "macko/macko_blocks.h"

/* n deltas from nibble `from` of src to nibble 0 of dst (n >= 1), the byte
 * after the last nibble left as it is. From an odd nibble every output
 * byte joins the high half of one input byte and the low half of the next. */
static void copy_nibbles(uint8_t *dst, const uint8_t *src, int64_t from, int64_t n)
{
	const uint8_t *s = src + from / 2;
	const int64_t whole = n / 2;
	if (from % 2 == 0) {
		memcpy(dst, s, (size_t)whole);
	} else {
		for (int64_t i = 0; i < whole; i++)
			dst[i] = (uint8_t)(s[i] >> 4 | (s[i + 1] & 0x0f) << 4);
	}
	if (n % 2)
		dst[whole] = (uint8_t)macko_delta(src, from + n - 1);
}

struct align_job {
	const struct macko *m;
	struct macko_layout *a;
};

/* Row r to its place. Rows start at multiples of 8 elements, so no two
 * share a byte of deltas: rows can be copied in parallel. */
static void copy_row(void *ctx, int64_t r)
{
	const struct align_job *j = ctx;
	const int64_t from = j->m->row_indices[r], n = j->m->row_indices[r + 1] - from;
	const int64_t to = macko_layout_start(j->a, r);
	if (n == 0)
		return;
	memcpy(j->a->values + to, j->m->values + from, (size_t)n * sizeof *j->a->values);
	copy_nibbles(j->a->deltas + to / 2, j->m->deltas, from, n);
}

int macko_align(const struct macko *m, struct macko_layout *a, const char *name,
		struct sp_err *err)
{
	memset(a, 0, sizeof *a);
	a->ends = malloc(((size_t)m->rows + 1) * sizeof *a->ends);
	if (!a->ends)
		goto oom;
	int64_t end = 0;
	a->ends[0] = 0;
	for (int64_t r = 0; r < m->rows; r++) {
		end = ((end + 7) & ~(int64_t)7) + (m->row_indices[r + 1] - m->row_indices[r]);
		if (end > INT32_MAX - 7) {
			macko_layout_free(a);
			return sp_fail(err, "%s: %lld stored elements once rows start at multiples of 8 "
					    "do not fit the GPU kernel's 32-bit indices",
				       name, (long long)end);
		}
		a->ends[r + 1] = (int32_t)end;
	}
	a->elements = (end + 7) & ~(int64_t)7;
	/* Zeroed: the gaps between rows must hold zero values and deltas. */
	a->values = macko_calloc((size_t)(a->elements ? a->elements : 8), sizeof *a->values);
	a->deltas = macko_calloc((size_t)(a->elements ? a->elements : 8) / 2, 1);
	if (!a->values || !a->deltas)
		goto oom;
	struct align_job j = {m, a};
	macko_for_rows(m->rows, m->cols, copy_row, &j);
	return 0;
oom:
	macko_layout_free(a);
	return sp_fail(err, "%s: out of memory for the GPU layout of %lld rows and %lld elements",
		       name, (long long)m->rows, (long long)m->elements);
}

void macko_layout_free(struct macko_layout *a)
{
	free(a->values);
	free(a->deltas);
	free(a->ends);
	memset(a, 0, sizeof *a);
}
