#include "sweep/sweep.h"

#include <stdlib.h>
#include <string.h>

/* The length of a key value without the ".0" of a whole number written as
 * a float ("1024.0", as estimate-train-time's NumPy rows hold shapes), so
 * such a file resumes as if it said "1024"; any other text is kept whole. */
static size_t whole_number_len(const char *text, size_t len)
{
	size_t digits = text && len > 0 && text[0] == '-';
	size_t i = digits;
	while (i < len && text[i] >= '0' && text[i] <= '9')
		i++;
	if (i == digits || i == len || text[i] != '.')
		return len;
	size_t point = i++;
	while (i < len && text[i] == '0')
		i++;
	return i == len && i > point + 1 ? point : len;
}

/* A key is its values joined by NULs, which no CSV field holds, so
 * distinct keys never join to the same text. Part i of the key in s->key. */
static int add_key_part(struct sweep *s, size_t i, const char *text, size_t len)
{
	if (i == 0)
		s->key.len = 0;
	len = whole_number_len(text, len);
	return !text || buf_add(&s->key, text, len) || buf_addc(&s->key, '\0') ? -1 : 0;
}

static int remember(struct sweep *s)
{
	int added;
	return strmap_insert(&s->done, s->key.data, s->key.len, &added) ? 0 : -1;
}

static int on_row(void *ctx, const struct csv_reader_row *row, struct sp_err *err)
{
	struct sweep *s = ctx;
	if (s->check && s->check(s->check_ctx, row, err))
		return -1;
	s->resumed++;
	int bad = 0;
	for (size_t i = 0; i < s->nkeys; i++)
		bad |= add_key_part(s, i, row->fields[s->key_cols[i]], row->lens[s->key_cols[i]]);
	if (bad || remember(s))
		return sp_fail(err, "%s:%zu: out of memory", s->w.path, row->line);
	return 0;
}

static int find_keys(struct sweep *s, const char *path, const char *const *columns, size_t ncols,
		     const char *const *keys, struct sp_err *err)
{
	if (s->nkeys == 0)
		return sp_fail(err, "%s: a sweep needs at least one key column", path);
	s->key_cols = malloc(s->nkeys * sizeof *s->key_cols);
	if (!s->key_cols)
		return sp_fail(err, "%s: out of memory", path);
	for (size_t k = 0; k < s->nkeys; k++) {
		size_t i = 0;
		while (i < ncols && strcmp(columns[i], keys[k]))
			i++;
		if (i == ncols)
			return sp_fail(err, "%s: key column '%s' is not among the columns", path,
				       keys[k]);
		s->key_cols[k] = i;
	}
	return 0;
}

static void free_keys(struct sweep *s)
{
	free(s->key_cols);
	strmap_free(&s->done);
	buf_free(&s->key);
}

int sweep_open(struct sweep *s, const char *path, const char *const *columns, size_t ncols,
	       const char *const *keys, size_t nkeys, struct sp_err *err)
{
	return sweep_open_checked(s, path, columns, ncols, keys, nkeys, NULL, NULL, err);
}

int sweep_open_checked(struct sweep *s, const char *path, const char *const *columns,
		       size_t ncols, const char *const *keys, size_t nkeys,
		       csv_reader_row_fn check, void *ctx, struct sp_err *err)
{
	memset(s, 0, sizeof *s);
	s->nkeys = nkeys;
	s->check = check;
	s->check_ctx = ctx;
	if (find_keys(s, path, columns, ncols, keys, err) ||
	    csv_writer_open_append_scan(&s->w, path, columns, ncols, on_row, s, err)) {
		free_keys(s);
		return -1;
	}
	return 0;
}

int sweep_done(struct sweep *s, const char *const *key_values)
{
	int bad = 0;
	for (size_t i = 0; i < s->nkeys; i++)
		bad |= add_key_part(s, i, key_values[i], strlen(key_values[i]));
	return !bad && strmap_find(&s->done, s->key.data, s->key.len);
}

int sweep_end_row(struct sweep *s, struct sp_err *err)
{
	/* The key is taken before the row is written, as the writer forgets it. */
	int bad = 0;
	for (size_t i = 0; i < s->nkeys; i++) {
		const char *v = csv_writer_field(&s->w, s->key_cols[i]);
		bad |= add_key_part(s, i, v, v ? strlen(v) : 0);
	}
	if (csv_writer_end_row(&s->w, err))
		return -1; /* a missing key field is a wrong field count, reported here */
	if (bad || remember(s))
		return sp_fail(err, "%s: out of memory", s->w.path);
	return 0;
}

int sweep_close(struct sweep *s, struct sp_err *err)
{
	int rc = csv_writer_commit(&s->w, err);
	free_keys(s);
	return rc;
}

void sweep_abort(struct sweep *s)
{
	csv_writer_abort(&s->w);
	free_keys(s);
}
