/* The input as an in-memory .npz named "fuzz.npz" (fmemopen: no file I/O),
 * for the targets whose readers take an open archive. */
#ifndef SPKIT_FUZZ_NPZ_STREAM_H
#define SPKIT_FUZZ_NPZ_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/npz.h"

/* Calls fn on the archive when the input opens as one. */
static void fuzz_npz_stream(const uint8_t *data, size_t size, void (*fn)(struct npz *z))
{
	if (size == 0)
		return;
	FILE *fp = fmemopen((void *)data, size, "rb");
	if (!fp)
		return;
	struct npz z;
	struct sp_err err;
	if (npz_open_stream(&z, fp, "fuzz.npz", &err) == 0) {
		fn(&z);
		npz_close(&z);
	}
	fclose(fp);
}

#endif
