/* libFuzzer target for the YAML loader (yaml_doc.h): load, walk the whole tree
 * (aliases included) and call every getter. Properties: no crash, leak or
 * hang, even for alias bombs; every error names the file; the
 * tree is no deeper than YDOC_MAX_DEPTH; yaml_doc_get finds what iteration
 * shows (keys are unique). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "formats/yaml_doc.h"

#define NAME "fuzz.yml"

static void check_message(const struct sp_err *e)
{
	if (strncmp(e->msg, NAME, strlen(NAME)) && strncmp(e->msg, "missing key", 11))
		abort();
}

static void check_scalar(const struct yaml_doc_node *n, const char *what)
{
	struct sp_err e;
	int64_t i;
	double d;
	int b;
	const char *s;
	if (yaml_doc_as_int(n, what, &i, &e))
		check_message(&e);
	if (yaml_doc_as_double(n, what, 0, &d, &e))
		check_message(&e);
	if (yaml_doc_as_double(n, what, 1, &d, &e))
		check_message(&e);
	if (yaml_doc_as_bool(n, what, &b, &e))
		check_message(&e);
	if (yaml_doc_as_string(n, what, &s, &e))
		check_message(&e);
	else if (strcmp(s, yaml_doc_text(n)))
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
static void check_getters(const struct yaml_doc_node *m, const char *key)
{
	struct sp_err e;
	int64_t i, *ints;
	double d;
	int b;
	const char *s, **strs;
	size_t n;
	const struct yaml_doc_node *node;
	int rc = yaml_doc_int(m, key, 0, &i, &e) | yaml_doc_require_int(m, key, &i, &e);
	rc |= yaml_doc_double(m, key, 0, &d, &e) | yaml_doc_require_double(m, key, &d, &e);
	rc |= yaml_doc_bool(m, key, 0, &b, &e) | yaml_doc_require_bool(m, key, &b, &e);
	rc |= yaml_doc_string(m, key, NULL, &s, &e) | yaml_doc_require_string(m, key, &s, &e);
	if (rc)
		check_message(&e);
	rc = yaml_doc_int_list(m, key, &ints, &n, &e);
	check_list(rc, ints, &e);
	rc = yaml_doc_require_int_list(m, key, &ints, &n, &e);
	check_list(rc, ints, &e);
	rc = yaml_doc_string_list(m, key, &strs, &n, &e);
	check_list(rc, strs, &e);
	rc = yaml_doc_require_string_list(m, key, &strs, &n, &e);
	check_list(rc, strs, &e);
	for (int k = YDOC_SCALAR; k <= YDOC_MAPPING; k++)
		if (yaml_doc_require(m, key, (enum yaml_doc_kind)k, &node, &e))
			check_message(&e);
}

/* Nodes visited, capped so that large (legal) expansions stay quick. */
static size_t visits;

static void walk(const struct yaml_doc_node *n, size_t depth)
{
	if (depth > YDOC_MAX_DEPTH)
		abort();
	if (++visits > 20000)
		return;
	switch (yaml_doc_kind(n)) {
	case YDOC_SCALAR:
		check_scalar(n, "v");
		break;
	case YDOC_SEQUENCE:
		for (size_t i = 0; i < yaml_doc_seq_len(n); i++)
			walk(yaml_doc_seq_at(n, i), depth + 1);
		break;
	case YDOC_MAPPING:
		for (size_t i = 0; i < yaml_doc_map_len(n); i++) {
			const char *key = yaml_doc_map_key_at(n, i);
			if (i < 8) {
				if (yaml_doc_get(n, key) != yaml_doc_map_value_at(n, i))
					abort();
				check_getters(n, key);
			}
			walk(yaml_doc_map_value_at(n, i), depth + 1);
		}
		check_getters(n, "absent");
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct yaml_doc *doc;
	struct sp_err e;
	if (yaml_doc_load_buffer(data, size, NAME, &doc, &e)) {
		check_message(&e);
		return 0;
	}
	const struct yaml_doc_node *map;
	if (yaml_doc_root_map(doc, &map, &e))
		check_message(&e);
	visits = 0;
	if (yaml_doc_root(doc))
		walk(yaml_doc_root(doc), 1);
	yaml_doc_free(doc);
	return 0;
}
