/* libFuzzer target for .onnx: the wire-format slimming, the protobuf-c
 * decoder and the conversion to an om_graph on arbitrary bytes (from
 * memory), then graph-partition's whole analysis of what loads (unknown ops
 * allowed, batch 2) and its JSON and DOT reports, which must neither crash
 * nor overflow. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "partition/partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct gp_report r = {0};
	struct gp_options o = {.si = {.batch = 2, .allow_unknown = 1}, .dtype = HW_FP16};
	struct sp_err err;
	if (!sink)
		sink = fopen("/dev/null", "w");
	hw_default(&o.hw);
	if (om_load_mem(data, size, "fuzz.onnx", &r.g, &err) == 0 && gp_analyse(&r, &o, &err) == 0) {
		gp_write_json(sink, &r);
		gp_write_dot(sink, &r);
	}
	gp_free(&r);
	return 0;
}
