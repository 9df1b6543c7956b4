/* libFuzzer target for YAML models: yaml_doc's parser, the model format's
 * reader with its repeated blocks and substitutions, then graph-partition's
 * analysis of what loads and its table report. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "partition/model_yaml.h"
#include "partition/partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct partition_report r = {0};
	struct partition_options o = {.si = {.batch = 3, .allow_unknown = 1},
				      .thresholds = ROOFLINE_FIXED};
	struct sp_err err;
	static char report[600];
	if (!report[0])
		snprintf(report, sizeof report, "%s/report", fuzz_dir());
	hardware_default(&o.hw);
	if (model_yaml_load_buffer(data, size, "fuzz.yaml", &r.g, &err) == 0 &&
	    partition_analyse(&r, &o, &err) == 0)
		partition_write(report, PARTITION_TABLE, &r, &err);
	partition_free(&r);
	return 0;
}
