#include "core/outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporaries still open, for the signal handler. A fixed table because the
 * handler may not allocate; programs hold a handful of outputs at a time. */
#define MAX_UNFINISHED 32
static char *volatile unfinished[MAX_UNFINISHED];

static void track(char *tmp)
{
	for (int i = 0; i < MAX_UNFINISHED; i++)
		if (!unfinished[i]) {
			unfinished[i] = tmp;
			return;
		}
}

static void untrack(const char *tmp)
{
	for (int i = 0; i < MAX_UNFINISHED; i++)
		if (unfinished[i] == tmp)
			unfinished[i] = NULL;
}

void outfile_remove_all_unfinished(void)
{
	for (int i = 0; i < MAX_UNFINISHED; i++)
		if (unfinished[i])
			unlink(unfinished[i]);
}

int outfile_open(struct outfile *f, const char *path, struct sp_err *err)
{
	memset(f, 0, sizeof *f);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return sp_fail(err, "%s: is a directory", path);
	size_t n = strlen(path);
	f->path = strdup(path);
	f->tmp = malloc(n + sizeof ".tmp.XXXXXX");
	if (!f->path || !f->tmp) {
		free(f->path);
		free(f->tmp);
		return sp_fail(err, "%s: out of memory", path);
	}
	memcpy(f->tmp, path, n);
	memcpy(f->tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
	/* Block signals while the name is created and registered, so the
	 * handler never misses a temporary that exists. */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	int fd = mkstemp(f->tmp);
	if (fd >= 0)
		track(f->tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		sp_fail_errno(err, "%s: cannot create output", path);
		free(f->path);
		free(f->tmp);
		return -1;
	}
	/* mkstemp makes the file 0600; outputs should follow the umask. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	f->fp = fdopen(fd, "wb");
	if (!f->fp) {
		sp_fail_errno(err, "%s: cannot open output", path);
		close(fd);
		outfile_abort(f);
		return -1;
	}
	return 0;
}

static void release(struct outfile *f)
{
	untrack(f->tmp);
	free(f->path);
	free(f->tmp);
	f->path = f->tmp = NULL;
	f->fp = NULL;
}

int outfile_write(struct outfile *f, const void *buf, size_t n, struct sp_err *err)
{
	if (n && fwrite(buf, 1, n, f->fp) != n)
		return sp_fail_errno(err, "%s: write failed", f->path);
	return 0;
}

int outfile_commit(struct outfile *f, struct sp_err *err)
{
	int bad = fflush(f->fp) != 0 || ferror(f->fp);
	if (fclose(f->fp) != 0)
		bad = 1;
	f->fp = NULL;
	if (bad) {
		sp_fail_errno(err, "%s: write failed", f->path);
		outfile_abort(f);
		return -1;
	}
	if (rename(f->tmp, f->path) != 0) {
		sp_fail_errno(err, "%s: cannot rename into place", f->path);
		outfile_abort(f);
		return -1;
	}
	release(f);
	return 0;
}

void outfile_abort(struct outfile *f)
{
	if (f->fp)
		fclose(f->fp);
	if (f->tmp)
		unlink(f->tmp);
	release(f);
}
