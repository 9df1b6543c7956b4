/* Growable memory: a byte buffer for text assembled piece by piece (CSV
 * rows, arenas of strings) and a helper that grows any array. Growth
 * doubles, sizes are checked for overflow, and a failure leaves the old
 * contents in place so the caller can report it and free as usual. */
#ifndef SPKIT_BUF_H
#define SPKIT_BUF_H

#include <stddef.h>

struct buf {
	char *data;
	size_t len, cap;
};

/* Room for `extra` more bytes after len; 0 or -1 (out of memory). */
int buf_reserve(struct buf *b, size_t extra);
int buf_add(struct buf *b, const void *p, size_t n);
int buf_addc(struct buf *b, char c);
void buf_free(struct buf *b);

/* Returns an array of at least `need` elements of `size` bytes: p itself
 * when *cap suffices, else p reallocated (and *cap updated); NULL when out
 * of memory, with p still valid. */
void *buf_grow_array(void *p, size_t *cap, size_t need, size_t size);

#endif
