/* What the dataset targets do with the scratch folder once its files are
 * written: load it, add self-loops to what loads, and check that every
 * error has a message. Include after fuzzdir.h. */
#ifndef SPKIT_FUZZ_DATASET_H
#define SPKIT_FUZZ_DATASET_H

#include "gnn/gnn_data.h"

static void fuzz_load_dataset(void)
{
	struct gnn_dataset d;
	struct sp_err err;
	if (gnn_data_load(fuzz_dir(), &d, &err) == 0) {
		if (gnn_data_add_selfloops(&d, &err))
			fuzz_check_message(err.msg);
		gnn_data_free(&d);
	} else {
		fuzz_check_message(err.msg);
	}
}

#endif
