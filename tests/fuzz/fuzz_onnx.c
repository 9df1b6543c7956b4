/* libFuzzer target for .onnx: the protobuf-c decoder and the conversion to
 * an om_graph on arbitrary bytes (from memory), then on what loads: shape
 * inference (unknown ops allowed, batch 2), the cost of every node and the
 * stages, which must neither crash nor overflow. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "onnx_model.h"
#include "op_cost.h"
#include "shape_infer.h"
#include "stages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct om_graph g;
	struct sp_err err;
	if (om_load_mem(data, size, "fuzz.onnx", &g, &err) != 0)
		return 0;
	size_t n = g.nnodes ? g.nnodes : 1;
	size_t *order = malloc(n * sizeof *order);
	unsigned char *unknown = calloc(n, 1), *is_param = calloc(g.nvalues + 1, 1);
	int64_t *flops = calloc(n, sizeof *flops), *stage = calloc(n, sizeof *stage);
	struct si_opts o = {.batch = 2, .allow_unknown = 1};
	if (shape_infer(&g, &o, order, unknown, &err) == 0) {
		struct oc_totals t = {0};
		t.params = oc_mark_params(&g, order, is_param);
		for (size_t i = 0; i < g.nnodes; i++) {
			struct op_cost c;
			op_cost(&g, order[i], unknown[order[i]], is_param, 4, &c);
			oc_accumulate(&t, &c);
			flops[order[i]] = c.flops;
		}
		struct stages_summary s;
		stages_compute(&g, order, flops, stage, &s, &err);
	}
	free(flops);
	free(stage);
	free(order);
	free(unknown);
	free(is_param);
	om_free(&g);
	return 0;
}
