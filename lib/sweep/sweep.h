/* Resumable sweeps (kernel-sample, ksmm-tune tune): a CSV that gains one
 * row per configuration, and that a rerun continues instead of repeating.
 * sweep_open reads back the rows already in the file (cutting off a row
 * left unfinished by a kill), remembers their key columns in a hash set,
 * and opens the file for appending (csv_writer.h). The program asks sweep_done
 * before running a configuration and writes each new row through s.w:
 *
 *	struct sweep s;
 *	const char *cols[] = {"m", "n", "F_dur(us)", "B_dur(us)"};
 *	if (sweep_open(&s, "out.csv", cols, 4, cols, 2, &err)) // key: m,n
 *		cli_fatal(&err);
 *	for (...) {
 *		char m[24], n[24];
 *		snprintf(m, sizeof m, "%d", M), snprintf(n, sizeof n, "%d", N);
 *		if (sweep_done(&s, (const char *[]){m, n}))
 *			continue;
 *		... run ...
 *		csv_writer_int(&s.w, M), csv_writer_int(&s.w, N);
 *		csv_writer_double(&s.w, fwd_us, 6), csv_writer_double(&s.w, bwd_us, 6);
 *		if (sweep_end_row(&s, &err))
 *			cli_fatal(&err);
 *	}
 *	if (sweep_close(&s, &err))
 *		cli_fatal(&err);
 *
 * Keys are compared as text, so format them as the writer does (csv_writer_int
 * writes "%" PRId64; csv_writer_double num_format_double). */
#ifndef SPKIT_SWEEP_H
#define SPKIT_SWEEP_H

#include <stddef.h>

#include "formats/csv_reader.h"
#include "formats/csv_writer.h"
#include "core/err.h"
#include "core/strmap.h"

struct sweep {
	struct csv_writer w;  /* write each new row's fields here, then sweep_end_row */
	size_t resumed; /* complete rows the file held when opened */
	/* private */
	size_t nkeys;
	size_t *key_cols;
	csv_reader_row_fn check; /* sweep_open_checked's, or NULL */
	void *check_ctx;
	struct strmap done; /* the key columns of every row written, joined by NULs */
	struct buf key;
};

/* columns: the file's header; keys: the names (among columns) that
 * identify a configuration. */
int sweep_open(struct sweep *s, const char *path, const char *const *columns, size_t ncols,
	       const char *const *keys, size_t nkeys, struct sp_err *err);
/* sweep_open, with each row the file already holds passed to check(ctx,
 * row, err) first: a nonzero return refuses the file (damage a rerun must
 * not build on) with the message check put in err. */
int sweep_open_checked(struct sweep *s, const char *path, const char *const *columns,
		       size_t ncols, const char *const *keys, size_t nkeys,
		       csv_reader_row_fn check, void *ctx, struct sp_err *err);
/* Has a row with these key values (in the order of keys) been written,
 * by this run or an earlier one? O(1). (Out of memory counts as no.) */
int sweep_done(struct sweep *s, const char *const *key_values);
/* csv_writer_end_row, then remembers the row's key as done. */
int sweep_end_row(struct sweep *s, struct sp_err *err);
/* Closes the file (csv_writer_commit) and frees s. */
int sweep_close(struct sweep *s, struct sp_err *err);
/* Gives up (csv_writer_abort: the rows written stay; a file this sweep
 * created and wrote no row to is removed) and frees s. */
void sweep_abort(struct sweep *s);

#endif
