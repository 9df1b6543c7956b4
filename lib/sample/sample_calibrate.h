/* kernel-sample calibrate: how far a table kernel-sample makes stands from
 * what a framework runs. Each transformer operator (its shape columns all
 * among the encoder's mp, b, h, l, dim) is timed at an encoder's shape as
 * the sweeps time it, and set beside PyTorch's time for the same operator
 * and shape, read from scripts/bench-sample-torch.py's CSV made on the same
 * card. The default shapes are those of the H100 operator table the
 * project's anchors give (b4 h32 l2048 dim4096 for every operator, and
 * b8 h64 l4096 dim8192 too for linear1, layernorm, gelu and fused
 * attention), which is also what that script times.
 *
 * Beside the times, what an operator must do at least: the bytes a
 * memory-bound one reads and writes once (its rate then comparable to the
 * copy bandwidth), or the FLOPs of a GEMM or of fused attention (4 b h l^2 d
 * forward, half that causal, the backward 2.5 times the forward, as
 * FlashAttention counts them). */
#ifndef SPKIT_SAMPLE_CALIBRATE_H
#define SPKIT_SAMPLE_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "sample/sample_op.h"
#include "sample/sample_run.h"
#include "sample/sample_spec.h"

/* The default encoders (mp, b, h, l, dim). */
extern const int64_t sample_calibrate_small[5], sample_calibrate_large[5];

/* Whether op's columns are all among mp, b, h, l and dim, so that
 * sample_layer_shape gives its shape at an encoder. */
int sample_calibrate_fits(const struct sample_op *op);
/* Whether the default set times op at sample_calibrate_large too. */
int sample_calibrate_large_too(const char *op);

/* Bytes moved at least (read + written) by a memory-bound operator's
 * forward or backward, 0 for the GEMMs and fused attention; their FLOPs,
 * 0 for the others. st is the operator's layout (sample_op_layout). */
double sample_op_bytes(const char *op, const struct sample_state *st, int backward);
double sample_op_flops(const char *op, const struct sample_state *st, int backward);

/* "mp=1 b=4 l=2048 dim=4096": the shape as the PyTorch script names it. */
const char *sample_shape_named(const struct sample_op *op, const int64_t *shape, char *buf,
			       size_t size);

struct sample_calibration {
	int64_t shape[SAMPLE_MAX_DIMS];
	struct sample_times t;
	double bytes[2], flops[2]; /* forward, backward */
};

/* Whether op runs at encoder enc and precision p, checked as
 * sample_calibrate_one checks it, without the work: an unrunnable shape
 * is an error naming the operator and its shape. */
int sample_calibrate_check(const struct sample_op *op, const int64_t *enc,
			   enum sample_precision p, struct sp_err *err);

/* op at encoder enc: checked, set up, timed (wait + warmup untimed runs,
 * active timed, the trimmed mean), torn down. An unrunnable shape or a
 * failure is an error naming the operator and its shape. */
int sample_calibrate_one(const struct sample_op *op, const int64_t *enc,
			 const struct sample_clock *clock, enum sample_precision p, uint64_t seed,
			 int wait, int warmup, int active, struct sample_calibration *out,
			 struct sp_err *err);

/* The report's CSV: op, shape, precision, our F_dur(us) and B_dur(us),
 * rate_unit (GB/s of the bytes an operator must move, or TFLOP/s), F_rate,
 * B_rate, F_of_copy and B_of_copy (the rates over copy_gbs: memory-bound
 * operators with copy_gbs > 0), PyTorch's torch_F_dur(us) and
 * torch_B_dur(us), and ours over PyTorch's, F_ratio and B_ratio; a value
 * that does not apply is an empty cell. torch may be NULL. */
#define SAMPLE_CALIBRATE_COLUMNS 14
extern const char *const sample_calibrate_columns[SAMPLE_CALIBRATE_COLUMNS];
struct csv_writer;
struct sample_torch_table;
void sample_calibrate_write(struct csv_writer *w, const struct sample_op *op,
			    enum sample_precision p, const struct sample_calibration *c,
			    double copy_gbs, const struct sample_torch_table *torch);

/* PyTorch's times: the rows of bench-sample-torch.py's CSV (op, shape,
 * precision, F_dur(us), B_dur(us), device) at precision p. A file without
 * those columns, a row whose times are not numbers, one of another
 * precision, or a second row of one operator at one shape is an error
 * naming the file and the line. */
struct sample_torch_row {
	char op[64], shape[128];
	double fwd_us, bwd_us; /* bwd_us NAN where it has no backward */
};
struct sample_torch_table {
	struct sample_torch_row *rows;
	size_t n;
	char device[128];
};
int sample_torch_read(const char *path, enum sample_precision p, struct sample_torch_table *t,
		      struct sp_err *err);
/* The same from memory, `name` in its messages. */
int sample_torch_read_buffer(const void *data, size_t size, const char *name,
			     enum sample_precision p, struct sample_torch_table *t,
			     struct sp_err *err);
/* The row of op at shape (sample_shape_named's text), or NULL. */
const struct sample_torch_row *sample_torch_find(const struct sample_torch_table *t,
						 const char *op, const char *shape);
void sample_torch_free(struct sample_torch_table *t);

#endif
