#include "sparse/edgelist.h"

#include <string.h>

#include "sparse/coo.h"
#include "core/textscan.h"

/* How the file lays out its edges, fixed by the first one. */
struct layout {
	char sep;           /* ',', '\t' or ' ' (runs of spaces and tabs) */
	int nfields;        /* 2, or 3 with weights; 0 before the first edge */
	int64_t first_line; /* where the first edge is */
};

static const char *sep_name(char sep)
{
	return sep == ',' ? "commas" : sep == '\t' ? "tabs" : "spaces";
}

/* A header is a first line whose first field is no number at all; "1.5,2"
 * is not a header but a bad edge, and is reported as one. */
static int is_header(struct text_span line)
{
	struct text_span first = text_span_trim(line);
	const char *p = first.p;
	while (p < first.end && *p != ',' && *p != '\t' && *p != ' ')
		p++;
	first.end = p;
	int64_t i;
	float f;
	return text_parse_i64(first, &i) == TEXT_SYNTAX && text_parse_float(first, &f) == TEXT_SYNTAX;
}

static char detect_sep(struct text_span line)
{
	size_t n = (size_t)(line.end - line.p);
	if (memchr(line.p, ',', n))
		return ',';
	if (memchr(line.p, '\t', n))
		return '\t';
	return ' ';
}

/* A node id as the file gives it, checked, to a 0-based row. */
static int check_node(const struct text_scan *s, int64_t id, int k,
		      const struct edgelist_opts *opts, int32_t *out, int64_t *max_id,
		      struct sp_err *err)
{
	int64_t base = opts->one_based ? 1 : 0;
	if (id < 0)
		return text_scan_fail(s, err, "field %d: negative node id %lld", k, (long long)id);
	if (id < base)
		return text_scan_fail(s, err, "field %d: node id 0 in a 1-based edge list", k);
	if (opts->nodes > 0 && id - base >= opts->nodes)
		return text_scan_fail(s, err, "field %d: node id %lld out of range for %lld nodes", k,
				      (long long)id, (long long)opts->nodes);
	if (id - base >= CSR_MAX_DIM)
		return text_scan_fail(s, err, "field %d: node id %lld exceeds the limit of %lld", k,
				      (long long)id, (long long)(CSR_MAX_DIM - 1 + base));
	*out = (int32_t)(id - base);
	if (id - base > *max_id)
		*max_id = id - base;
	return 0;
}

/* Past a separator: one or more blanks for ' ', else the character with
 * nothing around it. */
static int take_sep(const char **p, const char *end, char sep)
{
	if (sep == ' ')
		return text_take_blanks(p, end);
	if (*p == end || **p != sep)
		return 0;
	(*p)++;
	return 1;
}

/* The usual edge line once the layout is known: "12,34", "12\t34\t0.5",
 * "12 34" with unsigned ids and nothing unusual. Returns 0 for anything
 * else, which parse_edge_strictly then parses and explains. */
static int take_edge(struct text_span line, const struct layout *lay, int64_t ids[2], float *w)
{
	const char *p = line.p, *e = line.end;
	if (!text_take_digits(&p, e, &ids[0]) || !take_sep(&p, e, lay->sep) ||
	    !text_take_digits(&p, e, &ids[1]))
		return 0;
	if (lay->nfields == 3) {
		if (!take_sep(&p, e, lay->sep) || text_parse_float(text_take_word(&p, e), w) != TEXT_OK)
			return 0;
	}
	text_take_blanks(&p, e);
	return p == e;
}

static int parse_edge_strictly(const struct text_scan *s, struct text_span line,
			       struct layout *lay, int64_t ids[2], float *w, struct sp_err *err)
{
	struct text_span rest = line, f[3], extra;
	int n = 0;
	while (n < 3 && text_next_field(&rest, lay->sep, &f[n]))
		n++;
	if (n == 3 && text_next_field(&rest, lay->sep, &extra)) {
		for (n = 4; text_next_field(&rest, lay->sep, &extra); n++)
			;
		return text_scan_fail(s, err, "%d fields, expected source, target and an optional "
					      "weight", n);
	}
	if (n < 2)
		return text_scan_fail(s, err, "expected 2 or 3 fields separated by %s, found 1",
				      sep_name(lay->sep));
	if (!lay->nfields) {
		lay->nfields = n;
		lay->first_line = s->line;
	} else if (n != lay->nfields) {
		return text_scan_fail(s, err, "%d fields, but the first edge (line %lld) has %d", n,
				      (long long)lay->first_line, lay->nfields);
	}
	if (text_field_i64(s, f[0], 1, "a node id", &ids[0], err) ||
	    text_field_i64(s, f[1], 2, "a node id", &ids[1], err))
		return -1;
	return n == 3 ? text_field_float(s, f[2], 3, "a weight", w, err) : 0;
}

static int parse_edge(const struct text_scan *s, struct text_span line, struct layout *lay,
		      const struct edgelist_opts *opts, struct coo *c, int64_t *max_id,
		      struct sp_err *err)
{
	int64_t ids[2];
	float w = 0;
	int first = !lay->nfields;
	if (!(lay->nfields && take_edge(line, lay, ids, &w)) &&
	    parse_edge_strictly(s, line, lay, ids, &w, err))
		return -1;
	int32_t src, dst;
	if (check_node(s, ids[0], 1, opts, &src, max_id, err) ||
	    check_node(s, ids[1], 2, opts, &dst, max_id, err))
		return -1;
	/* A guess at 16 bytes an edge; coo_push grows the arrays if wrong. */
	if (first && coo_init(c, (int64_t)(text_scan_left(s) / 16) + 16, lay->nfields == 3, s->name,
			      err))
		return -1;
	return coo_push(c, src, dst, w, s->name, err);
}

int edgelist_parse(const char *buf, size_t len, const char *name,
		   const struct edgelist_opts *opts, struct csr *g, struct sp_err *err)
{
	static const struct edgelist_opts defaults;
	if (!opts)
		opts = &defaults;
	memset(g, 0, sizeof *g);
	if (opts->nodes < 0 || opts->nodes > CSR_MAX_DIM)
		return sp_fail(err, "%s: node count %lld outside [0, %lld]", name,
			       (long long)opts->nodes, (long long)CSR_MAX_DIM);
	struct text_scan s;
	struct text_span line;
	struct layout lay = {0};
	struct coo c = {0};
	int64_t max_id = -1;
	text_scan_init(&s, buf, len, name);
	int64_t header_line = 0;
	while (text_scan_content(&s, "#%", &line)) {
		if (!lay.sep && !header_line && is_header(line)) {
			header_line = s.line;
			continue;
		}
		if (!lay.sep)
			lay.sep = detect_sep(line);
		if (parse_edge(&s, line, &lay, opts, &c, &max_id, err)) {
			coo_free(&c);
			return -1;
		}
	}
	if (c.n == 0 && opts->nodes == 0) {
		if (header_line)
			return sp_fail(err, "%s: no edges (line %lld was taken for a header)", name,
				       (long long)header_line);
		return sp_fail(err, "%s: no edges", name);
	}
	int64_t nodes = opts->nodes ? opts->nodes : max_id + 1;
	return coo_to_csr(&c, nodes, nodes, opts->undirected ? COO_MIRROR : COO_AS_GIVEN, g, name,
			  err);
}

int edgelist_read(const char *path, const struct edgelist_opts *opts, struct csr *g,
		  struct sp_err *err)
{
	struct text_file f;
	memset(g, 0, sizeof *g);
	if (text_file_open(&f, path, err))
		return -1;
	int rc = edgelist_parse(f.data, f.len, path, opts, g, err);
	text_file_close(&f);
	return rc;
}
