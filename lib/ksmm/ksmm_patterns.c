#include "ksmm/ksmm_patterns.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/textscan.h"

int ksmm_pattern_list_add(struct ksmm_pattern_list *l, const struct ksmm_pattern_entry *e,
			  struct sp_err *err)
{
	if (l->n == l->cap) {
		if (l->n >= KSMM_PATTERNS_MAX)
			return sp_fail(err, "%s: more than %d patterns", e->where,
				       KSMM_PATTERNS_MAX);
		size_t cap = l->cap ? 2 * l->cap : 16;
		void *v = realloc(l->v, cap * sizeof *l->v);
		if (!v)
			return sp_fail(err, "%s: out of memory", e->where);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
	return 0;
}

void ksmm_pattern_list_free(struct ksmm_pattern_list *l)
{
	free(l->v);
	*l = (struct ksmm_pattern_list){0};
}

/* The fields of one line or option value into e; where starts every
 * message ("patterns.in:4" or "--pattern"). */
static int parse_fields(struct text_span line, const char *where, struct ksmm_pattern_entry *e,
			struct sp_err *err)
{
	static const char *const names[] = {"a", "b", "c", "d", "batch"};
	int64_t v[5] = {0};
	struct text_span rest = line, f;
	int n = 0;
	while (text_next_field(&rest, ',', &f)) {
		if (n < 5) {
			char shown[TEXT_SHOW_MAX];
			enum text_num r = text_parse_i64(f, &v[n]);
			if (r == TEXT_SYNTAX)
				return sp_fail(err, "%s: %s: expected a whole number, found '%s'",
					       where, names[n], text_span_show(f, shown, sizeof shown));
			if (r != TEXT_OK || v[n] < 1 || v[n] > INT32_MAX)
				return sp_fail(err, "%s: %s = %s is out of range (1 to 2^31 - 1)",
					       where, names[n], text_span_show(f, shown, sizeof shown));
		}
		n++;
	}
	if (n != 4 && n != 5)
		return sp_fail(err, "%s: expected a,b,c,d or a,b,c,d,batch, found %d field%s", where,
			       n, sp_plural(n));
	e->p = (struct ksmm_pattern){v[0], v[1], v[2], v[3]};
	e->batch = n == 5 ? v[4] : 0;
	return 0;
}

int ksmm_pattern_parse(const char *text, const char *what, struct ksmm_pattern_entry *out,
		       struct sp_err *err)
{
	struct text_span line = {text, text + strlen(text)};
	if (memchr(text, '\n', strlen(text)))
		return sp_fail(err, "%s: expected a,b,c,d, found a line break", what);
	if (parse_fields(line, what, out, err))
		return -1;
	snprintf(out->where, sizeof out->where, "%s", what);
	return 0;
}

int ksmm_patterns_read_buffer(const char *buf, size_t len, const char *name,
			      struct ksmm_pattern_list *l, struct sp_err *err)
{
	struct text_scan s;
	struct text_span line;
	size_t before = l->n;
	text_scan_init(&s, buf, len, name);
	while (text_scan_content(&s, "#", &line)) {
		struct ksmm_pattern_entry e;
		char where[sizeof e.where];
		snprintf(where, sizeof where, "%s:%" PRId64, name, s.line);
		if (parse_fields(line, where, &e, err))
			return -1;
		memcpy(e.where, where, sizeof where);
		if (ksmm_pattern_list_add(l, &e, err))
			return -1;
	}
	if (l->n == before)
		return sp_fail(err, "%s: no pattern in the file", name);
	return 0;
}

int ksmm_patterns_read(const char *path, struct ksmm_pattern_list *l, struct sp_err *err)
{
	struct text_file f;
	if (text_file_open(&f, path, err))
		return -1;
	int rc = ksmm_patterns_read_buffer(f.data, f.len, path, l, err);
	text_file_close(&f);
	return rc;
}
