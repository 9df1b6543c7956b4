#include "formats/yaml_doc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "core/buf.h"
#include "core/infile.h"
#include "core/num.h"
#include "core/strmap.h"

struct yaml_doc_node {
	enum yaml_doc_kind kind;
	int plain; /* a scalar written without quotes or tag: may be null or "<<" */
	size_t line;
	const char *file;
	char *text; /* scalar */
	size_t len;
	struct yaml_doc_node **items; /* sequence: n items; mapping: n pairs, key then value */
	size_t n;
	size_t weight; /* nodes in the subtree with every alias expanded */
	size_t height; /* levels in that subtree, 1 for a scalar */
};

struct yaml_doc {
	char *name;
	struct yaml_doc_node *root;
	struct yaml_doc_node **nodes; /* all of them, for yaml_doc_free */
	size_t nnodes, nodes_cap;
};

/* A sequence or mapping being read: its children so far. */
struct frame {
	struct yaml_doc_node *node;
	size_t index; /* of node in doc->nodes */
	struct yaml_doc_node **kids;
	size_t nkids, cap;
	char *anchor;
};

struct builder {
	struct yaml_doc *doc;
	const char *text; /* the input, to turn byte offsets into lines */
	size_t text_len;
	struct frame *stack;
	size_t depth, stack_cap;
	struct strmap anchors; /* name -> index in doc->nodes */
	int documents;
	struct sp_err *err;
};

int yaml_doc_fail(const struct yaml_doc_node *n, struct sp_err *err, const char *fmt, ...)
{
	char msg[SP_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return sp_fail(err, "%s:%zu: %s", n->file, n->line, msg);
}

static struct yaml_doc_node *new_node(struct builder *b, enum yaml_doc_kind kind, yaml_mark_t mark)
{
	struct yaml_doc *doc = b->doc;
	struct yaml_doc_node **nodes =
		buf_grow_array(doc->nodes, &doc->nodes_cap, doc->nnodes + 1, sizeof *nodes);
	struct yaml_doc_node *n = nodes ? calloc(1, sizeof *n) : NULL;
	if (nodes)
		doc->nodes = nodes;
	if (!n) {
		sp_fail(b->err, "%s:%zu: out of memory", doc->name, mark.line + 1);
		return NULL;
	}
	nodes[doc->nnodes++] = n;
	n->kind = kind;
	n->line = mark.line + 1;
	n->file = doc->name;
	n->weight = 1;
	n->height = 1;
	return n;
}

/* Anchors map to indices in doc->nodes; a later anchor of the same name
 * replaces the earlier, as YAML says. */
static int name_anchor(struct builder *b, const yaml_char_t *anchor, size_t index)
{
	if (!anchor)
		return 0;
	int added;
	size_t *v = strmap_insert(&b->anchors, anchor, strlen((const char *)anchor), &added);
	if (!v)
		return yaml_doc_fail(b->doc->nodes[index], b->err, "out of memory");
	*v = index;
	return 0;
}

static size_t add_sat(size_t a, size_t b)
{
	return a > YDOC_MAX_NODES || b > YDOC_MAX_NODES ? YDOC_MAX_NODES + 1 : a + b;
}

/* The limits that keep every walk of the tree small and shallow. */
static int check_size(struct builder *b, const struct yaml_doc_node *n, size_t weight, size_t height)
{
	if (weight > YDOC_MAX_NODES)
		return yaml_doc_fail(n, b->err, "document expands to more than %d nodes (aliases?)",
			       YDOC_MAX_NODES);
	if (height > YDOC_MAX_DEPTH)
		return yaml_doc_fail(n, b->err, "nested more than %d levels deep", YDOC_MAX_DEPTH);
	return 0;
}

/* A finished node goes to the open container, or becomes the root. */
static int attach(struct builder *b, struct yaml_doc_node *n)
{
	if (b->depth == 0) {
		b->doc->root = n;
		return 0;
	}
	struct frame *f = &b->stack[b->depth - 1];
	if (f->node->kind == YDOC_MAPPING && f->nkids % 2 == 0 && n->kind != YDOC_SCALAR)
		return yaml_doc_fail(n, b->err, "a mapping key must be a scalar");
	struct yaml_doc_node **kids = buf_grow_array(f->kids, &f->cap, f->nkids + 1, sizeof *kids);
	if (!kids)
		return yaml_doc_fail(n, b->err, "out of memory");
	f->kids = kids;
	kids[f->nkids++] = n;
	/* Counted as children arrive, so an alias bomb stops at the first
	 * alias that crosses the limit. */
	f->node->weight = add_sat(f->node->weight, n->weight);
	if (n->height + 1 > f->node->height)
		f->node->height = n->height + 1;
	return check_size(b, f->node, f->node->weight, f->node->height);
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct yaml_doc_node *n = new_node(b, YDOC_SCALAR, ev->start_mark);
	if (!n)
		return -1;
	n->len = ev->data.scalar.length;
	n->text = malloc(n->len + 1);
	if (!n->text)
		return yaml_doc_fail(n, b->err, "out of memory");
	memcpy(n->text, ev->data.scalar.value, n->len);
	n->text[n->len] = '\0';
	n->plain =
		ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.plain_implicit;
	return name_anchor(b, ev->data.scalar.anchor, b->doc->nnodes - 1) || attach(b, n) ? -1 : 0;
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	size_t *i = strmap_find(&b->anchors, name, strlen(name));
	char q[80];
	if (!i)
		return sp_fail(b->err, "%s:%zu: unknown alias '*%s'", b->doc->name,
			       ev->start_mark.line + 1, sp_clip(q, sizeof q, name));
	return attach(b, b->doc->nodes[*i]);
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum yaml_doc_kind kind,
		    const yaml_char_t *anchor)
{
	if (b->depth == YDOC_MAX_DEPTH)
		return sp_fail(b->err, "%s:%zu: nested more than %d levels deep", b->doc->name,
			       ev->start_mark.line + 1, YDOC_MAX_DEPTH);
	struct yaml_doc_node *n = new_node(b, kind, ev->start_mark);
	struct frame *stack =
		n ? buf_grow_array(b->stack, &b->stack_cap, b->depth + 1, sizeof *stack) : NULL;
	if (!stack)
		return n ? yaml_doc_fail(n, b->err, "out of memory") : -1;
	b->stack = stack;
	struct frame *f = &stack[b->depth++];
	memset(f, 0, sizeof *f);
	f->node = n;
	f->index = b->doc->nnodes - 1;
	if (anchor && !(f->anchor = strdup((const char *)anchor)))
		return yaml_doc_fail(n, b->err, "out of memory");
	return 0;
}

static int is_merge_key(const struct yaml_doc_node *k)
{
	return k->plain && k->len == 2 && !memcmp(k->text, "<<", 2);
}

static int add_pair(struct yaml_doc_node ***out, size_t *n, size_t *cap, struct yaml_doc_node *k,
		    struct yaml_doc_node *v)
{
	struct yaml_doc_node **p = buf_grow_array(*out, cap, 2 * (*n + 1), sizeof *p);
	if (!p)
		return -1;
	p[2 * *n] = k;
	p[2 * *n + 1] = v;
	*out = p;
	++*n;
	return 0;
}

/* The entries of src not yet in seen, appended. */
static int merge_from(struct builder *b, const struct yaml_doc_node *merge, const struct yaml_doc_node *src,
		      struct strmap *seen, struct yaml_doc_node ***out, size_t *n, size_t *cap)
{
	if (src->kind != YDOC_MAPPING)
		return yaml_doc_fail(merge, b->err, "'<<' merges mappings, found a %s",
			       src->kind == YDOC_SCALAR ? "scalar" : "sequence");
	for (size_t j = 0; j < src->n; j++) {
		struct yaml_doc_node *k = src->items[2 * j];
		int added;
		if (!strmap_insert(seen, k->text, k->len, &added) ||
		    (added && add_pair(out, n, cap, k, src->items[2 * j + 1])))
			return yaml_doc_fail(merge, b->err, "out of memory");
	}
	return 0;
}

/* Checks for duplicate keys and applies merge keys: the mapping's own keys
 * first (they win), then each merged mapping in order where its `<<` was. */
static int build_mapping(struct builder *b, struct frame *f, struct strmap *seen,
			 struct yaml_doc_node ***out, size_t *n, size_t *cap)
{
	const struct yaml_doc_node *merge = NULL;
	for (size_t i = 0; i + 1 < f->nkids; i += 2) {
		struct yaml_doc_node *k = f->kids[i];
		int added;
		size_t *first = strmap_insert(seen, k->text, k->len, &added);
		if (!first)
			return yaml_doc_fail(k, b->err, "out of memory");
		char q[80];
		if (!added)
			return yaml_doc_fail(k, b->err, "duplicate key '%s' (first at line %zu)",
				       sp_clip(q, sizeof q, k->text), f->kids[*first]->line);
		*first = i;
		if (is_merge_key(k))
			merge = k;
	}
	for (size_t i = 0; i + 1 < f->nkids; i += 2) {
		struct yaml_doc_node *k = f->kids[i], *v = f->kids[i + 1];
		if (k != merge) {
			if (add_pair(out, n, cap, k, v))
				return yaml_doc_fail(k, b->err, "out of memory");
		} else if (v->kind == YDOC_SEQUENCE) {
			for (size_t j = 0; j < v->n; j++)
				if (merge_from(b, k, v->items[j], seen, out, n, cap))
					return -1;
		} else if (merge_from(b, k, v, seen, out, n, cap)) {
			return -1;
		}
	}
	return 0;
}

static int finish_mapping(struct builder *b, struct frame *f)
{
	struct strmap seen = {0};
	struct yaml_doc_node **items = NULL;
	size_t n = 0, cap = 0;
	int rc = build_mapping(b, f, &seen, &items, &n, &cap);
	strmap_free(&seen);
	if (rc) {
		free(items);
		return -1;
	}
	/* Merged entries replace the `<<` entry: count again. */
	size_t weight = 1, height = 1;
	for (size_t i = 0; i < 2 * n; i++) {
		weight = add_sat(weight, items[i]->weight);
		if (items[i]->height + 1 > height)
			height = items[i]->height + 1;
	}
	f->node->items = items;
	f->node->n = n;
	f->node->weight = weight;
	f->node->height = height;
	return check_size(b, f->node, weight, height);
}

static int on_end(struct builder *b)
{
	struct frame *f = &b->stack[b->depth - 1];
	struct yaml_doc_node *n = f->node;
	int rc;
	if (n->kind == YDOC_MAPPING) {
		rc = finish_mapping(b, f);
		free(f->kids);
	} else {
		n->items = f->kids;
		n->n = f->nkids;
		rc = 0;
	}
	f->kids = NULL;
	/* Named only now, so an alias inside the node cannot refer to it. */
	if (!rc && f->anchor)
		rc = name_anchor(b, (const yaml_char_t *)f->anchor, f->index);
	free(f->anchor);
	f->anchor = NULL;
	b->depth--;
	return rc ? -1 : attach(b, n);
}

/* libyaml's message: the problem, at its line. */
static int fail_syntax(struct builder *b, const yaml_parser_t *p)
{
	const char *name = b->doc->name;
	const char *problem = p->problem ? p->problem : "unknown problem";
	if (p->error == YAML_MEMORY_ERROR)
		return sp_fail(b->err, "%s: out of memory", name);
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors have an offset into the input, not a mark. */
		size_t line = 1;
		for (size_t i = 0; i < p->problem_offset && i < b->text_len; i++)
			line += b->text[i] == '\n';
		return sp_fail(b->err, "%s:%zu: syntax error: %s", name, line, problem);
	}
	size_t line = p->problem_mark.line + 1, ctx_line = p->context_mark.line + 1;
	if (p->context && ctx_line != line)
		return sp_fail(b->err, "%s:%zu: syntax error: %s (%s at line %zu)", name, line,
			       problem, p->context, ctx_line);
	return sp_fail(b->err, "%s:%zu: syntax error: %s", name, line, problem);
}

/* One event into the tree; 1 at the end of the stream. */
static int on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->documents > 1)
			return sp_fail(b->err, "%s:%zu: more than one document", b->doc->name,
				       ev->start_mark.line + 1);
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_ALIAS_EVENT:
		return on_alias(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, YDOC_SEQUENCE, ev->data.sequence_start.anchor);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, YDOC_MAPPING, ev->data.mapping_start.anchor);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b);
	case YAML_STREAM_END_EVENT:
		return 1;
	default:
		return 0;
	}
}

static int build(struct builder *b)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return sp_fail(b->err, "%s: out of memory", b->doc->name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)b->text, b->text_len);
	int rc = 0;
	while (rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = fail_syntax(b, &parser);
			break;
		}
		rc = on_event(b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	for (size_t i = 0; i < b->depth; i++) {
		free(b->stack[i].kids);
		free(b->stack[i].anchor);
	}
	free(b->stack);
	strmap_free(&b->anchors);
	return rc < 0 ? -1 : 0;
}

int yaml_doc_load_buffer(const void *buf, size_t len, const char *name, struct yaml_doc **out,
		     struct sp_err *err)
{
	*out = NULL;
	struct yaml_doc *doc = calloc(1, sizeof *doc);
	if (!doc || !(doc->name = strdup(name))) {
		free(doc);
		return sp_fail(err, "%s: out of memory", name);
	}
	/* libyaml asserts on a NULL input, even an empty one. */
	struct builder b = {.doc = doc, .text = buf ? buf : "", .text_len = len, .err = err};
	if (build(&b)) {
		yaml_doc_free(doc);
		return -1;
	}
	*out = doc;
	return 0;
}

int yaml_doc_load(const char *path, struct yaml_doc **out, struct sp_err *err)
{
	*out = NULL;
	FILE *fp;
	if (infile_open_stream(path, &fp, err))
		return -1;
	struct buf text = {0};
	char chunk[8192];
	size_t n;
	int rc = 0;
	while (!rc && (n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
		if (text.len + n > YDOC_MAX_BYTES)
			rc = sp_fail(err, "%s: larger than %d MiB; not a configuration file", path,
				     YDOC_MAX_BYTES >> 20);
		else if (buf_add(&text, chunk, n))
			rc = sp_fail(err, "%s: out of memory", path);
	}
	if (!rc && ferror(fp))
		rc = sp_fail_errno(err, "%s: read failed", path);
	fclose(fp);
	if (!rc)
		rc = yaml_doc_load_buffer(text.data, text.len, path, out, err);
	buf_free(&text);
	return rc;
}

void yaml_doc_free(struct yaml_doc *doc)
{
	if (!doc)
		return;
	for (size_t i = 0; i < doc->nnodes; i++) {
		free(doc->nodes[i]->text);
		free(doc->nodes[i]->items);
		free(doc->nodes[i]);
	}
	free(doc->nodes);
	free(doc->name);
	free(doc);
}

const struct yaml_doc_node *yaml_doc_root(const struct yaml_doc *doc)
{
	return doc->root;
}

static const char *kind_name(const struct yaml_doc_node *n)
{
	if (n->kind == YDOC_SEQUENCE)
		return "a sequence";
	if (n->kind == YDOC_MAPPING)
		return "a mapping";
	return yaml_doc_is_null(n) ? "null" : "a scalar";
}

int yaml_doc_root_map(const struct yaml_doc *doc, const struct yaml_doc_node **map, struct sp_err *err)
{
	*map = doc->root;
	if (!doc->root)
		return sp_fail(err, "%s: empty document", doc->name);
	if (doc->root->kind != YDOC_MAPPING)
		return yaml_doc_fail(doc->root, err, "expected a mapping at the top, found %s",
			       kind_name(doc->root));
	return 0;
}

enum yaml_doc_kind yaml_doc_kind(const struct yaml_doc_node *n)
{
	return n->kind;
}

size_t yaml_doc_line(const struct yaml_doc_node *n)
{
	return n->line;
}

const char *yaml_doc_file(const struct yaml_doc_node *n)
{
	return n->file;
}

const char *yaml_doc_text(const struct yaml_doc_node *n)
{
	return n->kind == YDOC_SCALAR ? n->text : NULL;
}

int yaml_doc_is_null(const struct yaml_doc_node *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
	if (n->kind != YDOC_SCALAR || !n->plain)
		return 0;
	for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
		if (!strcmp(n->text, nulls[i]))
			return 1;
	return 0;
}

const struct yaml_doc_node *yaml_doc_get(const struct yaml_doc_node *map, const char *key)
{
	size_t len = strlen(key);
	for (size_t i = 0; i < yaml_doc_map_len(map); i++) {
		const struct yaml_doc_node *k = map->items[2 * i];
		if (k->len == len && !memcmp(k->text, key, len))
			return map->items[2 * i + 1];
	}
	return NULL;
}

size_t yaml_doc_seq_len(const struct yaml_doc_node *seq)
{
	return seq && seq->kind == YDOC_SEQUENCE ? seq->n : 0;
}

const struct yaml_doc_node *yaml_doc_list_item(const struct yaml_doc_node *list, size_t i)
{
	return list && list->kind == YDOC_SEQUENCE ? yaml_doc_seq_at(list, i) : list;
}

const struct yaml_doc_node *yaml_doc_seq_at(const struct yaml_doc_node *seq, size_t i)
{
	return i < yaml_doc_seq_len(seq) ? seq->items[i] : NULL;
}

size_t yaml_doc_map_len(const struct yaml_doc_node *map)
{
	return map && map->kind == YDOC_MAPPING ? map->n : 0;
}

const char *yaml_doc_map_key_at(const struct yaml_doc_node *map, size_t i)
{
	return i < yaml_doc_map_len(map) ? map->items[2 * i]->text : NULL;
}

const struct yaml_doc_node *yaml_doc_map_value_at(const struct yaml_doc_node *map, size_t i)
{
	return i < yaml_doc_map_len(map) ? map->items[2 * i + 1] : NULL;
}

/* "x.yml:12: starts: expected an integer, found 'abc'" */
static int fail_value(const struct yaml_doc_node *n, const char *what, const char *expected,
		      struct sp_err *err)
{
	char w[100], q[80];
	sp_clip(w, sizeof w, what);
	if (n->kind == YDOC_SCALAR && !yaml_doc_is_null(n))
		return yaml_doc_fail(n, err, "%s: expected %s, found '%s'", w, expected,
			       sp_clip(q, sizeof q, n->text));
	return yaml_doc_fail(n, err, "%s: expected %s, found %s", w, expected, kind_name(n));
}

static int is_value(const struct yaml_doc_node *n)
{
	return n->kind == YDOC_SCALAR && !yaml_doc_is_null(n);
}

int yaml_doc_as_int(const struct yaml_doc_node *n, const char *what, int64_t *out, struct sp_err *err)
{
	enum num_status st = is_value(n) ? num_parse_int(n->text, out) : NUM_SYNTAX;
	if (st == NUM_OK)
		return 0;
	return fail_value(n, what, st == NUM_RANGE ? "a 64-bit integer" : "an integer", err);
}

int yaml_doc_as_double(const struct yaml_doc_node *n, const char *what, int allow_nonfinite, double *out,
		   struct sp_err *err)
{
	enum num_status st =
		is_value(n) ? num_parse_double(n->text, allow_nonfinite, out) : NUM_SYNTAX;
	if (st == NUM_OK)
		return 0;
	if (st == NUM_RANGE)
		return fail_value(n, what, "a number in double range", err);
	return fail_value(n, what, allow_nonfinite ? "a number" : "a finite number", err);
}

int yaml_doc_as_bool(const struct yaml_doc_node *n, const char *what, int *out, struct sp_err *err)
{
	static const char *const words[] = {"false", "true", "no", "yes", "off", "on"};
	for (size_t i = 0; is_value(n) && i < sizeof words / sizeof *words; i++)
		if (!strcasecmp(n->text, words[i])) {
			*out = (int)(i % 2);
			return 0;
		}
	return fail_value(n, what, "true/false, yes/no or on/off", err);
}

int yaml_doc_as_string(const struct yaml_doc_node *n, const char *what, const char **out,
		   struct sp_err *err)
{
	if (!is_value(n))
		return fail_value(n, what, "a string", err);
	*out = n->text;
	return 0;
}

/* The value of key: 1 found, 0 absent or null (not required), -1 error.
 * Required, a null value is returned for the converter to refuse. */
static int lookup(const struct yaml_doc_node *map, const char *key, int required,
		  const struct yaml_doc_node **out, struct sp_err *err)
{
	*out = NULL;
	char q[100];
	if (map && map->kind != YDOC_MAPPING)
		return yaml_doc_fail(map, err, "expected a mapping with key '%s', found %s",
			       sp_clip(q, sizeof q, key), kind_name(map));
	const struct yaml_doc_node *v = map ? yaml_doc_get(map, key) : NULL;
	if (!v && required)
		return map ? yaml_doc_fail(map, err, "missing key '%s'", sp_clip(q, sizeof q, key))
			   : sp_fail(err, "missing key '%s'", sp_clip(q, sizeof q, key));
	if (!v || (!required && yaml_doc_is_null(v)))
		return 0;
	*out = v;
	return 1;
}

int yaml_doc_require(const struct yaml_doc_node *map, const char *key, enum yaml_doc_kind kind,
		 const struct yaml_doc_node **out, struct sp_err *err)
{
	static const char *const names[] = {"a scalar", "a sequence", "a mapping"};
	if (lookup(map, key, 1, out, err) < 0)
		return -1;
	if ((*out)->kind != kind || yaml_doc_is_null(*out))
		return fail_value(*out, key, names[kind], err);
	return 0;
}

/* Converts one scalar into dst (an int64_t, double, int or const char *). */
typedef int (*convert_fn)(const struct yaml_doc_node *n, const char *what, void *dst,
			  struct sp_err *err);

static int convert_int(const struct yaml_doc_node *n, const char *what, void *dst, struct sp_err *err)
{
	return yaml_doc_as_int(n, what, dst, err);
}

static int convert_string(const struct yaml_doc_node *n, const char *what, void *dst,
			  struct sp_err *err)
{
	return yaml_doc_as_string(n, what, dst, err);
}

static int convert_double(const struct yaml_doc_node *n, const char *what, void *dst,
			  struct sp_err *err)
{
	return yaml_doc_as_double(n, what, 0, dst, err);
}

static int convert_bool(const struct yaml_doc_node *n, const char *what, void *dst,
			struct sp_err *err)
{
	return yaml_doc_as_bool(n, what, dst, err);
}

/* The value of key converted into out; absent or null leaves out alone
 * unless required. */
static int get_value(const struct yaml_doc_node *map, const char *key, int required,
		     convert_fn convert, void *out, struct sp_err *err)
{
	const struct yaml_doc_node *v;
	int found = lookup(map, key, required, &v, err);
	return found <= 0 ? found : convert(v, key, out, err);
}

int yaml_doc_int(const struct yaml_doc_node *map, const char *key, int64_t dflt, int64_t *out,
	     struct sp_err *err)
{
	*out = dflt;
	return get_value(map, key, 0, convert_int, out, err);
}

int yaml_doc_require_int(const struct yaml_doc_node *map, const char *key, int64_t *out,
		     struct sp_err *err)
{
	return get_value(map, key, 1, convert_int, out, err);
}

int yaml_doc_double(const struct yaml_doc_node *map, const char *key, double dflt, double *out,
		struct sp_err *err)
{
	*out = dflt;
	return get_value(map, key, 0, convert_double, out, err);
}

int yaml_doc_require_double(const struct yaml_doc_node *map, const char *key, double *out,
			struct sp_err *err)
{
	return get_value(map, key, 1, convert_double, out, err);
}

int yaml_doc_bool(const struct yaml_doc_node *map, const char *key, int dflt, int *out,
	      struct sp_err *err)
{
	*out = dflt;
	return get_value(map, key, 0, convert_bool, out, err);
}

int yaml_doc_require_bool(const struct yaml_doc_node *map, const char *key, int *out,
		      struct sp_err *err)
{
	return get_value(map, key, 1, convert_bool, out, err);
}

int yaml_doc_string(const struct yaml_doc_node *map, const char *key, const char *dflt,
		const char **out, struct sp_err *err)
{
	*out = dflt;
	return get_value(map, key, 0, convert_string, out, err);
}

int yaml_doc_require_string(const struct yaml_doc_node *map, const char *key, const char **out,
			struct sp_err *err)
{
	return get_value(map, key, 1, convert_string, out, err);
}

/* A scalar or a sequence of them as an array of `size`-byte elements. */
static int get_list(const struct yaml_doc_node *map, const char *key, int required, size_t size,
		    convert_fn convert, const char *kind, void **out, size_t *n, struct sp_err *err)
{
	*out = NULL;
	*n = 0;
	const struct yaml_doc_node *v;
	int found = lookup(map, key, required, &v, err);
	if (found <= 0)
		return found;
	if (v->kind == YDOC_MAPPING || yaml_doc_is_null(v))
		return fail_value(v, key, kind, err);
	size_t count = v->kind == YDOC_SEQUENCE ? v->n : 1;
	char *a = malloc((count ? count : 1) * size);
	if (!a)
		return yaml_doc_fail(v, err, "out of memory");
	if (v->kind == YDOC_SCALAR && convert(v, key, a, err)) {
		free(a);
		return -1;
	}
	for (size_t i = 0; v->kind == YDOC_SEQUENCE && i < count; i++) {
		char what[100];
		snprintf(what, sizeof what, "%.64s[%zu]", key, i);
		if (convert(v->items[i], what, a + i * size, err)) {
			free(a);
			return -1;
		}
	}
	*out = a;
	*n = count;
	return 0;
}

int yaml_doc_int_list(const struct yaml_doc_node *map, const char *key, int64_t **out, size_t *n,
		  struct sp_err *err)
{
	void *a;
	int rc = get_list(map, key, 0, sizeof **out, convert_int, "a list of integers", &a, n, err);
	*out = a;
	return rc;
}

int yaml_doc_require_int_list(const struct yaml_doc_node *map, const char *key, int64_t **out, size_t *n,
			  struct sp_err *err)
{
	void *a;
	int rc = get_list(map, key, 1, sizeof **out, convert_int, "a list of integers", &a, n, err);
	*out = a;
	return rc;
}

int yaml_doc_string_list(const struct yaml_doc_node *map, const char *key, const char ***out, size_t *n,
		     struct sp_err *err)
{
	void *a;
	int rc = get_list(map, key, 0, sizeof **out, convert_string, "a list of strings", &a, n,
			  err);
	*out = a;
	return rc;
}

int yaml_doc_require_string_list(const struct yaml_doc_node *map, const char *key, const char ***out,
			     size_t *n, struct sp_err *err)
{
	void *a;
	int rc = get_list(map, key, 1, sizeof **out, convert_string, "a list of strings", &a, n,
			  err);
	*out = a;
	return rc;
}

int yaml_doc_check_keys(const struct yaml_doc_node *map, const char *const *allowed, const char *what,
		    struct sp_err *err)
{
	if (map->kind != YDOC_MAPPING || yaml_doc_is_null(map))
		return fail_value(map, what, "a mapping", err);
	for (size_t i = 0; i < yaml_doc_map_len(map); i++) {
		const char *key = yaml_doc_map_key_at(map, i);
		size_t k = 0;
		while (allowed[k] && strcmp(allowed[k], key))
			k++;
		if (allowed[k])
			continue;
		char list[200], q[80];
		size_t len = 0;
		list[0] = '\0';
		for (k = 0; allowed[k] && len < sizeof list; k++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "",
						allowed[k]);
		return yaml_doc_fail(yaml_doc_map_value_at(map, i), err, "unknown key '%s' in %s (expected %s)",
			       sp_clip(q, sizeof q, key), what, list);
	}
	return 0;
}
