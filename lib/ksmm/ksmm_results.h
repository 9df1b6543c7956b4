/* ksmm-tune's CSV files: the rows `tune` appends, one per configuration
 * run, and the best table `best` writes and `apply`/`bench` read (the same
 * columns, one row per pattern, batch, dtype and layout):
 *   batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,
 *   thread_rows,thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status
 * status is "ok", "wrong" (rel_err over the dtype's tolerance), or what
 * stopped the configuration ("compile: ...", "launch: ...", "registers:
 * ..."). Reading is strict: another header (a foreign CSV) or a field that
 * does not parse (a corrupt one) is an error naming the file and line. */
#ifndef SPKIT_KSMM_RESULTS_H
#define SPKIT_KSMM_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "formats/csv_writer.h"
#include "ksmm/ksmm.h"

#define KSMM_RESULT_COLS 21
/* The first KSMM_RESULT_KEYS columns say which run a row is. */
#define KSMM_RESULT_KEYS 17
extern const char *const ksmm_result_columns[KSMM_RESULT_COLS];

struct ksmm_result {
	int64_t batch;
	struct ksmm_pattern p;
	enum ksmm_dtype dtype;
	enum ksmm_layout layout;
	struct ksmm_config cfg;
	double ms, std, rel_err;
	char status[160];
	size_t line; /* where it was read from, for messages; 0 when not read */
};

/* The key columns of r as text, as ksmm_result_write writes them. */
struct ksmm_result_key {
	char text[KSMM_RESULT_KEYS][24];
	const char *v[KSMM_RESULT_KEYS];
};
void ksmm_result_key(const struct ksmm_result *r, struct ksmm_result_key *k);
/* r's fields into the row in progress of w (then csv_writer_end_row or
 * sweep_end_row). */
void ksmm_result_write(struct csv_writer *w, const struct ksmm_result *r);

/* A whole file of such rows (path "-": standard input). A file with a
 * header and no rows is fine (n = 0). */
int ksmm_results_read(const char *path, struct ksmm_result **out, size_t *n, struct sp_err *err);
int ksmm_results_read_buffer(const void *buf, size_t len, const char *name,
			     struct ksmm_result **out, size_t *n, struct sp_err *err);

#endif
