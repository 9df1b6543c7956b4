#include "sample/sample_model.h"

#include <inttypes.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "core/outfile.h"
#include "core/textscan.h"

const char *const sample_direction_names[] = {"fwd", "bwd", NULL};
const char *const sample_direction_columns[] = {"F_dur(us)", "B_dur(us)", NULL};

const char *sample_model_file_name(const struct sample_model *m, char *buf, size_t size)
{
	snprintf(buf, size, "%s_%s_%s_%s.model", m->device, m->op,
		 sample_precision_name(m->precision), sample_direction_names[m->direction]);
	return buf;
}

int sample_model_find(const char *dir, const char *op, enum sample_precision p,
		      enum sample_direction d, char *device, size_t device_size, char *path,
		      size_t path_size, struct sp_err *err)
{
	char tail[256];
	int found = 0;
	snprintf(tail, sizeof tail, "_%s_%s_%s.model", op, sample_precision_name(p),
		 sample_direction_names[d]);
	DIR *dp = opendir(dir);
	if (!dp)
		return sp_fail_errno(err, "%s: cannot read the folder", dir);
	size_t tl = strlen(tail);
	int fixed = device[0] != '\0';
	for (struct dirent *e; (e = readdir(dp));) {
		const char *name = e->d_name, *us = strchr(name, '_');
		/* DEVICE has no '_' (sample_device_name), so the first one ends it */
		if (!us || strlen(name) <= tl || strcmp(us, tail))
			continue;
		int dl = (int)(us - name);
		int same = (size_t)dl == strlen(device) && !strncmp(name, device, (size_t)dl);
		if (fixed && !same)
			continue;
		if (found) {
			closedir(dp);
			return sp_fail(err, "%s: models of two devices (%s and %.*s): keep one device's "
					    "models in a folder",
				       dir, device, dl, name);
		}
		snprintf(device, device_size, "%.*s", dl, name);
		snprintf(path, path_size, "%s/%s", dir, name);
		found = 1;
	}
	closedir(dp);
	return found;
}

void sample_model_free(struct sample_model *m)
{
	gbt_free(&m->gbt);
	memset(m, 0, sizeof *m);
}

static void print_double(FILE *fp, double v)
{
	char buf[NUM_DOUBLE_MAX];
	fprintf(fp, " %s", num_format_double(buf, v, 0));
}

static void print_model(const struct sample_model *m, FILE *fp)
{
	const struct gbt *g = &m->gbt;
	fprintf(fp, "%s %d\noperator %s\nprecision %s\ndirection %s\ndevice %s\ncolumns",
		SAMPLE_MODEL_MAGIC, SAMPLE_MODEL_VERSION, m->op, sample_precision_name(m->precision),
		sample_direction_names[m->direction], m->device);
	for (int i = 0; i < m->ncols; i++)
		fprintf(fp, " %s", m->cols[i]);
	fputs("\nfeatures", fp);
	for (int i = 0; i < m->feat.n; i++)
		fprintf(fp, " %s", m->feat.names[i]);
	fprintf(fp, "\nrows %" PRIu64 "\nbase %d", m->rows, g->nbase);
	for (int j = 0; j <= g->nbase; j++)
		print_double(fp, g->base[j]);
	fprintf(fp, "\ntrees %d\n", g->ntrees);
	for (int t = 0; t < g->ntrees; t++) {
		fprintf(fp, "tree %d\n", g->trees[t].n);
		for (int i = 0; i < g->trees[t].n; i++) {
			const struct gbt_node *nd = &g->trees[t].nodes[i];
			if (nd->feature < 0) {
				fputc('l', fp);
				print_double(fp, nd->value);
			} else {
				fprintf(fp, "s %d", nd->feature);
				print_double(fp, nd->value);
				fprintf(fp, " %d %d", nd->left, nd->right);
			}
			fputc('\n', fp);
		}
	}
	fputs("end\n", fp);
}

static void abort_all(struct outfile *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		outfile_abort(&f[i]);
	free(f);
}

int sample_model_save(const struct sample_model *const *models, const char *const *paths,
		      size_t n, struct sp_err *err)
{
	struct outfile *f = calloc(n ? n : 1, sizeof *f);
	if (!f)
		return sp_fail(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (outfile_open(&f[i], paths[i], err)) {
			abort_all(f, i);
			return -1;
		}
		print_model(models[i], f[i].fp);
		if (ferror(f[i].fp)) {
			abort_all(f, i + 1);
			return sp_fail(err, "%s: cannot write", paths[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (outfile_commit(&f[i], err)) {
			/* those before are in place: an I/O error between two renames */
			for (size_t j = i + 1; j < n; j++)
				outfile_abort(&f[j]);
			free(f);
			return -1;
		}
	free(f);
	return 0;
}

/* The parser: one line at a time, its fields split at single spaces. */
struct parse {
	struct text_scan s;
	struct text_span line, rest;
	struct sp_err *err;
};

static int next_line(struct parse *ps, const char *what)
{
	if (!text_scan_line(&ps->s, &ps->line))
		return sp_fail(ps->err, "%s: truncated: no %s after line %" PRId64, ps->s.name,
			       what, ps->s.line);
	ps->rest = ps->line;
	return 0;
}

/* The next field into buf (NUL-terminated); 0 when the line has no more. */
static int field(struct parse *ps, char *buf, size_t size)
{
	const char *p = ps->rest.p, *end = ps->rest.end;
	if (p == end)
		return 0;
	const char *q = memchr(p, ' ', (size_t)(end - p));
	if (!q)
		q = end;
	size_t len = (size_t)(q - p);
	if (len >= size)
		len = size - 1; /* too long for any valid field: fails its check */
	memcpy(buf, p, len);
	buf[len] = '\0';
	ps->rest.p = q < end ? q + 1 : end;
	return 1;
}

/* "NAME:LINE: " and fmt with one %s: arg (text from the file, as it is),
 * or without arg the line itself. */
static int fail_line(struct parse *ps, const char *fmt, const char *arg)
{
	char show[TEXT_SHOW_MAX + 8];
	if (!arg)
		arg = text_span_show(ps->line, show, sizeof show);
	return text_scan_fail(&ps->s, ps->err, fmt, arg);
}

/* A line "KEY VALUE": the value into buf; any other line is an error. */
static int keyed(struct parse *ps, const char *key, char *buf, size_t size)
{
	char k[64];
	if (next_line(ps, key))
		return -1;
	if (!field(ps, k, sizeof k) || strcmp(k, key) || !field(ps, buf, size) || !buf[0] ||
	    ps->rest.p != ps->rest.end)
		return fail_line(ps, "expected '%s VALUE'", key);
	return 0;
}

static int is_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_.+-()", *s)))
			return 0;
	return 1;
}

static int get_int(struct parse *ps, const char *what, int64_t min, int64_t max, int64_t *out)
{
	char buf[32];
	if (!field(ps, buf, sizeof buf) || num_parse_int(buf, out) != NUM_OK || buf[0] == ' ' ||
	    *out < min || *out > max) {
		char msg[128];
		snprintf(msg, sizeof msg, "%s: expected a whole number from %" PRId64 " to %" PRId64,
			 what, min, max);
		return fail_line(ps, "%s", msg);
	}
	return 0;
}

static int get_double(struct parse *ps, const char *what, double *out)
{
	char buf[64];
	if (!field(ps, buf, sizeof buf) || num_parse_double(buf, 0, out) != NUM_OK ||
	    buf[0] == ' ' || !isfinite(*out))
		return fail_line(ps, "%s: expected a finite number", what);
	return 0;
}

static int end_of_line(struct parse *ps)
{
	return ps->rest.p != ps->rest.end ? fail_line(ps, "unexpected text at the end of '%s'", NULL)
					  : 0;
}

static int parse_header(struct parse *ps, struct sample_model *m)
{
	char buf[128];
	int64_t v;
	if (!text_scan_line(&ps->s, &ps->line) || (ps->rest = ps->line, 0) ||
	    !field(ps, buf, sizeof buf) || strcmp(buf, SAMPLE_MODEL_MAGIC))
		return sp_fail(ps->err, "%s:1: not a kernel-sample timing model (it starts with "
				        "'" SAMPLE_MODEL_MAGIC " %d')",
			       ps->s.name, SAMPLE_MODEL_VERSION);
	if (get_int(ps, "version", 0, INT32_MAX, &v) || end_of_line(ps))
		return -1;
	if (v != SAMPLE_MODEL_VERSION)
		return sp_fail(ps->err, "%s:1: a model of version %" PRId64 ", this kernel-sample "
				        "reads version %d: fit it again",
			       ps->s.name, v, SAMPLE_MODEL_VERSION);
	if (keyed(ps, "operator", m->op, sizeof m->op))
		return -1;
	if (!is_word(m->op))
		return fail_line(ps, "operator '%s': not a name", m->op);
	if (keyed(ps, "precision", buf, sizeof buf))
		return -1;
	if (sample_precision_parse(buf, &m->precision))
		return fail_line(ps, "precision '%s': not fp16, bf16 or fp32", buf);
	if (keyed(ps, "direction", buf, sizeof buf))
		return -1;
	if (strcmp(buf, "fwd") && strcmp(buf, "bwd"))
		return fail_line(ps, "direction '%s': not fwd or bwd", buf);
	m->direction = strcmp(buf, "fwd") ? SAMPLE_BWD : SAMPLE_FWD;
	if (keyed(ps, "device", m->device, sizeof m->device))
		return -1;
	if (!is_word(m->device))
		return fail_line(ps, "device '%s': not a name", m->device);
	return 0;
}

/* "columns NAME..." and "features NAME...", which must be those this
 * version computes for the operator and its columns. */
static int parse_shape(struct parse *ps, struct sample_model *m)
{
	char buf[64];
	if (next_line(ps, "columns"))
		return -1;
	if (!field(ps, buf, sizeof buf) || strcmp(buf, "columns"))
		return fail_line(ps, "expected 'columns NAME...' (%s)", NULL);
	while (field(ps, buf, sizeof buf)) {
		if (m->ncols == SAMPLE_MAX_DIMS || !is_word(buf))
			return fail_line(ps, "columns: at most 8 names of letters, digits and _ (%s)",
					 NULL);
		snprintf(m->cols[m->ncols], sizeof m->cols[0], "%s", buf);
		m->colp[m->ncols] = m->cols[m->ncols];
		m->ncols++;
	}
	if (!m->ncols)
		return fail_line(ps, "columns: no names (%s)", NULL);
	struct sp_err why;
	if (sample_features_init(&m->feat, m->op, m->colp, m->ncols, &why))
		return fail_line(ps, "%s", why.msg);
	if (next_line(ps, "features"))
		return -1;
	if (!field(ps, buf, sizeof buf) || strcmp(buf, "features"))
		return fail_line(ps, "expected 'features NAME...' (%s)", NULL);
	int i = 0, same = 1;
	while (field(ps, buf, sizeof buf))
		same = same && i < m->feat.n && !strcmp(buf, m->feat.names[i++]);
	if (!same || i != m->feat.n) {
		char want[256] = "";
		for (int j = 0; j < m->feat.n; j++)
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", j ? " " : "",
				 m->feat.names[j]);
		char msg[512];
		snprintf(msg, sizeof msg, "features are not those this kernel-sample computes for %s "
					  "(%s): fit it again",
			 m->op, want);
		return fail_line(ps, "%s", msg);
	}
	return 0;
}

static int parse_base(struct parse *ps, struct sample_model *m)
{
	char buf[64], key[16];
	int64_t v, k;
	if (keyed(ps, "rows", buf, sizeof buf))
		return -1;
	if (num_parse_int(buf, &v) != NUM_OK || buf[0] == ' ' || v < 1)
		return fail_line(ps, "rows '%s': expected a whole number of at least 1", buf);
	m->rows = (uint64_t)v;
	if (next_line(ps, "base"))
		return -1;
	if (!field(ps, key, sizeof key) || strcmp(key, "base"))
		return fail_line(ps, "expected 'base K C0 C1...' (%s)", NULL);
	if (get_int(ps, "base", 0, m->feat.nbase, &k))
		return -1;
	if (k != 0 && k != m->feat.nbase)
		return text_scan_fail(&ps->s, ps->err, "base: %" PRId64 " terms, expected 0 or %d",
				      k, m->feat.nbase);
	m->gbt.nfeat = m->feat.n;
	m->gbt.nbase = (int)k;
	for (int j = 0; j <= k; j++)
		if (get_double(ps, "base", &m->gbt.base[j]))
			return -1;
	return end_of_line(ps);
}

static int parse_tree(struct parse *ps, struct sample_model *m, struct gbt_tree *t)
{
	char kind[8];
	int64_t n, f, left, right;
	if (next_line(ps, "tree"))
		return -1;
	if (!field(ps, kind, sizeof kind) || strcmp(kind, "tree"))
		return fail_line(ps, "expected 'tree NODES' (%s)", NULL);
	if (get_int(ps, "tree", 1, ((int64_t)2 << GBT_MAX_DEPTH) - 1, &n) || end_of_line(ps))
		return -1;
	t->nodes = calloc((size_t)n, sizeof *t->nodes);
	char *parents = calloc((size_t)n, 1);
	if (!t->nodes || !parents) {
		free(parents);
		return sp_fail(ps->err, "%s: out of memory", ps->s.name);
	}
	int rc = -1;
	for (t->n = 0; t->n < n; t->n++) {
		struct gbt_node *nd = &t->nodes[t->n];
		if (next_line(ps, "node"))
			goto done;
		if (!field(ps, kind, sizeof kind))
			kind[0] = '\0';
		if (!strcmp(kind, "l")) {
			nd->feature = -1;
			if (get_double(ps, "leaf", &nd->value) || end_of_line(ps))
				goto done;
			continue;
		}
		if (strcmp(kind, "s")) {
			fail_line(ps, "expected a node, 's F THRESHOLD LEFT RIGHT' or 'l VALUE' (%s)", NULL);
			goto done;
		}
		if (get_int(ps, "split feature", 0, m->feat.n - 1, &f) ||
		    get_double(ps, "split threshold", &nd->value) ||
		    get_int(ps, "split child", t->n + 1, n - 1, &left) ||
		    get_int(ps, "split child", t->n + 1, n - 1, &right) || end_of_line(ps))
			goto done;
		if (left == right || parents[left] || parents[right]) {
			fail_line(ps, "a node that is not a tree's: a child with two parents (%s)", NULL);
			goto done;
		}
		parents[left] = parents[right] = 1;
		*nd = (struct gbt_node){(int)f, nd->value, (int)left, (int)right};
	}
	for (int64_t i = 1; i < n; i++)
		if (!parents[i]) {
			sp_fail(ps->err, "%s:%" PRId64 ": tree: node %" PRId64 " has no parent",
				ps->s.name, ps->s.line, i);
			goto done;
		}
	rc = 0;
done:
	free(parents);
	return rc;
}

static int parse_model(struct parse *ps, struct sample_model *m)
{
	char buf[16];
	int64_t n;
	if (parse_header(ps, m) || parse_shape(ps, m) || parse_base(ps, m))
		return -1;
	if (next_line(ps, "trees"))
		return -1;
	if (!field(ps, buf, sizeof buf) || strcmp(buf, "trees"))
		return fail_line(ps, "expected 'trees COUNT' (%s)", NULL);
	if (get_int(ps, "trees", 0, GBT_MAX_TREES, &n) || end_of_line(ps))
		return -1;
	m->gbt.trees = calloc(n ? (size_t)n : 1, sizeof *m->gbt.trees);
	if (!m->gbt.trees)
		return sp_fail(ps->err, "%s: out of memory", ps->s.name);
	for (m->gbt.ntrees = 0; m->gbt.ntrees < n;) {
		/* counted before parsing, so a failed tree's nodes are freed */
		struct gbt_tree *t = &m->gbt.trees[m->gbt.ntrees++];
		if (parse_tree(ps, m, t))
			return -1;
	}
	if (next_line(ps, "end"))
		return -1;
	if (strcmp(field(ps, buf, sizeof buf) ? buf : "", "end") || ps->rest.p != ps->rest.end)
		return fail_line(ps, "expected 'end' after the trees (%s)", NULL);
	if (text_scan_line(&ps->s, &ps->line))
		return fail_line(ps, "unexpected text after 'end' (%s)", NULL);
	return 0;
}

int sample_model_read_buffer(const void *data, size_t len, const char *name,
			     struct sample_model *m, struct sp_err *err)
{
	memset(m, 0, sizeof *m);
	struct parse ps = {.err = err};
	if (memchr(data, '\0', len))
		return sp_fail(err, "%s: not a kernel-sample timing model (binary data)", name);
	text_scan_init(&ps.s, data, len, name);
	if (parse_model(&ps, m)) {
		sample_model_free(m);
		return -1;
	}
	return 0;
}

int sample_model_read(const char *path, struct sample_model *m, struct sp_err *err)
{
	struct text_file f;
	memset(m, 0, sizeof *m);
	if (text_file_open(&f, path, err))
		return -1;
	int rc = sample_model_read_buffer(f.data, f.len, path, m, err);
	text_file_close(&f);
	return rc;
}

int sample_model_predict(const struct sample_model *m, const int64_t *shape, double *us,
			 struct sp_err *err)
{
	const struct sample_op *op = sample_cpu_op(m->op);
	double x[SAMPLE_MAX_FEATURES];
	if (op && op->check(shape, err))
		return -1;
	for (int i = 0; i < m->ncols; i++)
		if (shape[i] < 1 || shape[i] > SAMPLE_MAX_VALUE)
			return sp_fail(err, "%s %" PRId64 " is out of range (1 to 2^40)", m->cols[i],
				       shape[i]);
	sample_features_of(&m->feat, shape, m->precision, x);
	*us = exp(gbt_predict(&m->gbt, x));
	return 0;
}
