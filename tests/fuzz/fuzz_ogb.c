/* libFuzzer target for OGB's raw layout (gnn_data_load): a folder of small
 * valid files, one of which (chosen by the first byte) holds the rest of
 * the input instead. The files are plain text, which gztext reads as it is
 * (zlib's transparent mode); an input that starts with gzip's magic goes
 * through the inflater and its error paths. What loads gets its
 * self-loops; an error is one line. */
#include "fuzzdir.h"

#include <stddef.h>
#include <stdint.h>

#include "gnn_data.h"

/* tests/unit/test_gnn_data.c's sample: 5 nodes, 2 features, 4 classes. */
static const char *const files[][2] = {
	{"raw/num-node-list.csv.gz", "5\n"},
	{"raw/edge.csv.gz", "0,1\n1,0\n0,3\n0,3\n2,2\n4,3\n"},
	{"raw/node-feat.csv.gz", "0.5,-1\n1.5,-2\n2.5,-3\n3.5,-4\n4.5,-5e2\n"},
	{"raw/node-label.csv.gz", "0\n3\n1\n1\n2\n"},
	{"split/time/train.csv.gz", "0\n1\n"},
	{"split/time/valid.csv.gz", "2\n"},
	{"split/time/test.csv.gz", "3\n"},
};
enum { NFILES = sizeof files / sizeof *files };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	int which = data[0] % NFILES;
	for (int f = 0; f < NFILES; f++)
		if (f == which)
			fuzz_put(files[f][0], data + 1, size - 1);
		else
			fuzz_put(files[f][0], files[f][1], strlen(files[f][1]));
	struct gnn_dataset d;
	struct sp_err err;
	if (gnn_data_load(fuzz_dir(), &d, &err) == 0) {
		if (gnn_data_add_selfloops(&d, &err))
			fuzz_check_message(err.msg);
		gnn_data_free(&d);
	} else {
		fuzz_check_message(err.msg);
	}
	return 0;
}
