/* libFuzzer target for MaxK-GNN's raw graphs (csr_raw.h): the input's first
 * byte says where it splits into NAME.indptr and NAME.indices (at a
 * multiple of 4, or one past it to make the lengths odd), which are written
 * to a scratch folder and loaded, whole and indptr alone. Either a valid
 * CSR comes back or an error naming the file; never a crash, a leak or an
 * allocation beyond the files' sizes. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>

#include "sparse/csr_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t cut = (size_t)(data[0] >> 1) * 4 + (data[0] & 1);
	const uint8_t *rest = data + 1;
	size_t n = size - 1;
	if (cut > n)
		cut = n;
	fuzz_put("g.indptr", rest, cut);
	const char *path = fuzz_put("g.indices", rest + cut, n - cut);
	static char indptr[512];
	snprintf(indptr, sizeof indptr, "%.*s.indptr", (int)(strlen(path) - strlen(".indices")), path);
	struct sp_err err;
	struct csr g;
	if (csr_raw_load(indptr, &g, &err) == 0) {
		if (csr_validate(&g, CSR_CHECK_BASIC, "fuzz", &err) || g.nrows != g.ncols)
			__builtin_trap();
		csr_free(&g);
	} else {
		fuzz_check_message(err.msg);
	}
	int64_t *p, rows;
	if (csr_raw_load_indptr(indptr, &p, &rows, &err) == 0)
		free(p);
	else
		fuzz_check_message(err.msg);
	return 0;
}
