#include "sample/sample_config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/yaml_doc.h"
#include "sample/sample_grid.h"

const char *const sample_mode_names[] = {"get_all", "get_one", "get_profiler", "run_function",
					 NULL};

static const char *const config_keys[] = {
	"module_name", "kernel_name", "function_name", "columns_name", "targets",
	"first_n_column", "starts", "steps", "ends", "operators", "warmup_shapes",
	"wait", "warmup", "active", "shapes", "run", NULL};

/* A list of first_n_column integers, each in [min, SAMPLE_MAX_VALUE]. */
static int read_dims(const struct yaml_doc_node *root, const char *key, int required, int64_t min,
		     int ndims, int64_t *out, int *present, struct sp_err *err)
{
	const struct yaml_doc_node *node = yaml_doc_get(root, key);
	int64_t *v = NULL;
	size_t n = 0;
	int rc = required ? yaml_doc_require_int_list(root, key, &v, &n, err)
			  : yaml_doc_int_list(root, key, &v, &n, err);
	if (rc)
		return -1;
	if (present)
		*present = v != NULL;
	if (!v)
		return 0;
	if (n != (size_t)ndims) {
		free(v);
		return yaml_doc_fail(node, err, "%s has %zu values, first_n_column is %d", key, n,
				     ndims);
	}
	for (int i = 0; i < ndims; i++) {
		if (v[i] < min || v[i] > SAMPLE_MAX_VALUE) {
			int64_t bad = v[i];
			free(v);
			return yaml_doc_fail(yaml_doc_list_item(node, (size_t)i), err,
					     "%s[%d]: %" PRId64 " is outside %" PRId64 "..%" PRId64,
					     key, i, bad, min, SAMPLE_MAX_VALUE);
		}
		out[i] = v[i];
	}
	free(v);
	return 0;
}

static int read_grow(const struct yaml_doc_node *root, int ndims, struct sample_grid *g,
		     struct sp_err *err)
{
	const struct yaml_doc_node *node = yaml_doc_get(root, "operators");
	const char **names = NULL;
	size_t n = 0;
	if (yaml_doc_require_string_list(root, "operators", &names, &n, err))
		return -1;
	int rc = 0;
	if (n != (size_t)ndims)
		rc = yaml_doc_fail(node, err, "operators has %zu values, first_n_column is %d", n,
				   ndims);
	for (int i = 0; rc == 0 && i < ndims; i++) {
		if (!strcmp(names[i], "add")) {
			g->grow[i] = SAMPLE_ADD;
		} else if (!strcmp(names[i], "mul")) {
			g->grow[i] = SAMPLE_MUL;
		} else {
			char q[64];
			rc = yaml_doc_fail(yaml_doc_list_item(node, (size_t)i), err,
					   "operators[%d]: unknown operator '%s' (expected mul or add)",
					   i, sp_clip(q, sizeof q, names[i]));
		}
	}
	free(names);
	return rc;
}

/* Steps that advance, ends not below their starts, and a grid whose size
 * fits the limit. */
static int check_grid(const struct yaml_doc_node *root, const struct sample_grid *g,
		      struct sp_err *err)
{
	const struct yaml_doc_node *steps = yaml_doc_get(root, "steps");
	const struct yaml_doc_node *ends = yaml_doc_get(root, "ends");
	uint64_t shapes = 1;
	for (int i = 0; i < g->ndims; i++) {
		int64_t least = g->grow[i] == SAMPLE_MUL ? 2 : 1;
		if (g->step[i] < least)
			return yaml_doc_fail(yaml_doc_list_item(steps, (size_t)i), err,
					     "steps[%d]: step %" PRId64 " never advances ('%s' needs %"
					     PRId64 " or more)",
					     i, g->step[i], g->grow[i] == SAMPLE_MUL ? "mul" : "add",
					     least);
		if (g->end[i] < g->start[i])
			return yaml_doc_fail(yaml_doc_list_item(ends, (size_t)i), err,
					     "ends[%d]: end %" PRId64 " is below its start %" PRId64,
					     i, g->end[i], g->start[i]);
		uint64_t values = sample_grid_axis_len(g, i);
		if (values > SAMPLE_MAX_SHAPES / shapes)
			return yaml_doc_fail(root, err,
					     "the grid has more than %" PRIu64 " shapes",
					     SAMPLE_MAX_SHAPES);
		shapes *= values;
	}
	return 0;
}

static int read_count(const struct yaml_doc_node *root, const char *key, int64_t dflt,
		      int64_t min, int *out, struct sp_err *err)
{
	int64_t v;
	if (yaml_doc_int(root, key, dflt, &v, err))
		return -1;
	if (v < min || v > SAMPLE_MAX_RUNS)
		return yaml_doc_fail(yaml_doc_get(root, key), err,
				     "%s: %" PRId64 " is outside %" PRId64 "..%d", key, v, min,
				     SAMPLE_MAX_RUNS);
	*out = (int)v;
	return 0;
}

static int read_columns(const struct yaml_doc_node *root, struct sample_config *cfg,
			struct sp_err *err)
{
	const struct yaml_doc_node *node = yaml_doc_get(root, "columns_name");
	const char **names = NULL;
	size_t n = 0;
	if (yaml_doc_require_string_list(root, "columns_name", &names, &n, err))
		return -1;
	cfg->columns_line = yaml_doc_line(node);
	int rc = 0;
	if (n != (size_t)cfg->grid.ndims + 2)
		rc = yaml_doc_fail(node, err,
				   "columns_name has %zu names, expected first_n_column (%d) shape "
				   "columns and the forward and backward durations",
				   n, cfg->grid.ndims);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char q[64];
		if (!names[i][0])
			rc = yaml_doc_fail(yaml_doc_list_item(node, i), err,
					   "columns_name[%zu] is empty", i);
		for (size_t j = 0; rc == 0 && j < i; j++)
			if (!strcmp(names[i], names[j]))
				rc = yaml_doc_fail(yaml_doc_list_item(node, i), err,
						   "columns_name[%zu]: '%s' named twice", i,
						   sp_clip(q, sizeof q, names[i]));
	}
	if (rc == 0) {
		cfg->columns = calloc(n, sizeof *cfg->columns);
		rc = cfg->columns ? 0 : sp_fail(err, "%s: out of memory", cfg->path);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		cfg->columns[i] = strdup(names[i]);
		cfg->ncols = i + 1;
		if (!cfg->columns[i])
			rc = sp_fail(err, "%s: out of memory", cfg->path);
	}
	free(names);
	return rc;
}

static int read_names(const struct yaml_doc_node *root, struct sample_config *cfg,
		      struct sp_err *err)
{
	const char *kernel, *function, *run;
	if (yaml_doc_require_string(root, "kernel_name", &kernel, err) ||
	    yaml_doc_string(root, "function_name", kernel, &function, err) ||
	    yaml_doc_string(root, "run", "get_all", &run, err))
		return -1;
	int mode = 0;
	while (sample_mode_names[mode] && strcmp(sample_mode_names[mode], run))
		mode++;
	if (!sample_mode_names[mode]) {
		char q[64];
		return yaml_doc_fail(yaml_doc_get(root, "run"), err,
				     "run: unknown mode '%s' (expected get_all, get_one, "
				     "get_profiler or run_function)",
				     sp_clip(q, sizeof q, run));
	}
	/* kernel_name is a part of the output files' names, which merge and
	 * fit read back: DEVICE_KERNEL_PRECISION_PARTS_PART.csv. */
	if (!*kernel || strchr(kernel, '/')) {
		char q[64];
		return yaml_doc_fail(yaml_doc_get(root, "kernel_name"), err,
				     "kernel_name: '%s' cannot name the output files (it must be "
				     "non-empty, with no '/')",
				     sp_clip(q, sizeof q, kernel));
	}
	cfg->run = (enum sample_mode)mode;
	cfg->kernel_name = strdup(kernel);
	cfg->function_name = strdup(function);
	if (!cfg->kernel_name || !cfg->function_name)
		return sp_fail(err, "%s: out of memory", cfg->path);
	return 0;
}

static int read_config(const struct yaml_doc_node *root, struct sample_config *cfg,
		       struct sp_err *err)
{
	int64_t n;
	if (yaml_doc_check_keys(root, config_keys, "a kernel-sample config", err) ||
	    yaml_doc_require_int(root, "first_n_column", &n, err))
		return -1;
	if (n < 1 || n > SAMPLE_MAX_DIMS)
		return yaml_doc_fail(yaml_doc_get(root, "first_n_column"), err,
				     "first_n_column: %" PRId64 " is outside 1..%d", n,
				     SAMPLE_MAX_DIMS);
	struct sample_grid *g = &cfg->grid;
	g->ndims = (int)n;
	if (read_names(root, cfg, err) || read_columns(root, cfg, err) ||
	    read_dims(root, "starts", 1, 1, g->ndims, g->start, NULL, err) ||
	    read_dims(root, "steps", 1, 0, g->ndims, g->step, NULL, err) ||
	    read_dims(root, "ends", 1, 1, g->ndims, g->end, NULL, err) ||
	    read_grow(root, g->ndims, g, err) || check_grid(root, g, err) ||
	    read_dims(root, "warmup_shapes", 0, 1, g->ndims, cfg->warmup_shape,
		      &cfg->has_warmup_shape, err) ||
	    read_dims(root, "shapes", 0, 1, g->ndims, cfg->shape, &cfg->has_shape, err) ||
	    read_count(root, "wait", 4, 0, &cfg->wait, err) ||
	    read_count(root, "warmup", 6, 0, &cfg->warmup, err) ||
	    read_count(root, "active", 10, 1, &cfg->active, err))
		return -1;
	if (cfg->run != SAMPLE_GET_ALL && !cfg->has_shape)
		return yaml_doc_fail(yaml_doc_get(root, "run"), err,
				     "run: %s needs the shape to run in 'shapes'",
				     sample_mode_names[cfg->run]);
	return 0;
}

static int finish(struct yaml_doc *doc, const char *name, struct sample_config *cfg,
		  struct sp_err *err)
{
	const struct yaml_doc_node *root;
	int rc = -1;
	cfg->path = strdup(name);
	if (!cfg->path)
		sp_fail(err, "%s: out of memory", name);
	else if (yaml_doc_root_map(doc, &root, err) == 0)
		rc = read_config(root, cfg, err);
	yaml_doc_free(doc);
	if (rc)
		sample_config_free(cfg);
	return rc;
}

int sample_config_read(const char *path, struct sample_config *cfg, struct sp_err *err)
{
	struct yaml_doc *doc;
	memset(cfg, 0, sizeof *cfg);
	if (yaml_doc_load(path, &doc, err))
		return -1;
	return finish(doc, path, cfg, err);
}

int sample_config_read_buffer(const void *data, size_t len, const char *name,
			      struct sample_config *cfg, struct sp_err *err)
{
	struct yaml_doc *doc;
	memset(cfg, 0, sizeof *cfg);
	if (yaml_doc_load_buffer(data, len, name, &doc, err))
		return -1;
	return finish(doc, name, cfg, err);
}

void sample_config_free(struct sample_config *cfg)
{
	for (size_t i = 0; i < cfg->ncols; i++)
		free(cfg->columns[i]);
	free(cfg->columns);
	free(cfg->kernel_name);
	free(cfg->function_name);
	free(cfg->path);
	memset(cfg, 0, sizeof *cfg);
}
