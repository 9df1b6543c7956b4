/* kernel-sample's sweep configs, in the format of estimate-train-time
 * (DebarghaG/estimate-train-time, data/configs/kernel_sampling/): a YAML
 * mapping, usually in flow style ({ "kernel_name": "layernorm", ... }),
 * block style as well.
 *
 *   kernel_name     names the output files and the log lines
 *   function_name   the operator timed (kernel-sample's table; default: kernel_name)
 *   columns_name    the CSV header: first_n_column shape columns, then the
 *                   forward and backward durations ('F_dur(us)', 'B_dur(us)')
 *   first_n_column  how many shape dimensions
 *   starts, steps, ends, operators
 *                   one per dimension: the values start, start+step, ... ('add')
 *                   or start, start*step, ... ('mul'), up to end inclusive
 *   warmup_shapes   the shape run (untimed) wait + warmup times before each
 *                   timed shape; absent: the timed shape itself
 *   wait, warmup    those two counts (default 4 and 6)
 *   active          timed runs per shape (default 10)
 *   shapes          the shape of get_one, get_profiler and run_function
 *   run             get_all (default), get_one, get_profiler or run_function
 *   module_name, targets
 *                   the Python module and the profiler events of the original;
 *                   accepted and ignored
 *
 * Every other key is an error, as are lists whose lengths disagree with
 * first_n_column, a step that never advances (0, or 1 with 'mul'), an end
 * below its start, an unknown operator or run mode; each message is one line
 * with the file and line ("x.yml:9: steps[1]: step 1 never advances ..."). */
#ifndef SPKIT_SAMPLE_CONFIG_H
#define SPKIT_SAMPLE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Shape dimensions a config may have (the original's largest has 7). */
#define SAMPLE_MAX_DIMS 8
/* Limits that keep shape arithmetic in 64 bits: a dimension's value, the
 * shapes in a grid, and the counts of the schedule. */
#define SAMPLE_MAX_VALUE ((int64_t)1 << 40)
#define SAMPLE_MAX_SHAPES ((uint64_t)1 << 40)
#define SAMPLE_MAX_RUNS 100000

enum sample_grow { SAMPLE_ADD, SAMPLE_MUL };
enum sample_mode { SAMPLE_GET_ALL, SAMPLE_GET_ONE, SAMPLE_GET_PROFILER, SAMPLE_RUN_FUNCTION };

/* The run modes' names as configs and --run write them, NULL-terminated,
 * in the order of enum sample_mode. */
extern const char *const sample_mode_names[];

/* The shape grid: every combination of the dimensions' values, the last
 * dimension fastest (sample_grid.h walks it). */
struct sample_grid {
	int ndims;
	int64_t start[SAMPLE_MAX_DIMS], step[SAMPLE_MAX_DIMS], end[SAMPLE_MAX_DIMS];
	enum sample_grow grow[SAMPLE_MAX_DIMS];
};

struct sample_config {
	char *path;
	char *kernel_name, *function_name;
	char **columns; /* ncols = grid.ndims + 2 names */
	size_t ncols;
	size_t columns_line; /* where columns_name stands, for messages about it */
	struct sample_grid grid;
	int has_warmup_shape, has_shape;
	int64_t warmup_shape[SAMPLE_MAX_DIMS], shape[SAMPLE_MAX_DIMS];
	int wait, warmup, active;
	enum sample_mode run;
};

/* On failure cfg is left empty (sample_config_free is safe). */
int sample_config_read(const char *path, struct sample_config *cfg, struct sp_err *err);
/* The same from memory; `name` stands for the file in messages. */
int sample_config_read_buffer(const void *data, size_t len, const char *name,
			      struct sample_config *cfg, struct sp_err *err);
void sample_config_free(struct sample_config *cfg);

#endif
