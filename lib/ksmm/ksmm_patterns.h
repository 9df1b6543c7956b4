/* Pattern lists for ksmm-tune: `--pattern a,b,c,d` options and patterns
 * files in the format of PascalCarrivain/ksmm's patterns.in: one pattern a
 * line, `a,b,c,d`, with an optional fifth field, the batch that line is
 * for. Spaces around fields are allowed; blank lines and lines whose first
 * non-blank character is '#' are skipped (the original file has neither,
 * so every original file reads the same). Errors name the file and line:
 *   patterns.in:4: expected a,b,c,d or a,b,c,d,batch, found 3 fields
 *   patterns.in:7: b: expected a whole number, found 'x' */
#ifndef SPKIT_KSMM_PATTERNS_H
#define SPKIT_KSMM_PATTERNS_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "ksmm/ksmm.h"

/* Longest list a file may hold: the paper's grid has under 2,000. */
#define KSMM_PATTERNS_MAX 1000000

struct ksmm_pattern_entry {
	struct ksmm_pattern p;
	int64_t batch; /* the line's own batch; 0 when it gives none */
	char where[256]; /* "patterns.in:4" or "--pattern", for messages */
};

struct ksmm_pattern_list {
	struct ksmm_pattern_entry *v;
	size_t n, cap;
};

/* One "a,b,c,d" or "a,b,c,d,batch" (a --pattern value); what names it in
 * messages and in out->where. Sizes 1 to 2^31 - 1. */
int ksmm_pattern_parse(const char *text, const char *what, struct ksmm_pattern_entry *out,
		       struct sp_err *err);
int ksmm_pattern_list_add(struct ksmm_pattern_list *l, const struct ksmm_pattern_entry *e,
			  struct sp_err *err);
/* Append every pattern of a file (or of a buffer named name) to l. A file
 * with no pattern is an error. */
int ksmm_patterns_read(const char *path, struct ksmm_pattern_list *l, struct sp_err *err);
int ksmm_patterns_read_buffer(const char *buf, size_t len, const char *name,
			      struct ksmm_pattern_list *l, struct sp_err *err);
void ksmm_pattern_list_free(struct ksmm_pattern_list *l);

#endif
