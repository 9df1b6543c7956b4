/* A MACKO matrix written in the form a user asks for: the MACKO .npz
 * (macko_npz.h), its members stored or deflated, or decompressed into a
 * dense fp16 .npy. Atomic, as every output: complete or absent. */
#ifndef SPKIT_MACKO_OUTPUT_H
#define SPKIT_MACKO_OUTPUT_H

#include "core/err.h"
#include "macko/macko.h"

enum macko_output {
	MACKO_OUTPUT_NPZ,
	MACKO_OUTPUT_NPZ_DEFLATED,
	MACKO_OUTPUT_DENSE, /* rows x cols f2 .npy (macko_decompress) */
};

int macko_output_write(const char *path, const struct macko *m, enum macko_output form,
		       struct sp_err *err);

#endif
