/* kernel-sample calibrate (sample_calibrate.h). */
#include "sample/sample_calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "core/strmap.h"
#include "formats/csv_reader.h"
#include "formats/csv_writer.h"
#include "sample/sample_layer.h"

const int64_t sample_calibrate_small[5] = {1, 4, 32, 2048, 4096};
const int64_t sample_calibrate_large[5] = {1, 8, 64, 4096, 8192};

int sample_calibrate_fits(const struct sample_op *op)
{
	int64_t shape[SAMPLE_MAX_DIMS];
	return !sample_layer_shape(op->name, op->shape_names, op->nshape, sample_calibrate_small,
				   shape, NULL);
}

int sample_calibrate_large_too(const char *op)
{
	return !strcmp(op, "linear1") || !strcmp(op, "layernorm") || !strcmp(op, "gelu") ||
	       sample_is_attention(op);
}

static double tensor_bytes(const struct sample_state *st, int i)
{
	return (double)st->t[i].count * (double)sample_tensor_elem_bytes(&st->t[i], st->p);
}

double sample_op_bytes(const char *op, const struct sample_state *st, int backward)
{
#define B(i) tensor_bytes(st, i)
	if (!strcmp(op, "layernorm") || !strcmp(op, "RMSlayernorm"))
		return backward ? B(NORM_X) + B(NORM_DY) + B(NORM_DX) : B(NORM_X) + B(NORM_Y);
	if (!strcmp(op, "gelu"))
		return backward ? B(ELT_X) + B(ELT_DY) + B(ELT_DX) : B(ELT_X) + B(ELT_Y);
	if (!strcmp(op, "res_add"))
		return backward ? 0 : B(ELT_X) + B(ELT_X2) + B(ELT_Y);
	if (!strcmp(op, "softmax"))
		return backward ? B(SM_Y) + B(SM_DY) + B(SM_DX) : B(SM_X) + B(SM_Y);
	if (!strcmp(op, "ScaledUpperTriangMaskedSoftmax")) /* the kept lower triangle read */
		return backward ? (B(SM_Y) + B(SM_DY)) / 2 + B(SM_DX) : B(SM_X) / 2 + B(SM_Y);
	if (!strcmp(op, "RoPE"))
		return 2 * (B(ROPE_Q) + B(ROPE_K));
	if (!strcmp(op, "fillmask")) /* the upper triangle written */
		return B(MASK_S) / 2;
	if (!strcmp(op, "parallel_cross_entropy_128"))
		return backward ? 2 * B(XENT_LOGITS) : B(XENT_LOGITS);
	if (!strcmp(op, "embedding"))
		return backward ? B(EMB_DY) + B(EMB_DW) : 2 * B(EMB_Y);
	return 0;
#undef B
}

double sample_op_flops(const char *op, const struct sample_state *st, int backward)
{
	const struct sample_dims *d = &st->d;
	if (sample_is_attention(op))
		return (backward ? 2.5 : 1.0) * 4.0 * (double)d->batch * (double)d->heads *
		       (double)d->seq * (double)d->seq * (double)d->cols *
		       (strcmp(op, "flash_atten_causal") ? 1.0 : 0.5);
	if (!strncmp(op, "linear", 6) || !strcmp(op, "bmm") || !strcmp(op, "baddbmm"))
		return (backward ? 4.0 : 2.0) * (double)(d->batch ? d->batch : 1) * (double)d->m *
		       (double)d->n * (double)d->k;
	return 0;
}

const char *sample_shape_named(const struct sample_op *op, const int64_t *shape, char *buf,
			       size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < op->nshape && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", i ? " " : "",
				      op->shape_names[i], (long long)shape[i]);
	return buf;
}

/* op's shape at encoder enc, one it runs at precision p. */
static int calibrate_shape(const struct sample_op *op, const int64_t *enc,
			   enum sample_precision p, int64_t *shape, struct sp_err *err)
{
	char text[128];
	if (sample_layer_shape(op->name, op->shape_names, op->nshape, enc, shape, err))
		return -1;
	if (op->check(shape, err) || sample_check_precision(op->name, p, err))
		return sp_err_prefix(err, "%s %s", op->name,
				     sample_shape_named(op, shape, text, sizeof text));
	return 0;
}

int sample_calibrate_check(const struct sample_op *op, const int64_t *enc,
			   enum sample_precision p, struct sp_err *err)
{
	int64_t shape[SAMPLE_MAX_DIMS];
	return calibrate_shape(op, enc, p, shape, err);
}

int sample_calibrate_one(const struct sample_op *op, const int64_t *enc,
			 const struct sample_clock *clock, enum sample_precision p, uint64_t seed,
			 int wait, int warmup, int active, struct sample_calibration *out,
			 struct sp_err *err)
{
	char text[128];
	void *state = NULL;
	struct sample_state layout = {0};
	memset(out, 0, sizeof *out);
	if (calibrate_shape(op, enc, p, out->shape, err))
		return -1;
	sample_shape_named(op, out->shape, text, sizeof text);
	if (op->setup(out->shape, p, seed, &state, err))
		return sp_err_prefix(err, "%s %s", op->name, text);
	int rc = sample_time_schedule(clock, op->forward, op->backward, state, state,
				      wait + warmup, active, NULL, &out->t, err);
	op->teardown(state);
	if (rc)
		return sp_err_prefix(err, "%s %s", op->name, text);
	sample_op_layout(op->name)(out->shape, &layout);
	layout.p = p;
	for (int b = 0; b < 2; b++) {
		out->bytes[b] = sample_op_bytes(op->name, &layout, b);
		out->flops[b] = sample_op_flops(op->name, &layout, b);
	}
	return 0;
}

const char *const sample_calibrate_columns[SAMPLE_CALIBRATE_COLUMNS] = {
	"op",        "shape",     "precision", "F_dur(us)",       "B_dur(us)",
	"rate_unit", "F_rate",    "B_rate",    "F_of_copy",       "B_of_copy",
	"torch_F_dur(us)", "torch_B_dur(us)", "F_ratio", "B_ratio"};

static void write_value(struct csv_writer *w, double v)
{
	if (isnan(v))
		csv_writer_str(w, "");
	else
		csv_writer_double(w, v, 4);
}

void sample_calibrate_write(struct csv_writer *w, const struct sample_op *op,
			    enum sample_precision p, const struct sample_calibration *c,
			    double copy_gbs, const struct sample_torch_table *torch)
{
	char shape[128];
	const int flops = c->flops[0] > 0;
	const double us[2] = {c->t.fwd_us, op->backward ? c->t.bwd_us : NAN};
	sample_shape_named(op, c->shape, shape, sizeof shape);
	const struct sample_torch_row *t = torch ? sample_torch_find(torch, op->name, shape) : NULL;
	const double theirs[2] = {t ? t->fwd_us : NAN, t ? t->bwd_us : NAN};
	double rate[2];
	for (int b = 0; b < 2; b++) {
		const double amount = flops ? c->flops[b] / 1e12 : c->bytes[b] / 1e9;
		rate[b] = amount > 0 && us[b] > 0 ? amount / (us[b] * 1e-6) : NAN;
	}
	csv_writer_str(w, op->name);
	csv_writer_str(w, shape);
	csv_writer_str(w, sample_precision_name(p));
	for (int b = 0; b < 2; b++)
		sample_write_us(w, us[b]);
	csv_writer_str(w, flops ? "TFLOP/s" : "GB/s");
	for (int b = 0; b < 2; b++)
		write_value(w, rate[b]);
	for (int b = 0; b < 2; b++)
		write_value(w, !flops && copy_gbs > 0 ? rate[b] / copy_gbs : NAN);
	for (int b = 0; b < 2; b++)
		sample_write_us(w, theirs[b]);
	for (int b = 0; b < 2; b++)
		write_value(w, theirs[b] > 0 ? us[b] / theirs[b] : NAN);
}

/* --- PyTorch's CSV --- */

enum { TORCH_OP, TORCH_SHAPE, TORCH_PRECISION, TORCH_FWD, TORCH_BWD, TORCH_DEVICE, TORCH_COLS };
static const char *const torch_columns[TORCH_COLS] = {
	"op", "shape", "precision", "F_dur(us)", "B_dur(us)", "device"};

struct torch_scan {
	const char *path;
	enum sample_precision p;
	int col[TORCH_COLS];
	struct sample_torch_table *t;
	size_t cap;
	struct strmap seen; /* each row's op and shape, joined by a NUL: its line */
};

/* A second row of one operator at one shape is an error: which of the two
 * times is PyTorch's cannot be told. */
static int torch_once(struct torch_scan *s, const struct sample_torch_row *r, size_t line,
		      struct sp_err *err)
{
	char key[sizeof r->op + sizeof r->shape];
	size_t oplen = strlen(r->op) + 1, shapelen = strlen(r->shape);
	memcpy(key, r->op, oplen);
	memcpy(key + oplen, r->shape, shapelen);
	int added;
	size_t *first = strmap_insert(&s->seen, key, oplen + shapelen, &added);
	if (!first)
		return sp_fail(err, "%s: out of memory", s->path);
	if (!added)
		return sp_fail(err,
			       "%s: line %zu: operator '%s' at shape '%s' again (first at line %zu)",
			       s->path, line, r->op, r->shape, *first);
	*first = line;
	return 0;
}

/* A time in microseconds: a finite number >= 0; empty (no backward) when
 * empty_ok, as NAN. */
static int parse_us(const char *s, int empty_ok, double *us)
{
	if (!*s && empty_ok) {
		*us = NAN;
		return 0;
	}
	return num_parse_double(s, 0, us) == NUM_OK && *us >= 0 ? 0 : -1;
}

static int torch_row(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	struct torch_scan *s = ctx;
	if (row->index == 0) {
		for (int c = 0; c < TORCH_COLS; c++) {
			s->col[c] = -1;
			for (size_t f = 0; f < row->nfields; f++)
				if (!strcmp(row->fields[f], torch_columns[c]))
					s->col[c] = (int)f;
			if (s->col[c] < 0)
				return sp_fail(err, "%s: no column '%s' (scripts/bench-sample-torch.py "
						    "writes op,shape,precision,F_dur(us),B_dur(us),device)",
					       s->path, torch_columns[c]);
		}
		return 0;
	}
	const char *const *f = row->fields;
	struct sample_torch_row r;
	enum sample_precision p;
	char q1[64], q2[64]; /* fields from the file, cut to fit a message */
	if (!strcmp(f[s->col[TORCH_OP]], torch_columns[TORCH_OP]) &&
	    !strcmp(f[s->col[TORCH_PRECISION]], torch_columns[TORCH_PRECISION]))
		return sp_fail(err,
			       "%s: line %zu: a second header line (two runs of "
			       "scripts/bench-sample-torch.py appended to one file? keep the first "
			       "header only)",
			       s->path, row->line);
	if (sample_precision_parse(f[s->col[TORCH_PRECISION]], &p))
		return sp_fail(err, "%s: line %zu: precision '%s' is not fp16, bf16 or fp32", s->path,
			       row->line, sp_clip(q1, sizeof q1, f[s->col[TORCH_PRECISION]]));
	if (p != s->p)
		return sp_fail(err, "%s: line %zu: PyTorch timed at %s, this calibration is at %s",
			       s->path, row->line, sample_precision_name(p),
			       sample_precision_name(s->p));
	if (parse_us(f[s->col[TORCH_FWD]], 0, &r.fwd_us) ||
	    parse_us(f[s->col[TORCH_BWD]], 1, &r.bwd_us))
		return sp_fail(err, "%s: line %zu: F_dur(us) '%s' or B_dur(us) '%s' is not a time",
			       s->path, row->line, sp_clip(q1, sizeof q1, f[s->col[TORCH_FWD]]),
			       sp_clip(q2, sizeof q2, f[s->col[TORCH_BWD]]));
	if (row->lens[s->col[TORCH_OP]] >= sizeof r.op ||
	    row->lens[s->col[TORCH_SHAPE]] >= sizeof r.shape)
		return sp_fail(err, "%s: line %zu: operator or shape too long", s->path, row->line);
	memcpy(r.op, f[s->col[TORCH_OP]], row->lens[s->col[TORCH_OP]] + 1);
	memcpy(r.shape, f[s->col[TORCH_SHAPE]], row->lens[s->col[TORCH_SHAPE]] + 1);
	if (torch_once(s, &r, row->line, err))
		return -1;
	sp_clip(s->t->device, sizeof s->t->device, f[s->col[TORCH_DEVICE]]);
	if (s->t->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct sample_torch_row *rows = realloc(s->t->rows, cap * sizeof *rows);
		if (!rows)
			return sp_fail(err, "%s: out of memory", s->path);
		s->t->rows = rows;
		s->cap = cap;
	}
	s->t->rows[s->t->n++] = r;
	return 0;
}

/* After a scan: an error, or a file without even a header, leaves the
 * table empty. */
static int torch_done(int rc, struct torch_scan *s, const struct csv_reader_result *res,
		      struct sp_err *err)
{
	strmap_free(&s->seen);
	if (!rc && res->records == 0)
		rc = sp_fail(err, "%s: empty (no header)", s->path);
	if (rc)
		sample_torch_free(s->t);
	return rc;
}

int sample_torch_read(const char *path, enum sample_precision p, struct sample_torch_table *t,
		      struct sp_err *err)
{
	struct torch_scan s = {.path = path, .p = p, .t = t};
	struct csv_reader_result res = {0};
	memset(t, 0, sizeof *t);
	return torch_done(csv_reader_scan_file(path, 0, torch_row, &s, &res, err), &s, &res, err);
}

int sample_torch_read_buffer(const void *data, size_t size, const char *name,
			     enum sample_precision p, struct sample_torch_table *t,
			     struct sp_err *err)
{
	struct torch_scan s = {.path = name, .p = p, .t = t};
	struct csv_reader_result res = {0};
	memset(t, 0, sizeof *t);
	return torch_done(csv_reader_scan_buffer(data, size, name, 0, torch_row, &s, &res, err),
			  &s, &res, err);
}

const struct sample_torch_row *sample_torch_find(const struct sample_torch_table *t,
						 const char *op, const char *shape)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].op, op) && !strcmp(t->rows[i].shape, shape))
			return &t->rows[i];
	return NULL;
}

void sample_torch_free(struct sample_torch_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof *t);
}
