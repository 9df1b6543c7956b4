/* Atomic output files. Output is written to a temporary file in the same
 * folder ("OUT.tmp.XXXXXX") and renamed over OUT only when complete, so a
 * crash, a kill or an error never leaves a partial OUT behind. Unfinished
 * temporaries are also removed when the program dies of SIGINT/SIGTERM
 * (cli_init) or exits through cli_die. */
#ifndef SPKIT_AFILE_H
#define SPKIT_AFILE_H

#include <stdio.h>

#include "err.h"

struct afile {
	FILE *fp;
	char *path; /* final name */
	char *tmp;  /* temporary name, in the same folder */
};

int afile_open(struct afile *f, const char *path, struct sp_err *err);
/* Flush, close and rename into place. On failure the temporary is removed. */
int afile_commit(struct afile *f, struct sp_err *err);
/* Close and remove the temporary; the final path is untouched. */
void afile_abort(struct afile *f);
/* fwrite that reports a short write as an error naming the final path. */
int afile_write(struct afile *f, const void *buf, size_t n, struct sp_err *err);

/* Async-signal-safe: unlink every temporary not yet committed or aborted. */
void afile_remove_all_unfinished(void);

#endif
