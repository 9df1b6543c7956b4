/* libFuzzer target for the Matrix Market parser: any input gives either a
 * valid CSR with sorted rows and finite values, or an error that starts
 * with the file name; never a crash, a leak, a hang or an allocation out
 * of proportion to the input. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sparse/mtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct mtx_header h;
	struct sp_err err;
	struct csr g;
	/* A size line may rightly claim a billion rows for one entry, and then
	 * indptr takes 8 GB, which libFuzzer's memory limit would call a
	 * crash. Such shapes are left out here; the header parse that finds
	 * them is still fuzzed. */
	if (mtx_parse_header(text, size, "fuzz.mtx", &h, &err) == 0 && h.rows > (1 << 16))
		return 0;
	if (mtx_parse(text, size, "fuzz.mtx", &g, &err) == 0) {
		if (csr_validate(&g, CSR_CHECK_SORTED | CSR_CHECK_FINITE, "fuzz.mtx", &err))
			__builtin_trap();
		csr_free(&g);
	} else if (strncmp(err.msg, "fuzz.mtx:", 9) != 0) {
		__builtin_trap();
	}
	return 0;
}
