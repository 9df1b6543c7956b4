#include "partition/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/num.h"
#include "core/text_out.h"
#include "formats/csv_writer.h"
#include "formats/json_writer.h"
#include "partition/activation.h"

/* A row being filled: the next column's name, kind and value. */
struct filler {
	struct compare *c;
	struct compare_row *row;
	size_t col;
};

static void put(struct filler *f, const char *name, int is_int, int64_t i, double d, int none)
{
	f->c->cols[f->col] = name;
	f->c->is_int[f->col] = (unsigned char)is_int;
	f->row->cells[f->col++] = (struct compare_cell){i, d, none};
}

static void put_int(struct filler *f, const char *name, int64_t v)
{
	put(f, name, 1, v, 0, 0);
}

static void put_double(struct filler *f, const char *name, double v)
{
	put(f, name, 0, 0, v, 0);
}

int compare_add(struct compare *c, const struct partition_report *r, int64_t saturating_batch,
		struct sp_err *err)
{
	int64_t peak;
	if (activation_peak(r, &peak, err))
		return -1;
	struct compare_row *rows = buf_grow_array(c->rows, &c->cap, c->nrows + 1, sizeof *rows);
	if (!rows)
		return sp_fail(err, "%s: out of memory", r->g.path);
	c->rows = rows;
	struct compare_row *row = &rows[c->nrows];
	memset(row, 0, sizeof *row);
	if (!(row->model = strdup(r->g.path)))
		return sp_fail(err, "%s: out of memory", r->g.path);
	c->nrows++;
	const struct op_cost_totals *t = &r->totals;
	int dtype_bytes = op_cost_dtype_size(hardware_dtype_name(r->o->dtype));
	struct filler f = {c, row, 0};
	put_int(&f, "ops", (int64_t)r->g.nnodes);
	put_int(&f, "kernels", r->kernels);
	put_int(&f, "total_flops", t->total_flops);
	put_int(&f, "matmul_flops", t->matmul_flops);
	put_int(&f, "params", t->params);
	put_double(&f, "weight_mb", (double)t->params * dtype_bytes / 1e6);
	put_double(&f, "peak_activation_mb", (double)peak / 1e6);
	put_double(&f, "intensity",
		   t->memory_bytes ? (double)t->total_flops / (double)t->memory_bytes : 0);
	put_int(&f, "stages", r->stages.stages);
	put_int(&f, "max_parallel_ops", r->stages.max_parallel_ops);
	put_int(&f, "critical_path_ops", r->stages.critical_path_ops);
	put_double(&f, "critical_path_time_us", r->critical_path_time_s * 1e6);
	put_double(&f, "roofline_time_us", r->roofline_time_s * 1e6);
	for (size_t i = 0; i < r->nbottlenecks; i++) {
		if (r->bottlenecks[i].id == ROOFLINE_NONE)
			continue;
		snprintf(c->share_names[i], sizeof c->share_names[i], "%s_share",
			 r->bottlenecks[i].name);
		put_double(&f, c->share_names[i],
			   r->kernels ? (double)r->bottlenecks[i].count / (double)r->kernels : 0);
	}
	put(&f, "batch_to_saturate", 1, saturating_batch, 0, saturating_batch == 0);
	c->ncols = f.col;
	return 0;
}

void compare_free(struct compare *c)
{
	for (size_t i = 0; i < c->nrows; i++)
		free(c->rows[i].model);
	free(c->rows);
	memset(c, 0, sizeof *c);
}

/* A cell as text: an integer, a number to digits significant ones (0: the
 * shortest that reads back exactly), or none's text. */
static const char *cell_text(const struct compare *c, const struct compare_cell *v, size_t col,
			     int digits, const char *none, char buf[NUM_DOUBLE_MAX])
{
	if (v->none)
		return none;
	if (c->is_int[col])
		snprintf(buf, NUM_DOUBLE_MAX, "%lld", (long long)v->i);
	else if (digits)
		snprintf(buf, NUM_DOUBLE_MAX, "%.3f", v->d);
	else
		num_format_double(buf, v->d, 0);
	return buf;
}

static int table_body(FILE *fp, const void *ctx)
{
	const struct compare *c = ctx;
	size_t width = 12;
	for (size_t m = 0; m < c->nrows; m++) {
		const size_t w = text_width(c->rows[m].model);
		if (w > width)
			width = w;
	}
	fprintf(fp, "%-22s", "model");
	for (size_t m = 0; m < c->nrows; m++) {
		fputc(' ', fp);
		text_put(fp, c->rows[m].model, (int)width);
	}
	fputc('\n', fp);
	for (size_t col = 0; col < c->ncols; col++) {
		text_put(fp, c->cols[col], -22);
		for (size_t m = 0; m < c->nrows; m++) {
			char buf[NUM_DOUBLE_MAX];
			fprintf(fp, " %*s", (int)width,
				cell_text(c, &c->rows[m].cells[col], col, 3, "-", buf));
		}
		fputc('\n', fp);
	}
	return fflush(fp) || ferror(fp) ? -1 : 0;
}

static int json_body(FILE *fp, const void *ctx)
{
	const struct compare *c = ctx;
	fputc('[', fp);
	for (size_t m = 0; m < c->nrows; m++) {
		fprintf(fp, "%s\n {\"model\": ", m ? "," : "");
		json_writer_string(fp, c->rows[m].model);
		for (size_t col = 0; col < c->ncols; col++) {
			char buf[NUM_DOUBLE_MAX];
			const struct compare_cell *v = &c->rows[m].cells[col];
			fprintf(fp, ", \"%s\": %s", c->cols[col],
				v->none || c->is_int[col] ? cell_text(c, v, col, 0, "null", buf)
							  : json_writer_number_text(buf, v->d));
		}
		fputc('}', fp);
	}
	fputs("\n]\n", fp);
	return fflush(fp) || ferror(fp) ? -1 : 0;
}

static int write_csv(const char *path, const struct compare *c, struct sp_err *err)
{
	const char *cols[COMPARE_MAX_COLUMNS + 1] = {"model"};
	memcpy(cols + 1, c->cols, c->ncols * sizeof *cols);
	struct csv_writer w;
	if (csv_writer_open(&w, path, cols, c->ncols + 1, err))
		return -1;
	for (size_t m = 0; m < c->nrows; m++) {
		csv_writer_str(&w, c->rows[m].model);
		for (size_t col = 0; col < c->ncols; col++) {
			char buf[NUM_DOUBLE_MAX];
			csv_writer_str(&w, cell_text(c, &c->rows[m].cells[col], col, 0, "", buf));
		}
		if (csv_writer_end_row(&w, err)) {
			csv_writer_abort(&w);
			return -1;
		}
	}
	return csv_writer_commit(&w, err);
}

int compare_write(const char *path, enum partition_format format, const struct compare *c,
		  struct sp_err *err)
{
	if (format == PARTITION_CSV)
		return write_csv(path, c, err);
	return partition_write_stream(path, format == PARTITION_JSON ? json_body : table_body, c,
				      err);
}
