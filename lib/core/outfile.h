/* Output files that are never seen half-written.
 *
 * A regular file (new, or one that exists, also through a symbolic link,
 * which stays a link) is written to an unnamed temporary in its folder
 * (Linux's O_TMPFILE) and linked into place only when complete: a crash,
 * an error or even SIGKILL leaves nothing behind and the old file as it
 * was. Where the folder's filesystem has no O_TMPFILE, the temporary is a
 * named file ("OUT.tmp.XXXXXX") renamed over OUT at the end; a SIGKILL can
 * leave that one behind (SIGINT, SIGTERM, SIGHUP and errors remove it:
 * cli_init, cli_die).
 *
 * Anything else that exists at the path (a character device such as
 * /dev/null, a FIFO, /dev/stdout or a link to a descriptor) is written
 * directly: replacing it with a regular file would be wrong, and no
 * temporary can make a stream atomic. A FIFO with no reader is an error,
 * not a wait.
 *
 * The path "-" is standard output, written in place like /dev/stdout (its
 * messages say "standard output"); no file named "-" is ever made (./-
 * makes one). A writer that must seek (an .npz) refuses it. */
#ifndef SPKIT_OUTFILE_H
#define SPKIT_OUTFILE_H

#include <stdio.h>

#include "core/err.h"

struct outfile {
	FILE *fp;
	char *path;   /* as the caller named it, for messages */
	char *target; /* where the finished file goes (a link's target) */
	char *tmp;    /* named temporary, NULL when unnamed or direct */
	int direct;   /* written in place: not a regular file */
	int finished; /* the stream is closed, every write checked, and then */
	int fd;       /* the unnamed temporary's descriptor until linked, or -1 */
};

/* Messages name standard output so. */
#define OUTFILE_STDOUT_NAME "standard output"
/* Whether path is "-", standard output. */
int outfile_is_stdout(const char *path);

int outfile_open(struct outfile *f, const char *path, struct sp_err *err);
/* Flush, close (every write known to have succeeded) and put into place.
 * On failure the temporary is removed. */
int outfile_commit(struct outfile *f, struct sp_err *err);
/* For a program with several outputs: from now on outfile_commit only
 * finishes a file (every write done and checked) and holds it, and
 * outfile_commit_held puts every held file into place at once, so that a
 * failure in the last output leaves none of the others. An exit before
 * then leaves nothing (cli_die removes named temporaries). Main thread
 * only. */
void outfile_hold_commits(void);
int outfile_commit_held(struct sp_err *err);
/* Close and drop the temporary; the final path is untouched (a direct
 * output keeps what was written). */
void outfile_abort(struct outfile *f);
/* fwrite that reports a short write as an error naming the final path. */
int outfile_write(struct outfile *f, const void *buf, size_t n, struct sp_err *err);

/* Async-signal-safe: unlink every named temporary not yet committed or
 * aborted, and every path given to outfile_remove_on_signal and not yet
 * kept (files first, then folders, each once it is empty, in any order
 * they were given); cut back to empty every file given to
 * outfile_empty_on_signal and not yet kept. */
void outfile_remove_all_unfinished(void);

/* A file or folder this run created that holds nothing worth keeping yet
 * (a sweep's new CSV before its first row): a fatal signal removes it with
 * the unfinished temporaries, until outfile_keep_on_signal with the same
 * path. The path is copied (one of PATH_MAX bytes or more is not kept
 * track of); both are no-ops on a NULL path. Any thread. */
void outfile_remove_on_signal(const char *path);
void outfile_keep_on_signal(const char *path);
/* The same for a file that was there, empty, and that this run writes
 * through fd (a sweep's CSV, its header): a fatal signal cuts it back to
 * empty (ftruncate), so that a kill leaves it as it was. Keep it
 * (outfile_keep_on_signal) before fd is closed. */
void outfile_empty_on_signal(const char *path, int fd);

/* For tests of the fallback: make every later output use a named
 * temporary, as on a filesystem without O_TMPFILE. */
void outfile_use_named_temporaries(int on);

#endif
