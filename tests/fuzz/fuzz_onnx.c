/* libFuzzer target for .onnx: the wire-format slimming, the protobuf-c
 * decoder and the conversion to an opgraph on arbitrary bytes (from
 * memory; model-local functions inlined), then graph-partition's whole
 * analysis of what loads (unknown ops allowed, batch 2), its JSON and DOT
 * reports and a comparison row (the peak activation memory), which must
 * neither crash nor overflow. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "partition/compare.h"
#include "partition/onnx_model.h"
#include "partition/partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct partition_report r = {0};
	struct partition_options o = {.si = {.batch = 2, .allow_unknown = 1},
				      .dtype = HARDWARE_FP16};
	struct sp_err err;
	static char report[600];
	if (!report[0])
		snprintf(report, sizeof report, "%s/report", fuzz_dir());
	hardware_default(&o.hw);
	if (onnx_model_load_mem(data, size, "fuzz.onnx", &r.g, &err) == 0 &&
	    partition_analyse(&r, &o, &err) == 0) {
		partition_write(report, PARTITION_JSON, &r, &err);
		partition_write(report, PARTITION_DOT, &r, &err);
		struct compare c = {0};
		if (compare_add(&c, &r, 0, &err) == 0)
			compare_write(report, PARTITION_JSON, &c, &err);
		compare_free(&c);
	}
	partition_free(&r);
	return 0;
}
