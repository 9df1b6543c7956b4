#include "ksmm/ksmm_space.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/yaml_doc.h"

static const char *const param_names[KSMM_P_COUNT + 1] = {
	"tile_rows", "tile_k", "tile_batch", "thread_rows", "thread_batch",
	"vec",       "stages", "tf32",       "tile_d",       NULL,
};
/* A mapping's keys: the parameters, then whom its points are for. */
static const char *const mapping_keys[KSMM_P_COUNT + 3] = {
	"tile_rows", "tile_k", "tile_batch", "thread_rows", "thread_batch", "vec",
	"stages",    "tf32",   "tile_d",     "dtypes",      "layouts",      NULL,
};

const char *ksmm_param_name(enum ksmm_param k)
{
	return param_names[k];
}

int ksmm_config_get(const struct ksmm_config *c, enum ksmm_param k)
{
	const int v[KSMM_P_COUNT] = {c->tile_rows, c->tile_k, c->tile_batch,
				     c->thread_rows, c->thread_batch, c->vec,
				     c->stages, c->tf32, c->tile_d};
	return v[k];
}

void ksmm_config_set(struct ksmm_config *c, enum ksmm_param k, int v)
{
	int *f[KSMM_P_COUNT] = {&c->tile_rows, &c->tile_k, &c->tile_batch,
				&c->thread_rows, &c->thread_batch, &c->vec,
				&c->stages, &c->tf32, &c->tile_d};
	*f[k] = v;
}

const char *ksmm_param_refusal(enum ksmm_param k, int64_t v)
{
	if (k == KSMM_P_TF32)
		return v == 0 || v == 1 || v == 3 ? NULL : "not 0, 1 or 3";
	if (k == KSMM_P_STAGES)
		return v >= 1 && v <= 8 ? NULL : "out of range (1 to 8)";
	_Static_assert(KSMM_SPACE_VALUE_MAX == 4096, "the message below says 4096");
	return v >= 1 && v <= KSMM_SPACE_VALUE_MAX ? NULL : "out of range (1 to 4096)";
}

static int check_value(const struct yaml_doc_node *n, enum ksmm_param k, int64_t v,
		       struct sp_err *err)
{
	const char *refusal = ksmm_param_refusal(k, v);
	if (refusal)
		return yaml_doc_fail(n, err, "%s: %" PRId64 " is %s", param_names[k], v, refusal);
	return 0;
}

/* A range mapping {from, to, times | step} to its values. */
static int read_range(const struct yaml_doc_node *n, enum ksmm_param k, int **out, size_t *count,
		      struct sp_err *err)
{
	static const char *const keys[] = {"from", "to", "times", "step", NULL};
	int64_t from, to, times, step;
	if (yaml_doc_check_keys(n, keys, param_names[k], err) ||
	    yaml_doc_require_int(n, "from", &from, err) || yaml_doc_require_int(n, "to", &to, err) ||
	    yaml_doc_int(n, "times", 0, &times, err) || yaml_doc_int(n, "step", 0, &step, err))
		return -1;
	if ((times != 0) == (step != 0))
		return yaml_doc_fail(n, err, "%s: a range takes one of 'times' and 'step'",
				 param_names[k]);
	if (times && times < 2)
		return yaml_doc_fail(n, err, "%s: times %" PRId64 " must be at least 2", param_names[k],
				 times);
	if (step && step < 1)
		return yaml_doc_fail(n, err, "%s: step %" PRId64 " must be at least 1", param_names[k],
				 step);
	if (from > to)
		return yaml_doc_fail(n, err, "%s: range from %" PRId64 " to %" PRId64
				 " holds no value", param_names[k], from, to);
	if (check_value(n, k, from, err) || check_value(n, k, to, err))
		return -1;
	if (times && from == 0)
		return yaml_doc_fail(n, err, "%s: a range by 'times' cannot start at 0",
				 param_names[k]);
	int *v = malloc((KSMM_SPACE_VALUE_MAX + 2) * sizeof *v);
	if (!v)
		return yaml_doc_fail(n, err, "out of memory");
	size_t m = 0;
	for (int64_t x = from;; x = times ? x * times : x + step) {
		if (check_value(n, k, x, err)) { /* tf32 {from: 0, to: 3, step: 1} */
			free(v);
			return -1;
		}
		v[m++] = (int)x;
		if (times ? x > to / times : x > to - step) /* the next would pass to */
			break;
	}
	*out = v;
	*count = m;
	return 0;
}

static int read_param(const struct yaml_doc_node *sec, enum ksmm_param k, int **out, size_t *count,
		      struct sp_err *err)
{
	const struct yaml_doc_node *n = yaml_doc_get(sec, param_names[k]);
	if (!n && k == KSMM_P_TILE_D) { /* optional: one de a block */
		*out = malloc(sizeof **out);
		if (!*out)
			return yaml_doc_fail(sec, err, "out of memory");
		**out = 1;
		*count = 1;
		return 0;
	}
	if (!n || yaml_doc_is_null(n))
		return yaml_doc_fail(sec, err, "missing key '%s'", param_names[k]);
	if (yaml_doc_kind(n) == YDOC_MAPPING)
		return read_range(n, k, out, count, err);
	int64_t *list;
	size_t m;
	if (yaml_doc_require_int_list(sec, param_names[k], &list, &m, err))
		return -1;
	if (m == 0) {
		free(list);
		return yaml_doc_fail(n, err, "%s: an empty list holds no value", param_names[k]);
	}
	int *v = malloc(m * sizeof *v);
	if (!v) {
		free(list);
		return yaml_doc_fail(n, err, "out of memory");
	}
	for (size_t i = 0; i < m; i++) {
		if (check_value(yaml_doc_kind(n) == YDOC_SEQUENCE ? yaml_doc_seq_at(n, i) : n, k, list[i],
				err)) {
			free(list), free(v);
			return -1;
		}
		v[i] = (int)list[i];
	}
	free(list);
	*out = v;
	*count = m;
	return 0;
}

/* The optional list `key` of names (dtypes or layouts) as a bit mask;
 * all bits when absent. */
static int read_names(const struct yaml_doc_node *map, const char *key,
		      int (*parse)(const char *, int *), unsigned all, unsigned *out,
		      struct sp_err *err)
{
	const struct yaml_doc_node *node = yaml_doc_get(map, key);
	const char **v;
	size_t n;
	*out = all;
	if (!node)
		return 0;
	if (yaml_doc_string_list(map, key, &v, &n, err))
		return -1;
	*out = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int bit;
		char shown[64];
		if (parse(v[i], &bit))
			rc = yaml_doc_fail(node, err, "%s: unknown '%s'", key,
					   sp_clip(shown, sizeof shown, v[i]));
		else
			*out |= 1u << bit;
	}
	free(v);
	if (!rc && !*out)
		rc = yaml_doc_fail(node, err, "%s: an empty list", key);
	return rc;
}

static int parse_dtype(const char *text, int *out)
{
	enum ksmm_dtype t;
	if (ksmm_dtype_parse(text, &t))
		return -1;
	*out = (int)t;
	return 0;
}

static int parse_layout(const char *text, int *out)
{
	enum ksmm_layout l;
	if (ksmm_layout_parse(text, &l))
		return -1;
	*out = (int)l;
	return 0;
}

static int read_space(const struct yaml_doc *doc, struct ksmm_space *s, struct sp_err *err)
{
	static const char *const sections[] = {"simt", "mma", NULL};
	const struct yaml_doc_node *root;
	if (yaml_doc_root_map(doc, &root, err) ||
	    yaml_doc_check_keys(root, sections, "the space", err))
		return -1;
	for (int v = 0; v < 2; v++) {
		const struct yaml_doc_node *node = yaml_doc_get(root, sections[v]);
		if (!node)
			continue;
		const int list = yaml_doc_kind(node) == YDOC_SEQUENCE;
		const size_t n = list ? yaml_doc_seq_len(node) : 1;
		if (list && n == 0)
			return yaml_doc_fail(node, err, "section %s: an empty list holds no "
					 "configuration", sections[v]);
		for (size_t i = 0; i < n; i++) {
			const struct yaml_doc_node *sec = list ? yaml_doc_seq_at(node, i) : node;
			char what[32];
			snprintf(what, sizeof what, "section %s", sections[v]);
			if (yaml_doc_kind(sec) != YDOC_MAPPING)
				return yaml_doc_fail(sec, err, "section %s: expected a mapping of "
						 "parameters or a list of them", sections[v]);
			if (s->nparts == KSMM_SPACE_PARTS_MAX)
				return yaml_doc_fail(sec, err, "more than %d mappings in the space",
						 KSMM_SPACE_PARTS_MAX);
			if (yaml_doc_check_keys(sec, mapping_keys, what, err))
				return -1;
			struct ksmm_space_part *pt = &s->part[s->nparts++];
			pt->variant = (enum ksmm_variant)v;
			if (read_names(sec, "dtypes", parse_dtype, 7u, &pt->dtypes, err) ||
			    read_names(sec, "layouts", parse_layout, 3u, &pt->layouts, err))
				return -1;
			pt->count = 1;
			for (int k = 0; k < KSMM_P_COUNT; k++) {
				if (read_param(sec, (enum ksmm_param)k, &pt->values[k], &pt->n[k],
					       err))
					return -1;
				pt->count *= pt->n[k];
				if (pt->count > KSMM_SPACE_CONFIGS_MAX)
					return yaml_doc_fail(sec, err, "section %s holds more than "
							 "%d configurations", sections[v],
							 KSMM_SPACE_CONFIGS_MAX);
			}
			s->count += pt->count;
			if (s->count > KSMM_SPACE_CONFIGS_MAX)
				return yaml_doc_fail(sec, err, "the space holds more than %d "
						 "configurations", KSMM_SPACE_CONFIGS_MAX);
		}
	}
	if (s->count == 0)
		return yaml_doc_fail(root, err, "no section (expected simt, mma or both)");
	return 0;
}

/* The space of *doc once loaded (loaded: the load's status; *doc read only
 * after it), which it frees; s is left empty on failure. */
static int space_from(int loaded, struct yaml_doc **doc, struct ksmm_space *s,
		      struct sp_err *err)
{
	if (loaded)
		return -1;
	int rc = read_space(*doc, s, err);
	yaml_doc_free(*doc);
	if (rc)
		ksmm_space_free(s);
	return rc;
}

int ksmm_space_read_buffer(const char *buf, size_t len, const char *name, struct ksmm_space *s,
			   struct sp_err *err)
{
	struct yaml_doc *doc = NULL;
	*s = (struct ksmm_space){0};
	return space_from(yaml_doc_load_buffer(buf, len, name, &doc, err), &doc, s, err);
}

int ksmm_space_read(const char *path, struct ksmm_space *s, struct sp_err *err)
{
	struct yaml_doc *doc = NULL;
	*s = (struct ksmm_space){0};
	return space_from(yaml_doc_load(path, &doc, err), &doc, s, err);
}

int ksmm_space_default(struct ksmm_space *s, struct sp_err *err)
{
	return ksmm_space_read_buffer(ksmm_space_default_yaml, strlen(ksmm_space_default_yaml),
				      "configs/ksmm/space.yaml (built in)", s, err);
}

void ksmm_space_free(struct ksmm_space *s)
{
	for (size_t p = 0; p < s->nparts; p++)
		for (int k = 0; k < KSMM_P_COUNT; k++)
			free(s->part[p].values[k]);
	s->nparts = 0;
	s->count = 0;
}

/* The mapping configuration i comes from; i becomes its index there. */
static const struct ksmm_space_part *part_of(const struct ksmm_space *s, uint64_t *i)
{
	size_t p = 0;
	while (p + 1 < s->nparts && *i >= s->part[p].count)
		*i -= s->part[p++].count;
	return &s->part[p];
}

int ksmm_space_for(const struct ksmm_space *s, uint64_t i, enum ksmm_dtype t, enum ksmm_layout l)
{
	const struct ksmm_space_part *pt = part_of(s, &i);
	return (pt->dtypes >> t & 1) && (pt->layouts >> l & 1);
}

void ksmm_space_at(const struct ksmm_space *s, uint64_t i, struct ksmm_config *out)
{
	const struct ksmm_space_part *pt = part_of(s, &i);
	*out = (struct ksmm_config){.variant = pt->variant};
	for (int k = KSMM_P_COUNT - 1; k >= 0; k--) {
		size_t n = pt->n[k];
		ksmm_config_set(out, (enum ksmm_param)k, pt->values[k][i % n]);
		i /= n;
	}
}
