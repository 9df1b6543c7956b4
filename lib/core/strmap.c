#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: keys are short (a few joined fields), and nothing here faces
 * keys chosen to collide. */
static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The slot holding key, or the empty slot where it would go. */
static struct strmap_slot *probe(const struct strmap *m, uint64_t h, const void *key, size_t len)
{
	size_t mask = m->nslots - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct strmap_slot *s = &m->slots[i];
		if (s->len == SIZE_MAX)
			return s;
		if (s->hash == h && s->len == len && !memcmp(m->keys.data + s->off, key, len))
			return s;
	}
}

static int rehash(struct strmap *m, size_t nslots)
{
	struct strmap_slot *old = m->slots;
	size_t old_n = m->nslots;
	m->slots = malloc(nslots * sizeof *m->slots);
	if (!m->slots) {
		m->slots = old;
		return -1;
	}
	m->nslots = nslots;
	for (size_t i = 0; i < nslots; i++)
		m->slots[i].len = SIZE_MAX;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].len != SIZE_MAX)
			*probe(m, old[i].hash, m->keys.data + old[i].off, old[i].len) = old[i];
	free(old);
	return 0;
}

size_t *strmap_insert(struct strmap *m, const void *key, size_t len, int *added)
{
	*added = 0;
	uint64_t h = hash_bytes(key, len);
	/* A key already there is found without growing: a lookup never fails. */
	struct strmap_slot *s = m->nslots ? probe(m, h, key, len) : NULL;
	if (s && s->len != SIZE_MAX)
		return &s->value;
	/* Keep the load at most 1/2 so probes stay short. */
	if ((m->count + 1) * 2 > m->nslots) {
		if (m->nslots > SIZE_MAX / 4 / sizeof *m->slots)
			return NULL;
		if (rehash(m, m->nslots ? m->nslots * 2 : 16))
			return NULL;
		s = probe(m, h, key, len);
	}
	size_t off = m->keys.len;
	if (buf_add(&m->keys, key, len))
		return NULL;
	*s = (struct strmap_slot){.hash = h, .off = off, .len = len, .value = 0};
	m->count++;
	*added = 1;
	return &s->value;
}

size_t *strmap_find(const struct strmap *m, const void *key, size_t len)
{
	if (!m->count)
		return NULL;
	struct strmap_slot *s = probe(m, hash_bytes(key, len), key, len);
	return s->len == SIZE_MAX ? NULL : &s->value;
}

void strmap_free(struct strmap *m)
{
	free(m->slots);
	buf_free(&m->keys);
	memset(m, 0, sizeof *m);
}
