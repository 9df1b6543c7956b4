/* A hash map from byte strings to size_t values: open addressing with
 * linear probing, the key bytes copied into one arena. Used for the keys
 * a resumed sweep has done (10^5 and more, O(1) lookups), for duplicate
 * keys and merges in YAML mappings and for YAML anchors. */
#ifndef SPKIT_STRMAP_H
#define SPKIT_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct strmap_slot {
	uint64_t hash;
	size_t off, len; /* key bytes at keys.data + off; len SIZE_MAX: empty slot */
	size_t value;
};

struct strmap {
	size_t count;
	/* private */
	struct strmap_slot *slots;
	size_t nslots; /* a power of two, or 0 before the first insert */
	struct buf keys;
};

/* A zeroed struct strmap is an empty map; strmap_free returns it to that. */
void strmap_free(struct strmap *m);

/* The value slot for key, adding the key (value 0, *added = 1) when it is
 * new; NULL when out of memory. The pointer is valid until the next insert. */
size_t *strmap_insert(struct strmap *m, const void *key, size_t len, int *added);

/* The value slot for key, or NULL when the key is absent. */
size_t *strmap_find(const struct strmap *m, const void *key, size_t len);

#endif
