/* libFuzzer target for the YAML loader (ydoc.h): load, walk the whole tree
 * (aliases included) and call every getter. Properties: no crash, leak or
 * hang, even for alias bombs; every error is one line naming the file; the
 * tree is no deeper than YDOC_MAX_DEPTH; ydoc_get finds what iteration
 * shows (keys are unique). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ydoc.h"

#define NAME "fuzz.yml"

static void check_message(const struct sp_err *e)
{
	if (strpbrk(e->msg, "\r\n") || (strncmp(e->msg, NAME, strlen(NAME)) &&
					strncmp(e->msg, "missing key", 11)))
		abort();
}

static void check_scalar(const struct ydoc_node *n, const char *what)
{
	struct sp_err e;
	int64_t i;
	double d;
	int b;
	const char *s;
	if (ydoc_as_int(n, what, &i, &e))
		check_message(&e);
	if (ydoc_as_double(n, what, 0, &d, &e))
		check_message(&e);
	if (ydoc_as_double(n, what, 1, &d, &e))
		check_message(&e);
	if (ydoc_as_bool(n, what, &b, &e))
		check_message(&e);
	if (ydoc_as_string(n, what, &s, &e))
		check_message(&e);
	else if (strcmp(s, ydoc_text(n)))
		abort();
}

static void check_list(int rc, void *list, const struct sp_err *e)
{
	if (rc)
		check_message(e);
	else
		free(list);
}

/* Every getter on one key of a mapping. */
static void check_getters(const struct ydoc_node *m, const char *key)
{
	struct sp_err e;
	int64_t i, *ints;
	double d;
	int b;
	const char *s, **strs;
	size_t n;
	const struct ydoc_node *node;
	int rc = ydoc_int(m, key, 0, &i, &e) | ydoc_require_int(m, key, &i, &e);
	rc |= ydoc_double(m, key, 0, &d, &e) | ydoc_require_double(m, key, &d, &e);
	rc |= ydoc_bool(m, key, 0, &b, &e) | ydoc_require_bool(m, key, &b, &e);
	rc |= ydoc_string(m, key, NULL, &s, &e) | ydoc_require_string(m, key, &s, &e);
	if (rc)
		check_message(&e);
	rc = ydoc_int_list(m, key, &ints, &n, &e);
	check_list(rc, ints, &e);
	rc = ydoc_require_int_list(m, key, &ints, &n, &e);
	check_list(rc, ints, &e);
	rc = ydoc_string_list(m, key, &strs, &n, &e);
	check_list(rc, strs, &e);
	rc = ydoc_require_string_list(m, key, &strs, &n, &e);
	check_list(rc, strs, &e);
	for (int k = YDOC_SCALAR; k <= YDOC_MAPPING; k++)
		if (ydoc_require(m, key, (enum ydoc_kind)k, &node, &e))
			check_message(&e);
}

/* Nodes visited, capped so that large (legal) expansions stay quick. */
static size_t visits;

static void walk(const struct ydoc_node *n, size_t depth)
{
	if (depth > YDOC_MAX_DEPTH)
		abort();
	if (++visits > 20000)
		return;
	switch (ydoc_kind(n)) {
	case YDOC_SCALAR:
		check_scalar(n, "v");
		break;
	case YDOC_SEQUENCE:
		for (size_t i = 0; i < ydoc_seq_len(n); i++)
			walk(ydoc_seq_at(n, i), depth + 1);
		break;
	case YDOC_MAPPING:
		for (size_t i = 0; i < ydoc_map_len(n); i++) {
			const char *key = ydoc_map_key_at(n, i);
			if (i < 8) {
				if (ydoc_get(n, key) != ydoc_map_value_at(n, i))
					abort();
				check_getters(n, key);
			}
			walk(ydoc_map_value_at(n, i), depth + 1);
		}
		check_getters(n, "absent");
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ydoc *doc;
	struct sp_err e;
	if (ydoc_load_buffer(data, size, NAME, &doc, &e)) {
		check_message(&e);
		return 0;
	}
	const struct ydoc_node *map;
	if (ydoc_root_map(doc, &map, &e))
		check_message(&e);
	visits = 0;
	if (ydoc_root(doc))
		walk(ydoc_root(doc), 1);
	ydoc_free(doc);
	return 0;
}
