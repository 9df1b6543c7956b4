/* libFuzzer target for graph-partition's hardware files (hardware_load, which
 * reads a path): the input as the file, then, with what loads, the
 * roofline analysis of a small fixed model for every data type and its
 * table and JSON reports, so odd peaks, bandwidths and launch costs (tiny,
 * huge) meet the arithmetic. An error has a message. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>

#include "partition/hardware.h"
#include "partition/model_yaml.h"
#include "partition/partition.h"

/* tests/fuzz/corpus/model_yaml/mlp.yaml, without its comments. */
static const char model[] =
	"name: mlp\n"
	"inputs:\n"
	"  x: [N, 784]\n"
	"params:\n"
	"  fc1.w: [256, 784]\n"
	"  fc1.b: [256]\n"
	"  fc2.w: [10, 256]\n"
	"  fc2.b: [10]\n"
	"nodes:\n"
	"  - {op: Gemm, name: fc1, inputs: [x, fc1.w, fc1.b], outputs: [h1], attrs: {transB: 1}}\n"
	"  - {op: Relu, name: relu1, inputs: [h1], outputs: [a1]}\n"
	"  - {op: Gemm, name: fc2, inputs: [a1, fc2.w, fc2.b], outputs: [logits], attrs: {transB: 1}}\n"
	"  - {op: Softmax, name: softmax, inputs: [logits], outputs: [probs], attrs: {axis: -1}}\n"
	"outputs: [probs]\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct partition_options o = {.si = {.batch = 64}, .thresholds = ROOFLINE_FIXED};
	struct sp_err err;
	static char report[600];
	if (!report[0])
		snprintf(report, sizeof report, "%s/report", fuzz_dir());
	const char *path = fuzz_put("hardware.yaml", data, size);
	if (hardware_load(path, &o.hw, &err)) {
		fuzz_check_message(err.msg);
		return 0;
	}
	for (int dt = 0; dt < HARDWARE_NDTYPES; dt++) {
		struct partition_report r = {0};
		o.dtype = (enum hardware_dtype)dt;
		if (model_yaml_load_buffer(model, sizeof model - 1, "mlp.yaml", &r.g, &err) ||
		    partition_analyse(&r, &o, &err))
			abort();
		partition_write(report, PARTITION_TABLE, &r, &err);
		partition_write(report, PARTITION_JSON, &r, &err);
		partition_free(&r);
	}
	return 0;
}
