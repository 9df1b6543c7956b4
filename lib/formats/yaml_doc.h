/* YAML configuration files (kernel-sample sweeps, ksmm tuning spaces,
 * hardware specs, model descriptions) loaded with libyaml into a small
 * read-only tree: scalars, sequences and mappings, each with its line.
 *
 * - Aliases (*a) are the anchored node itself, shared, not a copy. A
 *   document that would expand to more than YDOC_MAX_NODES nodes (an alias
 *   bomb) or nest deeper than YDOC_MAX_DEPTH levels is refused, so walking
 *   any loaded tree is cheap and shallow.
 * - Merge keys (`<<: *base` or `<<: [*a, *b]`) copy the entries of the
 *   mappings named into the mapping, where the `<<` stood; its own keys
 *   win, then the earlier merged mapping.
 * - A duplicate key is an error, as is more than one document.
 * - Errors are one line with the file and line:
 *     configs/x.yml:7: syntax error: could not find expected ':'
 *     configs/x.yml:12: starts[1]: expected an integer, found 'abc'
 *     configs/x.yml:3: missing key 'operator'
 *
 *	struct yaml_doc *doc;
 *	const struct yaml_doc_node *cfg;
 *	if (yaml_doc_load(path, &doc, &err) || yaml_doc_root_map(doc, &cfg, &err) ||
 *	    yaml_doc_require_string(cfg, "operator", &op, &err) ||
 *	    yaml_doc_int(cfg, "warmup", 2, &warmup, &err))
 *		cli_fatal(&err);
 *	...
 *	yaml_doc_free(doc); // the strings the getters gave live until here
 */
#ifndef SPKIT_YDOC_H
#define SPKIT_YDOC_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define YDOC_MAX_NODES 1000000
#define YDOC_MAX_DEPTH 64
/* Configuration files are small; a larger file is refused before reading. */
#define YDOC_MAX_BYTES (64 << 20)

enum yaml_doc_kind { YDOC_SCALAR, YDOC_SEQUENCE, YDOC_MAPPING };

struct yaml_doc;
struct yaml_doc_node;

int yaml_doc_load(const char *path, struct yaml_doc **doc, struct sp_err *err);
/* `name` stands for the file in messages. */
int yaml_doc_load_buffer(const void *buf, size_t len, const char *name, struct yaml_doc **doc,
		     struct sp_err *err);
void yaml_doc_free(struct yaml_doc *doc);

/* The top node, or NULL for an empty document. */
const struct yaml_doc_node *yaml_doc_root(const struct yaml_doc *doc);
/* The top node, which must be a mapping ("x.yml: empty document"). */
int yaml_doc_root_map(const struct yaml_doc *doc, const struct yaml_doc_node **map, struct sp_err *err);

enum yaml_doc_kind yaml_doc_kind(const struct yaml_doc_node *n);
size_t yaml_doc_line(const struct yaml_doc_node *n); /* 1-based */
const char *yaml_doc_file(const struct yaml_doc_node *n);
/* A scalar's text; NULL for a sequence or mapping. */
const char *yaml_doc_text(const struct yaml_doc_node *n);
/* An unquoted ~, null, Null, NULL or nothing at all. */
int yaml_doc_is_null(const struct yaml_doc_node *n);

/* The value of key in map; NULL when absent or map is not a mapping. */
const struct yaml_doc_node *yaml_doc_get(const struct yaml_doc_node *map, const char *key);
size_t yaml_doc_seq_len(const struct yaml_doc_node *seq); /* 0 for a non-sequence */
const struct yaml_doc_node *yaml_doc_seq_at(const struct yaml_doc_node *seq, size_t i);
/* Item i of a value the list readers took as a list: of a sequence, its
 * item; of a scalar (read as a one-item list), the scalar itself. For
 * messages about one item. */
const struct yaml_doc_node *yaml_doc_list_item(const struct yaml_doc_node *list, size_t i);
size_t yaml_doc_map_len(const struct yaml_doc_node *map); /* 0 for a non-mapping */
const char *yaml_doc_map_key_at(const struct yaml_doc_node *map, size_t i);
const struct yaml_doc_node *yaml_doc_map_value_at(const struct yaml_doc_node *map, size_t i);

/* One scalar node as a value; `what` names it in messages (a key, or
 * "starts[2]"). Integers are decimal and fit in 64 bits; doubles are
 * decimal with an optional exponent (1e-3), and .inf/.nan only with
 * allow_nonfinite; booleans are true/false, yes/no, on/off in any case;
 * a string is any scalar but null. */
int yaml_doc_as_int(const struct yaml_doc_node *n, const char *what, int64_t *out, struct sp_err *err);
int yaml_doc_as_double(const struct yaml_doc_node *n, const char *what, int allow_nonfinite, double *out,
		   struct sp_err *err);
int yaml_doc_as_bool(const struct yaml_doc_node *n, const char *what, int *out, struct sp_err *err);
int yaml_doc_as_string(const struct yaml_doc_node *n, const char *what, const char **out,
		   struct sp_err *err);

/* Values of keys in a mapping. The plain forms take dflt when the key is
 * absent or null (map may then be NULL: an absent section); the require
 * forms make an absent key an error ("x.yml:3: missing key 'operator'",
 * the line of the mapping) and a null value too. Doubles must be finite. */
int yaml_doc_int(const struct yaml_doc_node *map, const char *key, int64_t dflt, int64_t *out,
	     struct sp_err *err);
int yaml_doc_require_int(const struct yaml_doc_node *map, const char *key, int64_t *out,
		     struct sp_err *err);
int yaml_doc_double(const struct yaml_doc_node *map, const char *key, double dflt, double *out,
		struct sp_err *err);
int yaml_doc_require_double(const struct yaml_doc_node *map, const char *key, double *out,
			struct sp_err *err);
int yaml_doc_bool(const struct yaml_doc_node *map, const char *key, int dflt, int *out, struct sp_err *err);
int yaml_doc_require_bool(const struct yaml_doc_node *map, const char *key, int *out, struct sp_err *err);
int yaml_doc_string(const struct yaml_doc_node *map, const char *key, const char *dflt, const char **out,
		struct sp_err *err);
int yaml_doc_require_string(const struct yaml_doc_node *map, const char *key, const char **out,
			struct sp_err *err);

/* A list: a sequence of scalars, or one scalar as a list of one. The array
 * is the caller's to free (the strings stay the document's); absent or
 * null gives NULL and 0 in the plain forms. */
int yaml_doc_int_list(const struct yaml_doc_node *map, const char *key, int64_t **out, size_t *n,
		  struct sp_err *err);
int yaml_doc_require_int_list(const struct yaml_doc_node *map, const char *key, int64_t **out, size_t *n,
			  struct sp_err *err);
int yaml_doc_string_list(const struct yaml_doc_node *map, const char *key, const char ***out, size_t *n,
		     struct sp_err *err);
int yaml_doc_require_string_list(const struct yaml_doc_node *map, const char *key, const char ***out,
			     size_t *n, struct sp_err *err);

/* A key whose value must be of this kind (a section, a list of lists). */
int yaml_doc_require(const struct yaml_doc_node *map, const char *key, enum yaml_doc_kind kind,
		 const struct yaml_doc_node **out, struct sp_err *err);

/* A message about node n: "FILE:LINE: " and the printf-style rest. Returns -1. */
int yaml_doc_fail(const struct yaml_doc_node *n, struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Every key of map is one of the NULL-terminated allowed list, so a typo
 * is an error rather than a silent default: "x.yml:7: unknown key 'imput'
 * in a node (expected op, name, inputs, outputs, attrs)"; `what` names
 * the mapping. A map that is not a mapping is an error too. */
int yaml_doc_check_keys(const struct yaml_doc_node *map, const char *const *allowed, const char *what,
		    struct sp_err *err);

#endif
