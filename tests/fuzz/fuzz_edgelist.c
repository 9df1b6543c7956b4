/* libFuzzer target for the edge-list parser: any input gives either a
 * valid CSR with sorted rows and finite weights, or an error that starts
 * with the file name; never a crash, a leak or a hang.
 *
 * A first byte below 8 is not text but the options (bit 0 one_based,
 * bit 1 undirected, bit 2 a fixed count of 1000 nodes), so plain-text
 * seeds run with the defaults and the fuzzer finds the rest. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sparse/edgelist.h"

/* Without a fixed node count, the largest id sets the row count, and an id
 * of two billion rightly asks for a 16 GB indptr, which libFuzzer's memory
 * limit would call a crash: such inputs (a run of more than 6 digits) are
 * only fuzzed with the node count fixed. */
static int has_long_number(const uint8_t *data, size_t size)
{
	int run = 0;
	for (size_t i = 0; i < size; i++) {
		run = data[i] >= '0' && data[i] <= '9' ? run + 1 : 0;
		if (run > 6)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct edgelist_opts opts = {0};
	if (size > 0 && data[0] < 8) {
		opts.one_based = data[0] & 1;
		opts.undirected = (data[0] >> 1) & 1;
		opts.nodes = data[0] & 4 ? 1000 : 0;
		data++;
		size--;
	}
	if (!opts.nodes && has_long_number(data, size))
		return 0;
	struct sp_err err;
	struct csr g;
	if (edgelist_parse((const char *)data, size, "fuzz.csv", &opts, &g, &err) == 0) {
		if (csr_validate(&g, CSR_CHECK_SORTED | CSR_CHECK_FINITE | CSR_CHECK_NONEMPTY,
				 "fuzz.csv", &err))
			__builtin_trap();
		csr_free(&g);
	} else if (strncmp(err.msg, "fuzz.csv", 8) != 0) {
		__builtin_trap();
	}
	return 0;
}
