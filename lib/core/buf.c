#include "core/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *buf_grow_array(void *p, size_t *cap, size_t need, size_t size)
{
	if (p && need <= *cap)
		return p;
	size_t n = *cap > 16 ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *q = realloc(p, n * size);
	if (!q)
		return NULL;
	*cap = n;
	return q;
}

int buf_reserve(struct buf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len)
		return -1;
	char *p = buf_grow_array(b->data, &b->cap, b->len + extra, 1);
	if (!p)
		return -1;
	b->data = p;
	return 0;
}

int buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n))
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
