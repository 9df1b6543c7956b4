/* MACKO compression (dense fp16 and CSR), decompression, validation and
 * statistics. The format is described in macko.h.
 *
 * Zero means +0 or -0 (fp16 0x0000 or 0x8000): both are skipped, and every
 * stored zero (the 16th zero of a run) is written as +0, so decompressing
 * gives back the input exactly except that -0 comes back as +0. NaN and inf
 * are nonzeros and are stored as they are.
 *
 * Compression is two passes over fixed blocks of rows, in parallel: count
 * each row's stored elements, prefix-sum them into row_indices, then write
 * values and deltas. The blocks depend only on the shape, and each block's
 * output position only on the counts, so the result is the same for any
 * thread count.
 *
 * Dense rows go 64 columns at a time through a bit mask of their nonzeros
 * (SSE2 compares, or a portable four-at-a-time trick). Counting is then a
 * popcount per chunk; writing a chunk without long gaps packs eight columns
 * at a time with a byte shuffle (SSSE3, checked at run time), else walks
 * the mask's bits. A 28672 x 8192 matrix at density 0.5 (0.47 GB of fp16)
 * compresses in 0.31-0.36 s on one core of a Sapphire-Rapids-class Xeon
 * (0.65-0.76 s per GB), 0.17-0.19 s on two, 0.035 s on sixteen; counting
 * alone is 0.09 s of it, a plain read of the input. Density 0.1: 0.36 s,
 * 0.9: 0.31 s, on one core. */
#include "macko/macko.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <tmmintrin.h>
#endif

#include "core/half.h"
#include "macko/macko_blocks.h"
#include "core/parallel.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nonzero_mask reads four halves as one little-endian word"
#endif

/* calloc, asking for transparent huge pages when the block is large: the
 * arrays of a big matrix are written once, right away, and with 4 KiB pages
 * the kernel's page faults took about a quarter of the compression time. calloc
 * of a large block is a fresh mapping, untouched, so the hint comes before
 * any page is faulted in; it is only a hint. */
void *macko_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	if (p && n * size >= 2 * huge) {
		uintptr_t from = ((uintptr_t)p + huge - 1) & ~(huge - 1);
		uintptr_t to = ((uintptr_t)p + n * size) & ~(huge - 1);
		madvise((void *)from, to - from, MADV_HUGEPAGE);
	}
#endif
	return p;
}

int macko_alloc(struct macko *m, int64_t rows, int64_t cols, int64_t elements, const char *name,
		struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	if (rows < 0 || cols < 0 || rows > CSR_MAX_DIM || cols > CSR_MAX_DIM)
		return sp_fail(err, "%s: shape %lld x %lld is outside 0..%lld", name, (long long)rows,
			       (long long)cols, (long long)CSR_MAX_DIM);
	if (elements < 0 || elements > INT32_MAX)
		return sp_fail(err, "%s: %lld stored elements do not fit MACKO's int32 row_indices",
			       name, (long long)elements);
	m->rows = rows;
	m->cols = cols;
	m->elements = elements;
	m->padded = (elements + MACKO_PAD - 1) / MACKO_PAD * MACKO_PAD;
	/* Zeroed: the padding must be zero, and compression ORs a nibble into
	 * the last delta byte of a row block (fix_block_ends). */
	m->values = macko_calloc((size_t)(m->padded ? m->padded : MACKO_PAD), sizeof *m->values);
	m->deltas = macko_calloc((size_t)(m->padded ? m->padded : MACKO_PAD) / 2, 1);
	m->row_indices = calloc((size_t)rows + 1, sizeof *m->row_indices);
	if (!m->values || !m->deltas || !m->row_indices) {
		macko_free(m);
		return sp_fail(err, "%s: out of memory for %lld rows and %lld stored elements", name,
			       (long long)rows, (long long)elements);
	}
	return 0;
}

void macko_free(struct macko *m)
{
	free(m->values);
	free(m->deltas);
	free(m->row_indices);
	memset(m, 0, sizeof *m);
}

/* --- writing elements ---------------------------------------------------- */

/* Writes one row block's elements, the run [k0, k1) of global element
 * indices. Rows are packed back to back, so a delta byte can hold the last
 * element of one block (low nibble, even index) and the first of the next
 * (high nibble, odd index), and the next block is another thread's. The
 * writer makes the later block the only one to store a shared byte (with a
 * zero low nibble); the earlier block's nibble is left pending at its end
 * and ORed in by a sequential fix-up after the parallel pass. So every byte
 * has one writer at a time, with no atomics or locks in the inner loop, and
 * the fix-up is one byte per block.
 *
 * Deltas collect in a 64-bit register, sixteen nibbles, stored eight bytes
 * at a time. (Collecting them as bytes in memory and packing those with
 * 8-byte loads was slower: each load spans several smaller stores still in
 * flight, which the processor cannot forward.) */
struct writer {
	uint16_t *values;
	uint8_t *deltas;
	int64_t k;     /* the next element */
	int64_t end;   /* the block's k1: put_chunk8 may scribble below it, never at or past */
	uint64_t acc;  /* the deltas of elements k - fill .. k - 1, k - fill even */
	int fill;
};

static inline struct writer writer_start(uint16_t *values, uint8_t *deltas, int64_t k0,
					 int64_t k1)
{
	/* At an odd start the first byte's low nibble is the previous block's:
	 * stored here as zero, ORed in later. */
	return (struct writer){values, deltas, k0, k1, 0, (int)(k0 & 1)};
}

/* Append n <= 8 deltas, nibble i of `nibbles` (higher nibbles zero). */
static inline void put_deltas(struct writer *w, uint32_t nibbles, int n)
{
	w->acc |= (uint64_t)nibbles << (4 * w->fill);
	w->fill += n;
	w->k += n;
	if (w->fill >= 16) {
		memcpy(w->deltas + ((w->k - w->fill) >> 1), &w->acc, sizeof w->acc);
		w->fill -= 16;
		w->acc = w->fill ? (uint64_t)nibbles >> (4 * (n - w->fill)) : 0;
	}
}

static inline void put(struct writer *w, uint16_t value, unsigned delta)
{
	w->values[w->k] = value;
	put_deltas(w, delta, 1);
}

/* The whole bytes still held; returns the nibble of a last, half byte (the
 * block ends at an odd index), which the fix-up ORs in. */
static inline unsigned writer_finish(struct writer *w)
{
	uint8_t *out = w->deltas + ((w->k - w->fill) >> 1);
	for (; w->fill >= 2; w->fill -= 2, w->acc >>= 8)
		*out++ = (uint8_t)w->acc;
	return (unsigned)w->acc & 0xfu;
}

/* Elements stored for a nonzero after `gap` zeros: every 16th zero of the
 * gap, then the nonzero. */
static inline int64_t stored_after_gap(int64_t gap)
{
	return 1 + gap / (MACKO_MAX_DELTA + 1);
}

static inline void put_after_gap(struct writer *w, int64_t gap, uint16_t value)
{
	for (; gap > MACKO_MAX_DELTA; gap -= MACKO_MAX_DELTA + 1)
		put(w, 0, MACKO_MAX_DELTA);
	put(w, value, (unsigned)gap);
}

/* --- sources: where the rows come from ----------------------------------- */

struct source {
	int64_t rows, cols;
	int64_t (*count_row)(const struct source *s, int64_t r);
	void (*fill_row)(const struct source *s, int64_t r, struct writer *w);
	const uint16_t *dense;
	const struct csr *csr;
};

/* Bit i set when p[i] is not zero, for n <= 64 halves. */
static inline uint64_t nonzero_mask(const uint16_t *p, int n)
{
	uint64_t mask = 0;
	int i = 0;
#ifdef __SSE2__
	/* Sixteen at a time: compare with zero after clearing the sign, pack
	 * the 16-bit answers to bytes, take their top bits. */
	const __m128i abs = _mm_set1_epi16(0x7fff), zero = _mm_setzero_si128();
	for (; i + 16 <= n; i += 16) {
		__m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(p + i)), abs);
		__m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(p + i + 8)), abs);
		__m128i is_zero = _mm_packs_epi16(_mm_cmpeq_epi16(a, zero), _mm_cmpeq_epi16(b, zero));
		mask |= (uint64_t)(uint16_t)~_mm_movemask_epi8(is_zero) << i;
	}
#endif
	/* Four at a time, portably: with the sign cleared a lane is at most
	 * 0x7fff, so adding 0x7fff sets the lane's top bit exactly when the
	 * lane is nonzero, never carrying into the next lane; the multiply
	 * gathers the lanes' bits (at 0, 16, 32, 48) into bits 48..51 without
	 * overlapping partial products. */
	const uint64_t abs4 = 0x7fff7fff7fff7fffULL;
	for (; i + 4 <= n; i += 4) {
		uint64_t w;
		memcpy(&w, p + i, sizeof w);
		w = (((w & abs4) + abs4) >> 15) & 0x0001000100010001ULL;
		mask |= ((w * 0x0001000200040008ULL) >> 48) << i;
	}
	for (; i < n; i++)
		mask |= (uint64_t)!half_is_zero(p[i]) << i;
	return mask;
}

/* Whether the n-bit chunk holds 16 zero bits in a row anywhere. */
static inline int has_long_gap(uint64_t mask, int n)
{
	uint64_t z = ~mask & (n == 64 ? ~0ULL : (1ULL << n) - 1);
	z &= z >> 1;
	z &= z >> 2;
	z &= z >> 4;
	z &= z >> 8;
	return z != 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* Eight columns at a time with SSSE3's byte shuffle, where the processor has
 * it (checked at run time; the build stays baseline x86-64). For each 8-bit
 * nonzero mask, a table gives the shuffle that moves the selected halves to
 * the front of a 16-byte register, their deltas as bytes (the first counted
 * from the group's first column), their number, and the zeros after the
 * last. A group is then a load, a shuffle, a 16-byte store and two table
 * reads, with no branch on the data: about four times fewer instructions
 * per element than the bit-by-bit loop at density 0.5. */
#define HAVE_PACK8 1
static struct pack8 {
	uint8_t shuffle[16];
	uint32_t deltas; /* a nibble each */
	uint8_t count, zeros_after;
} pack8[256];
static int pack8_ready;
static pthread_once_t pack8_once = PTHREAD_ONCE_INIT;

static void pack8_init(void)
{
	if (!__builtin_cpu_supports("ssse3"))
		return;
	for (int m = 0; m < 256; m++) {
		struct pack8 *t = &pack8[m];
		int n = 0, prev = -1;
		memset(t->shuffle, 0x80, sizeof t->shuffle); /* 0x80: a zero byte */
		for (int b = 0; b < 8; b++) {
			if (!(m >> b & 1))
				continue;
			t->shuffle[2 * n] = (uint8_t)(2 * b);
			t->shuffle[2 * n + 1] = (uint8_t)(2 * b + 1);
			t->deltas |= (uint32_t)(b - prev - 1) << (4 * n);
			prev = b;
			n++;
		}
		t->count = (uint8_t)n;
		t->zeros_after = (uint8_t)(7 - prev);
	}
	pack8_ready = 1;
}

/* A full chunk of 64 columns without a run of 16 zeros, `run` zeros before
 * it (the first gap under 16). Group g's 16-byte store writes eight values
 * from element k + (kept so far) <= k + 8g, of which `count` are kept and
 * the rest overwritten by the next group or the next chunk: it never
 * reaches past k + 63, so the caller leaves 64 elements of room before
 * w->end, the block's own end (past it the next block, another thread's).
 * The delta bytes likewise stay below delta[64]. */
__attribute__((target("ssse3"))) static void put_chunk8(struct writer *out, const uint16_t *src,
							 uint64_t mask, int64_t *run)
{
	struct writer w = *out; /* in registers: the delta stores could alias *out */
	int64_t r = *run;
#pragma GCC unroll 8
	for (int g = 0; g < 64; g += 8) {
		const struct pack8 *t = &pack8[(mask >> g) & 0xff];
		__m128i v = _mm_loadu_si128((const __m128i *)(src + g));
		__m128i order = _mm_loadu_si128((const __m128i *)t->shuffle);
		_mm_storeu_si128((__m128i *)(w.values + w.k), _mm_shuffle_epi8(v, order));
		if (t->count) {
			/* r <= 15 - the first delta: no carry out of its nibble */
			put_deltas(&w, t->deltas + (uint32_t)r, t->count);
			r = t->zeros_after;
		} else {
			r += 8;
		}
	}
	*run = r;
	*out = w;
}
#else
#define HAVE_PACK8 0
#define pack8_ready 0
#define put_chunk8(w, src, mask, run) ((void)0)
#endif

/* Rows are walked 64 columns at a time through nonzero masks; `run` carries
 * the zeros since the last nonzero across chunks. Trailing zeros are never
 * followed by a nonzero, so nothing is stored for them: the trim. */
static int64_t dense_count_row(const struct source *s, int64_t r)
{
	const uint16_t *row = s->dense + r * s->cols;
	int64_t stored = 0, run = 0;
	for (int64_t c = 0; c < s->cols; c += 64) {
		int n = s->cols - c < 64 ? (int)(s->cols - c) : 64;
		uint64_t mask = nonzero_mask(row + c, n);
		if (!mask) {
			run += n;
		} else if (!has_long_gap(mask, n)) {
			/* the usual case at MACKO's densities: only the gap
			 * before the first nonzero can reach 16 */
			stored += __builtin_popcountll(mask) +
				  (run + __builtin_ctzll(mask)) / (MACKO_MAX_DELTA + 1);
			run = n - 64 + __builtin_clzll(mask);
		} else {
			int pos = 0;
			for (; mask; mask &= mask - 1) {
				int p = __builtin_ctzll(mask);
				stored += stored_after_gap(run + p - pos);
				run = 0;
				pos = p + 1;
			}
			run += n - pos;
		}
	}
	return stored;
}

/* Whether a chunk stores nothing but its nonzeros: no gap in it, the one
 * before its first nonzero included, reaches 16 zeros. */
static inline int chunk_is_plain(uint64_t mask, int n, int64_t run)
{
	return mask && !has_long_gap(mask, n) && run + __builtin_ctzll(mask) <= MACKO_MAX_DELTA;
}

/* A plain chunk one nonzero at a time. */
static inline void put_chunk(struct writer *w, const uint16_t *src, uint64_t mask, int n,
			     int64_t *run)
{
	int64_t prev = -*run - 1; /* the last nonzero's column, from the chunk's first */
	do {
		int64_t p = __builtin_ctzll(mask);
		put(w, src[p], (unsigned)(p - prev - 1));
		prev = p;
		mask &= mask - 1;
	} while (mask);
	*run = n - 1 - prev;
}

/* Any chunk: every 16th zero of a long gap stored as an explicit zero. */
static inline void put_chunk_with_gaps(struct writer *w, const uint16_t *src, uint64_t mask,
				       int n, int64_t *run)
{
	int pos = 0;
	for (; mask; mask &= mask - 1) {
		int p = __builtin_ctzll(mask);
		put_after_gap(w, *run + p - pos, src[p]);
		*run = 0;
		pos = p + 1;
	}
	*run += n - pos;
}

static void dense_fill_row(const struct source *s, int64_t r, struct writer *out)
{
	const uint16_t *row = s->dense + r * s->cols;
	struct writer w = *out; /* in registers: the delta stores could alias *out */
	int64_t run = 0;
	for (int64_t c = 0; c < s->cols; c += 64) {
		int n = s->cols - c < 64 ? (int)(s->cols - c) : 64;
		uint64_t mask = nonzero_mask(row + c, n);
		if (!chunk_is_plain(mask, n, run))
			put_chunk_with_gaps(&w, row + c, mask, n, &run);
		else if (n == 64 && pack8_ready && w.end - w.k >= 64)
			put_chunk8(&w, row + c, mask, &run);
		else
			put_chunk(&w, row + c, mask, n, &run);
	}
	*out = w;
}

/* One walk for both passes: counts when w is NULL, writes otherwise. */
static int64_t csr_walk_row(const struct source *s, int64_t r, struct writer *w)
{
	const struct csr *a = s->csr;
	int64_t stored = 0, prev = -1;
	for (int64_t j = a->indptr[r]; j < a->indptr[r + 1]; j++) {
		uint16_t h = half_from_float(a->values[j]);
		if (half_is_zero(h))
			continue; /* rounded to zero: dropped */
		int64_t gap = a->indices[j] - prev - 1;
		if (w)
			put_after_gap(w, gap, h);
		else
			stored += stored_after_gap(gap);
		prev = a->indices[j];
	}
	return stored;
}

static int64_t csr_count_row(const struct source *s, int64_t r)
{
	return csr_walk_row(s, r, NULL);
}

static void csr_fill_row(const struct source *s, int64_t r, struct writer *w)
{
	csr_walk_row(s, r, w);
}

/* --- the two passes ------------------------------------------------------ */

struct compress_job {
	const struct source *src;
	int64_t per_block;
	int32_t *counts; /* pass 1: stored elements per row */
	struct macko *m; /* pass 2 */
	unsigned *low;   /* pass 2: per block, the pending nibble of its last byte */
};

static void count_row(void *ctx, int64_t r)
{
	struct compress_job *j = ctx;
	j->counts[r] = (int32_t)j->src->count_row(j->src, r); /* at most cols */
}

static void fill_block(void *ctx, int64_t b)
{
	struct compress_job *j = ctx;
	int64_t r0 = b * j->per_block, r1 = macko_block_end(r0, j->per_block, j->src->rows);
	struct writer w = writer_start(j->m->values, j->m->deltas, j->m->row_indices[r0],
				       j->m->row_indices[r1]);
	for (int64_t r = r0; r < r1; r++)
		j->src->fill_row(j->src, r, &w);
	j->low[b] = writer_finish(&w);
}

/* A block that ends at an odd index (its last element even) owes the low
 * nibble of its last byte; the byte is zero or holds the next block's high
 * nibble. */
static void fix_block_ends(const struct compress_job *j, int64_t blocks)
{
	const struct macko *m = j->m;
	for (int64_t b = 0; b < blocks; b++) {
		int64_t r0 = b * j->per_block, r1 = macko_block_end(r0, j->per_block, m->rows);
		int64_t k0 = m->row_indices[r0], k1 = m->row_indices[r1];
		if (k1 > k0 && (k1 & 1))
			m->deltas[k1 >> 1] |= (uint8_t)j->low[b];
	}
}

static int compress(const struct source *src, struct macko *m, const char *name,
		    struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	if (src->rows < 0 || src->cols < 0 || src->rows > CSR_MAX_DIM || src->cols > CSR_MAX_DIM)
		return sp_fail(err, "%s: shape %lld x %lld is outside 0..%lld", name,
			       (long long)src->rows, (long long)src->cols, (long long)CSR_MAX_DIM);
	struct compress_job j = {src, macko_block_rows(src->cols), NULL, m, NULL};
	int64_t blocks = macko_block_count(src->rows, j.per_block);
	j.counts = malloc((size_t)(src->rows ? src->rows : 1) * sizeof *j.counts);
	j.low = malloc((size_t)(blocks ? blocks : 1) * sizeof *j.low);
	int rc = -1;
	if (!j.counts || !j.low) {
		sp_fail(err, "%s: out of memory for %lld rows", name, (long long)src->rows);
		goto out;
	}
	macko_for_rows(src->rows, src->cols, count_row, &j);
	int64_t total = 0;
	for (int64_t r = 0; r < src->rows; r++)
		total += j.counts[r];
	if (total > INT32_MAX) {
		sp_fail(err,
			"%s: the %lld x %lld matrix needs %lld stored elements, more than MACKO's "
			"int32 row_indices can count (%d)",
			name, (long long)src->rows, (long long)src->cols, (long long)total, INT32_MAX);
		goto out;
	}
	if (macko_alloc(m, src->rows, src->cols, total, name, err))
		goto out;
	for (int64_t r = 0; r < src->rows; r++)
		m->row_indices[r + 1] = m->row_indices[r] + j.counts[r];
	parallel_for(blocks, fill_block, &j);
	fix_block_ends(&j, blocks);
	rc = 0;
out:
	free(j.counts);
	free(j.low);
	return rc;
}

uint64_t macko_compress_bytes(int64_t rows, int64_t cols)
{
	uint64_t padded = ((uint64_t)rows * (uint64_t)cols + MACKO_PAD - 1) / MACKO_PAD * MACKO_PAD;
	return padded * sizeof(uint16_t) + padded / 2 + ((uint64_t)rows + 1) * sizeof(int32_t) +
	       (uint64_t)rows * sizeof(int32_t);
}

int macko_compress_dense(const uint16_t *dense, int64_t rows, int64_t cols, struct macko *m,
			 const char *name, struct sp_err *err)
{
#if HAVE_PACK8
	pthread_once(&pack8_once, pack8_init);
#endif
	struct source src = {rows, cols, dense_count_row, dense_fill_row, dense, NULL};
	return compress(&src, m, name, err);
}

int macko_compress_csr(const struct csr *a, struct macko *m, const char *name, struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	if (csr_validate(a, CSR_CHECK_UNIQUE, name, err))
		return -1;
	if (!a->values && a->nnz > 0)
		return sp_fail(err, "%s: a pattern matrix (no values) has nothing to compress", name);
	/* A finite value past fp16's range is refused, as a dense .npy's is
	 * (npy_convert.c), rather than stored as an Inf. */
	for (int64_t r = 0; r < a->nrows; r++)
		for (int64_t j = a->indptr[r]; j < a->indptr[r + 1]; j++)
			if (isfinite(a->values[j]) && half_is_nonfinite(half_from_float(a->values[j])))
				return sp_fail(err, "%s: the value at row %lld, column %lld (%.9g) "
						    "overflows f2",
					       name, (long long)r, (long long)a->indices[j],
					       (double)a->values[j]);
	struct source src = {a->nrows, a->ncols, csr_count_row, csr_fill_row, NULL, a};
	return compress(&src, m, name, err);
}

/* --- reading ------------------------------------------------------------- */

struct row_blocks {
	int64_t rows, per_block;
	macko_row_fn fn;
	void *ctx;
};

static void row_block(void *ctx, int64_t b)
{
	const struct row_blocks *j = ctx;
	int64_t r0 = b * j->per_block, r1 = macko_block_end(r0, j->per_block, j->rows);
	for (int64_t r = r0; r < r1; r++)
		j->fn(j->ctx, r);
}

void macko_for_rows(int64_t rows, int64_t cols, macko_row_fn fn, void *ctx)
{
	struct row_blocks j = {rows, macko_block_rows(cols), fn, ctx};
	parallel_for(macko_block_count(rows, j.per_block), row_block, &j);
}

struct decompress_job {
	const struct macko *m;
	uint16_t *dense;
};

static void decompress_row(void *ctx, int64_t r)
{
	const struct decompress_job *j = ctx;
	const struct macko *m = j->m;
	uint16_t *row = j->dense + r * m->cols;
	memset(row, 0, (size_t)m->cols * sizeof *row);
	int64_t col = -1;
	for (int64_t k = m->row_indices[r]; k < m->row_indices[r + 1]; k++) {
		col += 1 + macko_delta(m->deltas, k);
		if (!half_is_zero(m->values[k]))
			row[col] = m->values[k];
	}
}

/* m must be valid (macko_validate): columns are not checked here. */
void macko_decompress(const struct macko *m, uint16_t *dense)
{
	struct decompress_job j = {m, dense};
	macko_for_rows(m->rows, m->cols, decompress_row, &j);
}

int macko_validate(const struct macko *m, const char *name, struct sp_err *err)
{
	if (m->rows < 0 || m->cols < 0 || m->rows > CSR_MAX_DIM || m->cols > CSR_MAX_DIM)
		return sp_fail(err, "%s: shape %lld x %lld is outside 0..%lld", name,
			       (long long)m->rows, (long long)m->cols, (long long)CSR_MAX_DIM);
	if (m->padded < 0 || m->padded % MACKO_PAD != 0)
		return sp_fail(err, "%s: padded length %lld is not a multiple of %d", name,
			       (long long)m->padded, MACKO_PAD);
	if (m->elements < 0 || m->elements > m->padded)
		return sp_fail(err, "%s: %lld elements stored in arrays of %lld", name,
			       (long long)m->elements, (long long)m->padded);
	if (!m->row_indices || (m->padded > 0 && (!m->values || !m->deltas)))
		return sp_fail(err, "%s: arrays missing", name);
	const int32_t *ri = m->row_indices;
	if (ri[0] != 0)
		return sp_fail(err, "%s: row_indices[0] is %d, expected 0", name, ri[0]);
	for (int64_t r = 0; r < m->rows; r++) {
		if (ri[r + 1] < ri[r])
			return sp_fail(err, "%s: row %lld: row_indices decrease (%d after %d)", name,
				       (long long)r, ri[r + 1], ri[r]);
		if (ri[r + 1] > m->elements)
			return sp_fail(err, "%s: row %lld: ends at element %d, past the %lld stored",
				       name, (long long)r, ri[r + 1], (long long)m->elements);
	}
	if (ri[m->rows] != m->elements)
		return sp_fail(err, "%s: row_indices end at %d but %lld elements are stored", name,
			       ri[m->rows], (long long)m->elements);
	/* Columns increase along a row, so the row's last one is its largest. */
	for (int64_t r = 0; r < m->rows; r++) {
		int64_t last = ri[r + 1] - ri[r] - 1;
		for (int64_t k = ri[r]; k < ri[r + 1]; k++)
			last += macko_delta(m->deltas, k);
		if (last < m->cols)
			continue;
		int64_t col = -1;
		for (int64_t k = ri[r];; k++) {
			col += 1 + macko_delta(m->deltas, k);
			if (col >= m->cols)
				return sp_fail(err, "%s: row %lld: element %lld falls in column %lld of %lld",
					       name, (long long)r, (long long)(k - ri[r]),
					       (long long)col, (long long)m->cols);
		}
	}
	return 0;
}

void macko_stats(const struct macko *m, struct macko_stats *s)
{
	memset(s, 0, sizeof *s);
	s->rows = m->rows;
	s->cols = m->cols;
	s->stored = m->elements;
	for (int64_t k = 0; k < m->elements; k++)
		s->nonzeros += !half_is_zero(m->values[k]);
	s->padding_zeros = s->stored - s->nonzeros;
	double entries = (double)m->rows * (double)m->cols;
	s->density = entries > 0 ? s->nonzeros / entries : 0;
	s->effective_density = entries > 0 ? s->stored / entries : 0;
	int64_t row_index_bytes = (m->rows + 1) * 4;
	s->bytes_macko = m->padded * 2 + m->padded / 2 + row_index_bytes;
	s->bytes_dense_fp16 = m->rows * m->cols * 2;
	s->bytes_csr32 = s->nonzeros * 6 + row_index_bytes;
	s->bytes_csr16 = s->nonzeros * 4 + row_index_bytes;
}
