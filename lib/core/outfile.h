/* Atomic output files. Output is written to a temporary file in the same
 * folder ("OUT.tmp.XXXXXX") and renamed over OUT only when complete, so a
 * crash, a kill or an error never leaves a partial OUT behind. Unfinished
 * temporaries are also removed when the program dies of SIGINT/SIGTERM
 * (cli_init) or exits through cli_die. */
#ifndef SPKIT_AFILE_H
#define SPKIT_AFILE_H

#include <stdio.h>

#include "core/err.h"

struct outfile {
	FILE *fp;
	char *path; /* final name */
	char *tmp;  /* temporary name, in the same folder */
};

int outfile_open(struct outfile *f, const char *path, struct sp_err *err);
/* Flush, close and rename into place. On failure the temporary is removed. */
int outfile_commit(struct outfile *f, struct sp_err *err);
/* Close and remove the temporary; the final path is untouched. */
void outfile_abort(struct outfile *f);
/* fwrite that reports a short write as an error naming the final path. */
int outfile_write(struct outfile *f, const void *buf, size_t n, struct sp_err *err);

/* Async-signal-safe: unlink every temporary not yet committed or aborted. */
void outfile_remove_all_unfinished(void);

#endif
