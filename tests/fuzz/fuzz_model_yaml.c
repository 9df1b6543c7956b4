/* libFuzzer target for YAML models: yaml_doc's parser, the model format's
 * reader with its repeated blocks and substitutions, then graph-partition's
 * analysis of what loads and its table report. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "partition/model_yaml.h"
#include "partition/partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct gp_report r = {0};
	struct gp_options o = {.si = {.batch = 3, .allow_unknown = 1}, .thresholds = RL_SEED};
	struct sp_err err;
	if (!sink)
		sink = fopen("/dev/null", "w");
	hw_default(&o.hw);
	if (ym_load_buffer(data, size, "fuzz.yaml", &r.g, &err) == 0 && gp_analyse(&r, &o, &err) == 0)
		gp_write_table(sink, &r);
	gp_free(&r);
	return 0;
}
