/* libFuzzer target for MACKO .npz files (macko_read): any archive gives
 * either an error that starts with the file name, or a matrix that
 * macko_validate passed, which every consumer must then take without
 * reading out of bounds: decompression, the CPU product, statistics and the
 * GPU layout (macko_align). All in memory (fuzz_npz_stream.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_npz_stream.h"
#include "macko/macko.h"
#include "macko/macko_layout.h"
#include "macko/macko_npz.h"

/* Dense forms past this many entries are left to the unit tests: a valid
 * file may rightly claim a 2^31 x 2^31 matrix of no elements. */
enum { MAX_DENSE = 1 << 20 };

static void run_consumers(const struct macko *m)
{
	struct macko_stats s;
	macko_stats(m, &s);
	struct macko_layout a;
	struct sp_err err;
	if (macko_align(m, &a, "fuzz.npz", &err) == 0)
		macko_layout_free(&a);
	if (m->rows * m->cols > MAX_DENSE || m->rows * 2 > MAX_DENSE || m->cols * 2 > MAX_DENSE)
		return;
	uint16_t *dense = malloc((size_t)(m->rows * m->cols + 1) * sizeof *dense);
	float *x = malloc((size_t)(2 * m->cols + 1) * sizeof *x);
	double *y = malloc((size_t)(2 * m->rows + 1) * sizeof *y);
	if (dense && x && y) {
		macko_decompress(m, dense);
		for (int64_t i = 0; i < 2 * m->cols; i++)
			x[i] = (float)(i % 7) - 3;
		macko_spmv_ref(m, x, 2, 1.0, 0.0, NULL, y);
	}
	free(dense);
	free(x);
	free(y);
}

static void read_matrix(struct npz *z)
{
	struct macko m;
	struct sp_err err;
	if (macko_read(z, "fuzz.npz", &m, &err) == 0) {
		run_consumers(&m);
		macko_free(&m);
	} else if (strncmp(err.msg, "fuzz.npz", 8) != 0) {
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_npz_stream(data, size, read_matrix);
	return 0;
}
