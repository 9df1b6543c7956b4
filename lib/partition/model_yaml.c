#include "partition/model_yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "formats/yaml_doc.h"

enum { MODEL_YAML_NAME_MAX = 256 };

/* The copy of a repeated block being expanded; NULL outside blocks. */
struct copy {
	int64_t i;
	const char *in, *out; /* NULL when the block has no input or output */
};

struct loader {
	struct opgraph *g;
	struct sp_err *err;
};

static int oom(const struct loader *l)
{
	return sp_fail(l->err, "%s: out of memory", l->g->path);
}

/* text with $i, $in and $out replaced for this copy, into out. A '$' starts
 * the placeholder named by the letters after it. */
static int substitute(const struct yaml_doc_node *at, const char *text, const struct copy *cp,
		      char *out, struct sp_err *err)
{
	size_t len = 0;
	char q[80];
	for (const char *p = text; *p;) {
		char num[24];
		const char *with = NULL;
		size_t skip = 1;
		if (*p == '$') {
			while ((p[skip] >= 'a' && p[skip] <= 'z') || (p[skip] >= 'A' && p[skip] <= 'Z'))
				skip++;
			if (skip == 2 && p[1] == 'i') {
				snprintf(num, sizeof num, "%lld", (long long)(cp ? cp->i : 0));
				with = num;
			} else if (skip == 3 && !strncmp(p, "$in", 3)) {
				with = cp ? cp->in : NULL;
			} else if (skip == 4 && !strncmp(p, "$out", 4)) {
				with = cp ? cp->out : NULL;
			} else {
				return yaml_doc_fail(at, err, "'%s': unknown placeholder '%.*s' (expected $i, "
					       "$in or $out)", sp_clip(q, sizeof q, text), (int)skip, p);
			}
			if (!cp || !with)
				return yaml_doc_fail(at, err, "'%s': %.*s outside a repeated block%s",
					       sp_clip(q, sizeof q, text), (int)skip, p,
					       cp ? " with that key" : "");
		}
		size_t add = with ? strlen(with) : 1;
		if (len + add >= MODEL_YAML_NAME_MAX)
			return yaml_doc_fail(at, err, "'%s': name longer than %d bytes",
					     sp_clip(q, sizeof q, text), MODEL_YAML_NAME_MAX - 1);
		memcpy(out + len, with ? with : p, add);
		len += add;
		p += skip;
	}
	out[len] = '\0';
	return 0;
}

/* Does a name hold $i (not $in)? */
static int uses_index(const char *text)
{
	for (const char *p = strchr(text, '$'); p; p = strchr(p + 1, '$'))
		if (p[1] == 'i' && !((p[2] >= 'a' && p[2] <= 'z') || (p[2] >= 'A' && p[2] <= 'Z')))
			return 1;
	return 0;
}

/* A value of the model: it must not exist yet. */
static int declare(struct loader *l, const struct yaml_doc_node *at, const char *name,
		   size_t *index)
{
	char q[80];
	if (!name[0])
		return yaml_doc_fail(at, l->err, "a tensor needs a name");
	size_t *found = strmap_find(&l->g->names, name, strlen(name));
	if (found)
		return yaml_doc_fail(at, l->err, "'%s' is declared twice", sp_clip(q, sizeof q, name));
	*index = opgraph_value_intern(l->g, name);
	return *index == OPGRAPH_NONE ? oom(l) : 0;
}

/* dims: a sequence of integers >= 0, or names for symbolic dims where allowed. */
static int read_dims(struct loader *l, const struct yaml_doc_node *seq, const char *name,
		     int symbolic, struct opgraph_value *v)
{
	char q[80];
	sp_clip(q, sizeof q, name);
	if (yaml_doc_kind(seq) != YDOC_SEQUENCE)
		return yaml_doc_fail(seq, l->err, "'%s': expected a list of dims", q);
	size_t n = yaml_doc_seq_len(seq);
	if (n > OPGRAPH_MAX_DIMS)
		return yaml_doc_fail(seq, l->err, "'%s': %zu dims, more than %d", q, n,
				     OPGRAPH_MAX_DIMS);
	for (size_t d = 0; d < n; d++) {
		const struct yaml_doc_node *e = yaml_doc_seq_at(seq, d);
		const char *text = yaml_doc_text(e);
		int64_t dim;
		if (text && num_parse_int(text, &dim) == NUM_OK) {
			if (dim < 0)
				return yaml_doc_fail(e, l->err, "'%s': dim %zu is negative (%lld)", q, d,
					       (long long)dim);
		} else if (symbolic && text && !yaml_doc_is_null(e) && text[0]) {
			dim = -1;
		} else {
			return yaml_doc_fail(e, l->err, "'%s': dim %zu is not %s", q, d,
				       symbolic ? "an integer or a name" : "an integer");
		}
		v->dims[d] = dim;
	}
	v->ndim = (int)n;
	v->elem_type = 1; /* float */
	return 0;
}

/* A section of name: dims (inputs, params) or name: values (constants). */
enum section { S_INPUTS, S_PARAMS, S_CONSTANTS };

/* A constant: a number or a list of numbers; integers unless one is not. */
static int read_constant(struct loader *l, const struct yaml_doc_node *v, const char *name,
			 struct opgraph_value *val)
{
	char q[80];
	int is_list = yaml_doc_kind(v) == YDOC_SEQUENCE;
	size_t n = is_list ? yaml_doc_seq_len(v) : 1;
	int64_t ints[OPGRAPH_CONST_MAX];
	double floats[OPGRAPH_CONST_MAX];
	int all_int = 1;
	if (yaml_doc_kind(v) == YDOC_MAPPING || n > OPGRAPH_CONST_MAX)
		return yaml_doc_fail(v, l->err, "'%s': expected a number or a list of at most %d",
				     sp_clip(q, sizeof q, name), OPGRAPH_CONST_MAX);
	for (size_t i = 0; i < n; i++) {
		const struct yaml_doc_node *e = is_list ? yaml_doc_seq_at(v, i) : v;
		const char *text = yaml_doc_text(e);
		if (text && num_parse_int(text, &ints[i]) == NUM_OK) {
			floats[i] = (double)ints[i];
			continue;
		}
		all_int = 0;
		if (yaml_doc_as_double(e, name, 0, &floats[i], l->err))
			return -1;
	}
	val->ndim = is_list;
	val->dims[0] = (int64_t)n;
	val->elem_type = all_int ? 7 : 1; /* int64, float */
	if (opgraph_value_set_contents(val, ints, all_int ? NULL : floats, n))
		return oom(l);
	return 0;
}

static int read_section(struct loader *l, const struct yaml_doc_node *map, const char *key,
			enum section kind, const struct copy *cp)
{
	const struct yaml_doc_node *sec = yaml_doc_get(map, key);
	if (!sec || yaml_doc_is_null(sec))
		return 0;
	if (yaml_doc_kind(sec) != YDOC_MAPPING)
		return yaml_doc_fail(sec, l->err, "%s: expected a mapping of names", key);
	for (size_t i = 0; i < yaml_doc_map_len(sec); i++) {
		const char *raw = yaml_doc_map_key_at(sec, i);
		const struct yaml_doc_node *v = yaml_doc_map_value_at(sec, i);
		char name[MODEL_YAML_NAME_MAX];
		size_t idx;
		/* without $i, a block's param is one tensor that every copy shares */
		if (cp && cp->i > 0 && !uses_index(raw))
			continue;
		if (substitute(v, raw, cp, name, l->err) || declare(l, v, name, &idx))
			return -1;
		struct opgraph_value *val = &l->g->values[idx];
		int rc = kind == S_CONSTANTS ? read_constant(l, v, name, val)
					     : read_dims(l, v, name, kind == S_INPUTS, val);
		if (rc)
			return -1;
		val->is_input = kind == S_INPUTS;
		val->is_initializer = kind == S_PARAMS;
		val->is_constant = kind == S_CONSTANTS;
	}
	return 0;
}

/* One attribute: an integer, a number, a string, or a list of integers or
 * numbers. ConstantOfShape's value goes onto its output, as ONNX's tensor
 * attribute would. */
static int read_attr(struct loader *l, struct opgraph_node *n, const char *key,
		     const struct yaml_doc_node *v)
{
	char q[80];
	int64_t ints[64];
	double floats[64];
	int all_int = 1, rc;
	int is_list = yaml_doc_kind(v) == YDOC_SEQUENCE;
	size_t count = is_list ? yaml_doc_seq_len(v) : 1;
	if (yaml_doc_kind(v) == YDOC_MAPPING || count > 64 || yaml_doc_is_null(v))
		return yaml_doc_fail(v, l->err, "attribute '%s': expected a number, a string or a list "
			       "of at most 64 numbers", sp_clip(q, sizeof q, key));
	for (size_t i = 0; i < count; i++) {
		const struct yaml_doc_node *e = is_list ? yaml_doc_seq_at(v, i) : v;
		const char *text = yaml_doc_text(e);
		if (text && num_parse_int(text, &ints[i]) == NUM_OK) {
			floats[i] = (double)ints[i];
		} else if (text && num_parse_double(text, 1, &floats[i]) == NUM_OK) {
			all_int = 0;
		} else if (!is_list && text) {
			return opgraph_node_add_string(n, key, text) ? oom(l) : 0;
		} else {
			return yaml_doc_fail(e, l->err, "attribute '%s': a list must hold numbers only",
				       sp_clip(q, sizeof q, key));
		}
	}
	if (!strcmp(key, "value") && !strcmp(n->op, "ConstantOfShape")) {
		if (is_list || !n->nout)
			return yaml_doc_fail(v, l->err, "ConstantOfShape's value: expected one number");
		struct opgraph_value *y = &l->g->values[n->out[0]];
		y->elem_type = all_int ? 7 : 1;
		rc = opgraph_value_set_contents(y, ints, all_int ? NULL : floats, 1);
	} else if (is_list) {
		rc = all_int ? opgraph_node_add_ints(n, key, ints, count)
			     : opgraph_node_add_floats(n, key, floats, count);
	} else {
		rc = all_int ? opgraph_node_add_int(n, key, ints[0])
			     : opgraph_node_add_float(n, key, floats[0]);
	}
	return rc ? oom(l) : 0;
}

/* A list of names, substituted; empty names allowed (absent inputs). */
static int read_names(struct loader *l, const struct yaml_doc_node *item, const char *key,
		      int required, const struct copy *cp, char (**names)[MODEL_YAML_NAME_MAX],
		      size_t *n)
{
	const char **raw = NULL;
	int rc = required ? yaml_doc_require_string_list(item, key, &raw, n, l->err)
			  : yaml_doc_string_list(item, key, &raw, n, l->err);
	*names = NULL;
	if (rc)
		return -1;
	if (required && !*n) {
		free(raw);
		return yaml_doc_fail(item, l->err, "%s: expected at least one name", key);
	}
	*names = malloc((*n ? *n : 1) * sizeof **names);
	if (!*names) {
		free(raw);
		return oom(l);
	}
	const struct yaml_doc_node *at = yaml_doc_get(item, key);
	for (size_t i = 0; i < *n; i++)
		if (substitute(at ? at : item, raw[i], cp, (*names)[i], l->err)) {
			free(raw);
			return -1;
		}
	free(raw);
	return 0;
}

static int read_node(struct loader *l, const struct yaml_doc_node *item, const struct copy *cp)
{
	static const char *const keys[] = {"op", "name", "inputs", "outputs", "attrs", NULL};
	const char *op, *raw_name = NULL;
	char(*in)[MODEL_YAML_NAME_MAX] = NULL, (*out)[MODEL_YAML_NAME_MAX] = NULL,
	name[MODEL_YAML_NAME_MAX], q[80];
	size_t nin = 0, nout = 0;
	const char *inp[64], *outp[64];
	int rc = -1;
	if (yaml_doc_check_keys(item, keys, "a node", l->err) ||
	    yaml_doc_require_string(item, "op", &op, l->err) ||
	    yaml_doc_string(item, "name", NULL, &raw_name, l->err) ||
	    read_names(l, item, "inputs", 0, cp, &in, &nin) ||
	    read_names(l, item, "outputs", 1, cp, &out, &nout))
		goto done;
	if (nin > 64 || nout > 64) {
		rc = yaml_doc_fail(item, l->err, "more than 64 inputs or outputs");
		goto done;
	}
	if (raw_name ? substitute(item, raw_name, cp, name, l->err) : 0)
		goto done;
	if (!raw_name)
		memcpy(name, out[0], sizeof name);
	for (size_t i = 0; i < nout; i++) {
		size_t *v = out[i][0] ? strmap_find(&l->g->names, out[i], strlen(out[i])) : NULL;
		const struct opgraph_value *val = v ? &l->g->values[*v] : NULL;
		if (!out[i][0]) {
			rc = yaml_doc_fail(item, l->err, "node '%s': output %zu has no name",
				     sp_clip(q, sizeof q, name), i);
			goto done;
		}
		if (val && val->producer != OPGRAPH_NONE) {
			const struct opgraph_node *p = &l->g->nodes[val->producer];
			rc = yaml_doc_fail(item, l->err, "node '%s': output '%s' is already produced by "
				     "node '%s' (line %zu)", name, out[i], p->name, p->line);
			goto done;
		}
		if (val && (val->is_input || val->is_initializer)) {
			rc = yaml_doc_fail(item, l->err, "node '%s': output '%s' is an input, a param or "
				     "a constant", name, out[i]);
			goto done;
		}
	}
	for (size_t i = 0; i < nin; i++)
		inp[i] = in[i];
	for (size_t i = 0; i < nout; i++)
		outp[i] = out[i];
	if (opgraph_add_node(l->g, op, name, inp, nin, outp, nout, l->err))
		goto done;
	struct opgraph_node *n = &l->g->nodes[l->g->nnodes - 1];
	n->line = yaml_doc_line(item);
	const struct yaml_doc_node *attrs = yaml_doc_get(item, "attrs");
	if (attrs && !yaml_doc_is_null(attrs)) {
		if (yaml_doc_kind(attrs) != YDOC_MAPPING) {
			rc = yaml_doc_fail(attrs, l->err, "attrs: expected a mapping");
			goto done;
		}
		for (size_t i = 0; i < yaml_doc_map_len(attrs); i++)
			if (read_attr(l, n, yaml_doc_map_key_at(attrs, i), yaml_doc_map_value_at(attrs, i)))
				goto done;
	}
	rc = 0;
done:
	free(in);
	free(out);
	return rc;
}

static int read_nodes(struct loader *l, const struct yaml_doc_node *seq, const struct copy *cp);

/* A repeated block: its params, constants and nodes once per copy. */
static int read_block(struct loader *l, const struct yaml_doc_node *item)
{
	static const char *const keys[] = {"repeat", "input", "output", "params", "constants",
					   "nodes", NULL};
	int64_t repeat;
	const char *input, *output;
	const struct yaml_doc_node *nodes;
	if (yaml_doc_check_keys(item, keys, "a repeated block", l->err) ||
	    yaml_doc_require_int(item, "repeat", &repeat, l->err) ||
	    yaml_doc_string(item, "input", NULL, &input, l->err) ||
	    yaml_doc_string(item, "output", NULL, &output, l->err) ||
	    yaml_doc_require(item, "nodes", YDOC_SEQUENCE, &nodes, l->err))
		return -1;
	size_t per_copy = yaml_doc_seq_len(nodes);
	if (repeat < 1 || repeat > MODEL_YAML_MAX_NODES ||
	    l->g->nnodes + (size_t)repeat * per_copy > MODEL_YAML_MAX_NODES)
		return yaml_doc_fail(yaml_doc_get(item, "repeat"), l->err,
				     "repeat: %lld copies of %zu nodes: expected 1 or more, at "
				     "most %d "
				     "nodes in the model",
				     (long long)repeat, per_copy, MODEL_YAML_MAX_NODES);
	char prev[MODEL_YAML_NAME_MAX], cur[MODEL_YAML_NAME_MAX];
	for (int64_t i = 0; i < repeat; i++) {
		if (output && i + 1 < repeat)
			snprintf(cur, sizeof cur, "%s#%lld", output, (long long)i);
		else if (output)
			snprintf(cur, sizeof cur, "%s", output);
		struct copy cp = {.i = i, .in = i ? prev : input, .out = output ? cur : NULL};
		if (i && !output)
			cp.in = NULL;
		if (read_section(l, item, "params", S_PARAMS, &cp) ||
		    read_section(l, item, "constants", S_CONSTANTS, &cp) ||
		    read_nodes(l, nodes, &cp))
			return -1;
		memcpy(prev, cur, sizeof prev);
	}
	return 0;
}

static int read_nodes(struct loader *l, const struct yaml_doc_node *seq, const struct copy *cp)
{
	for (size_t i = 0; i < yaml_doc_seq_len(seq); i++) {
		const struct yaml_doc_node *item = yaml_doc_seq_at(seq, i);
		int block = yaml_doc_kind(item) == YDOC_MAPPING && yaml_doc_get(item, "repeat");
		if (block && cp)
			return yaml_doc_fail(item, l->err, "a repeated block inside a repeated block");
		if (block ? read_block(l, item) : read_node(l, item, cp))
			return -1;
	}
	return 0;
}

/* opset: within the ONNX opsets the shape rules know. */
static int check_opset(struct loader *l, const struct yaml_doc_node *root)
{
	int64_t v = l->g->opset;
	if (v >= OPGRAPH_OPSET_MIN && v <= OPGRAPH_OPSET_MAX)
		return 0;
	return sp_fail(l->err, "%s:%zu: opset %lld: graph-partition reads ONNX opsets %d to %d",
		       l->g->path, yaml_doc_line(yaml_doc_get(root, "opset")), (long long)v,
		       OPGRAPH_OPSET_MIN, OPGRAPH_OPSET_MAX);
}

static int read_model(struct loader *l, const struct yaml_doc *doc)
{
	static const char *const keys[] = {"name", "opset", "inputs", "params", "constants",
					   "nodes", "outputs", NULL};
	const struct yaml_doc_node *root, *nodes;
	const char **outputs = NULL;
	size_t nout;
	char q[80];
	if (yaml_doc_root_map(doc, &root, l->err) ||
	    yaml_doc_check_keys(root, keys, "a model", l->err) ||
	    yaml_doc_int(root, "opset", 17, &l->g->opset, l->err) ||
	    check_opset(l, root) ||
	    read_section(l, root, "inputs", S_INPUTS, NULL) ||
	    read_section(l, root, "params", S_PARAMS, NULL) ||
	    read_section(l, root, "constants", S_CONSTANTS, NULL) ||
	    yaml_doc_require(root, "nodes", YDOC_SEQUENCE, &nodes, l->err) ||
	    read_nodes(l, nodes, NULL) ||
	    yaml_doc_string_list(root, "outputs", &outputs, &nout, l->err))
		return -1;
	for (size_t i = 0; i < nout; i++) {
		size_t *v = strmap_find(&l->g->names, outputs[i], strlen(outputs[i]));
		if (!v) {
			int rc = yaml_doc_fail(yaml_doc_get(root, "outputs"), l->err,
					       "output '%s' is no tensor "
					       "of the model",
					       sp_clip(q, sizeof q, outputs[i]));
			free(outputs);
			return rc;
		}
		l->g->values[*v].is_output = 1;
	}
	free(outputs);
	return 0;
}

static int load_doc(struct yaml_doc *doc, const char *name, struct opgraph *g, struct sp_err *err)
{
	struct loader l = {g, err};
	memset(g, 0, sizeof *g);
	g->path = strdup(name);
	int rc = g->path ? read_model(&l, doc) : sp_fail(err, "%s: out of memory", name);
	yaml_doc_free(doc);
	if (rc)
		opgraph_free(g);
	return rc;
}

int model_yaml_load(const char *path, struct opgraph *g, struct sp_err *err)
{
	struct yaml_doc *doc;
	memset(g, 0, sizeof *g);
	return yaml_doc_load(path, &doc, err) ? -1 : load_doc(doc, path, g, err);
}

int model_yaml_load_buffer(const void *buf, size_t len, const char *name, struct opgraph *g,
			   struct sp_err *err)
{
	struct yaml_doc *doc;
	memset(g, 0, sizeof *g);
	return yaml_doc_load_buffer(buf, len, name, &doc, err) ? -1 : load_doc(doc, name, g, err);
}
