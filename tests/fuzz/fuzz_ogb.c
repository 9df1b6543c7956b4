/* libFuzzer target for OGB's raw layout (gnn_data_load): a folder of small
 * valid files, one of which (chosen by the first byte) holds the rest of
 * the input instead. The files are plain text, which gztext reads as it is
 * (zlib's transparent mode); an input that starts with gzip's magic goes
 * through the inflater and its error paths. What loads gets its
 * self-loops; an error has a message. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_dataset.h"
#include "../unit/ogb_sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	int which = data[0] % OGB_FILES;
	for (int f = 0; f < OGB_FILES; f++)
		if (f == which)
			fuzz_put(ogb_sample[f][0], data + 1, size - 1);
		else
			fuzz_put(ogb_sample[f][0], ogb_sample[f][1], strlen(ogb_sample[f][1]));
	fuzz_load_dataset();
	return 0;
}
