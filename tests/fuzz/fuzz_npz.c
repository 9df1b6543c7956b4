/* libFuzzer target for .npz: the ZIP directory reader, every .npy member
 * (header alone, then whole), and the SciPy sparse loader, all on one
 * in-memory archive (fmemopen: no file I/O). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sparse/csr_npz.h"
#include "fuzz_npz_stream.h"
#include "formats/npz.h"

/* A valid COO matrix needs an indptr of nrows + 1 entries whatever its
 * file size (up to 16 GiB for 2^31 rows): legal, but past the fuzzer's
 * memory limit, so larger shapes are left to the unit tests. */
static int small_shape(struct npz *z)
{
	struct npy_array s;
	struct sp_err err;
	if (npz_read(z, "shape", &s, &err))
		return 1; /* the loader will fail on it, cheaply */
	int small = npy_cast(&s, NPY_I8, "shape", &err) != 0 || npy_count(&s) < 1 ||
		    ((int64_t *)s.data)[0] <= 1 << 20;
	npy_free(&s);
	return small;
}

static void read_members(struct npz *z)
{
	struct sp_err err;
	for (size_t i = 0; i < z->zip.count; i++) {
		const char *name = z->zip.entries[i].name;
		size_t n = strlen(name);
		char member[256];
		if (n <= 4 || n >= sizeof member || strcmp(name + n - 4, ".npy") != 0)
			continue;
		memcpy(member, name, n - 4);
		member[n - 4] = 0;
		struct npy_array a;
		if (npz_member_shape(z, member, &a, &err) == 0 &&
		    npz_read(z, member, &a, &err) == 0)
			npy_free(&a);
	}
}

static void read_archive(struct npz *z)
{
	struct sp_err err;
	struct csr g;
	read_members(z);
	if (small_shape(z) && csr_npz_read(z, &g, &err) == 0)
		csr_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_npz_stream(data, size, read_archive);
	return 0;
}
