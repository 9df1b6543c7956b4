/* The comma-separated key=value items of a --synthetic SPEC, read against
 * a table of keys, each an integer or a number in a range. One reader for
 * every generator (graph_gen.c, gnn_data_synth.c), so each key's errors
 * read alike. */
#ifndef SPKIT_SPEC_KEYS_H
#define SPKIT_SPEC_KEYS_H

#include <stddef.h>

#include "core/err.h"

/* A key=value a spec may hold: an integer (stored as long long) or, with
 * is_double, a double; in [lo, hi] either way. */
struct spec_key {
	const char *name;
	int is_double;
	double lo, hi;
	void *dst;
};

/* Reads `items` (modified: split in place) against keys[]. An item whose
 * key is not in keys[] is an error naming `known`, unless `rest` is given:
 * then it is appended there, comma-joined, for another reader. Errors read
 * "--synthetic: ...". */
int synth_spec_parse(char *items, const struct spec_key *keys, size_t nkeys, const char *known,
		    char *rest, size_t rest_size, struct sp_err *err);

#endif
