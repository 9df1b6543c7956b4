/* libFuzzer target for kernel-sample calibrate's PyTorch CSV
 * (sample_torch_read_buffer): the input as scripts/bench-sample-torch.py's
 * output at fp16. Properties: no crash, leak or hang; every error names
 * the file and leaves the table empty; every row read has a
 * finite forward time >= 0, a backward that is NaN (none) or >= 0, and is
 * the one row of its operator and shape, the row sample_torch_find finds. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "sample/sample_calibrate.h"

#define NAME "torch.csv"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_torch_table t;
	struct sp_err err;
	if (sample_torch_read_buffer(data, size, NAME, SAMPLE_FP16, &t, &err)) {
		if (strncmp(err.msg, NAME, strlen(NAME)) || t.rows || t.n)
			abort();
		return 0;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct sample_torch_row *r = &t.rows[i];
		if (!isfinite(r->fwd_us) || r->fwd_us < 0 || (!isnan(r->bwd_us) && r->bwd_us < 0) ||
		    !memchr(r->op, 0, sizeof r->op) || !memchr(r->shape, 0, sizeof r->shape))
			abort();
		const struct sample_torch_row *found = sample_torch_find(&t, r->op, r->shape);
		if (found != r)
			abort();
	}
	sample_torch_free(&t);
	return 0;
}
