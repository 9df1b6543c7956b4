/* libFuzzer target for kernel-sample's configs (sample_config.h): the input
 * as a config; with what loads, the grid walked. Properties: no crash, leak
 * or hang; every error names the file; a loaded config has
 * first_n_column + 2 columns; the walk stays inside the starts and ends,
 * gives as many shapes as sample_grid_count says (walked up to a bound),
 * and the parts' counts add up to the whole for every split. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "sample/sample_config.h"
#include "sample/sample_grid.h"

#define NAME "fuzz.yml"
enum { MAX_WALK = 20000 };

static void check_grid(const struct sample_grid *g)
{
	uint64_t total = sample_grid_count(g), walked = 0;
	int64_t shape[SAMPLE_MAX_DIMS];
	if (total < 1 || total > SAMPLE_MAX_SHAPES)
		abort();
	sample_grid_first(g, shape);
	do {
		for (int i = 0; i < g->ndims; i++)
			if (shape[i] < g->start[i] || shape[i] > g->end[i])
				abort();
		walked++;
	} while (walked < MAX_WALK && sample_grid_next(g, shape));
	if (walked < MAX_WALK && walked != total)
		abort();
	for (int parts = 1; parts <= 5; parts++) {
		uint64_t sum = 0;
		for (int part = 1; part <= parts; part++)
			sum += sample_grid_part_count(total, parts, part);
		if (sum != total)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_config cfg;
	struct sp_err err;
	if (sample_config_read_buffer(data, size, NAME, &cfg, &err)) {
		if (strncmp(err.msg, NAME, strlen(NAME)))
			abort();
		return 0;
	}
	if (cfg.ncols != (size_t)cfg.grid.ndims + 2 || cfg.active < 1)
		abort();
	check_grid(&cfg.grid);
	sample_config_free(&cfg);
	return 0;
}
