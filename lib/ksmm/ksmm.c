#include "ksmm/ksmm.h"

#include <inttypes.h>
#include <string.h>

static const char *const dtype_names[] = {"fp32", "fp16", "bf16"};
static const char *const layout_names[] = {"bsf", "bsl"};
static const char *const variant_names[] = {"simt", "mma"};

const char *ksmm_dtype_name(enum ksmm_dtype t)
{
	return dtype_names[t];
}

const char *ksmm_layout_name(enum ksmm_layout l)
{
	return layout_names[l];
}

const char *ksmm_variant_name(enum ksmm_variant v)
{
	return variant_names[v];
}

static int name_index(const char *text, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(text, names[i]) == 0)
			return i;
	return -1;
}

int ksmm_dtype_parse(const char *text, enum ksmm_dtype *out)
{
	int i = name_index(text, dtype_names, 3);
	if (i < 0)
		return -1;
	*out = (enum ksmm_dtype)i;
	return 0;
}

int ksmm_layout_parse(const char *text, enum ksmm_layout *out)
{
	int i = name_index(text, layout_names, 2);
	if (i < 0)
		return -1;
	*out = (enum ksmm_layout)i;
	return 0;
}

size_t ksmm_dtype_size(enum ksmm_dtype t)
{
	return t == KSMM_F32 ? 4 : 2;
}

int64_t ksmm_rows(const struct ksmm_pattern *p)
{
	return p->a * p->b * p->d;
}

int64_t ksmm_cols(const struct ksmm_pattern *p)
{
	return p->a * p->c * p->d;
}

#define KSMM_INDEX_LIMIT ((int64_t)1 << 31)

/* The product of n positive factors, or KSMM_INDEX_LIMIT once it reaches
 * the limit: both operands stay below 2^31, so no step overflows int64. */
static int64_t capped_product(const int64_t *f, int n)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++) {
		if (f[i] >= KSMM_INDEX_LIMIT)
			return KSMM_INDEX_LIMIT;
		p *= f[i];
		if (p >= KSMM_INDEX_LIMIT)
			return KSMM_INDEX_LIMIT;
	}
	return p;
}

int ksmm_pattern_check(const struct ksmm_pattern *p, int64_t batch, const char *what,
		       struct sp_err *err)
{
	const int64_t s[4] = {p->a, p->b, p->c, p->d};
	static const char names[] = "abcd";
	for (int i = 0; i < 4; i++)
		if (s[i] < 1)
			return sp_fail(err, "%s: pattern %" PRId64 ",%" PRId64 ",%" PRId64
				       ",%" PRId64 ": %c must be at least 1",
				       what, p->a, p->b, p->c, p->d, names[i]);
	if (batch < 1)
		return sp_fail(err, "%s: batch %" PRId64 ": must be at least 1", what, batch);
	const int64_t rows[4] = {p->a, p->b, p->d, batch}, cols[4] = {p->a, p->c, p->d, batch};
	const char *over = capped_product(s, 4) >= KSMM_INDEX_LIMIT	  ? "a*b*c*d"
			   : capped_product(rows, 4) >= KSMM_INDEX_LIMIT ? "a*b*d*batch"
			   : capped_product(cols, 4) >= KSMM_INDEX_LIMIT ? "a*c*d*batch"
									 : NULL;
	if (over)
		return sp_fail(err, "%s: pattern %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			       " at batch %" PRId64 ": %s reaches 2^31, past 32-bit indexing",
			       what, p->a, p->b, p->c, p->d, batch, over);
	return 0;
}
