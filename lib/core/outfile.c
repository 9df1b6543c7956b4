/* O_TMPFILE and linkat are Linux's. */
#define _GNU_SOURCE
#include "core/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"


/* Named temporaries still open, the new files and folders of
 * outfile_remove_on_signal and the files of outfile_empty_on_signal, for
 * the signal handler. A fixed table of copies, because the handler may not
 * allocate and a caller's path may not outlive its registration (a
 * sweep's live on its stack); programs hold a handful of outputs at a
 * time. Threads write outputs too (the NVRTC cache's entries), so slots
 * are taken and given back under a lock; the handler takes none: it only
 * reads the slots marked in use, and a slot's path and descriptor are
 * written before it is marked. */
#define MAX_UNFINISHED 64
static struct {
	int used; /* read and written atomically */
	int fd;   /* >= 0: the file to cut back to empty; -1: the path to remove */
	char path[PATH_MAX];
} unfinished[MAX_UNFINISHED];
static pthread_mutex_t unfinished_lock = PTHREAD_MUTEX_INITIALIZER;
static int named_only;

void outfile_use_named_temporaries(int on)
{
	named_only = on;
}

/* A path longer than a slot is not tracked, as when the table is full: a
 * kill then leaves it. */
static void track(const char *path, int fd)
{
	size_t n = strlen(path);
	if (n >= PATH_MAX)
		return;
	pthread_mutex_lock(&unfinished_lock);
	for (int i = 0; i < MAX_UNFINISHED; i++) {
		if (__atomic_load_n(&unfinished[i].used, __ATOMIC_ACQUIRE))
			continue;
		memcpy(unfinished[i].path, path, n + 1);
		unfinished[i].fd = fd;
		__atomic_store_n(&unfinished[i].used, 1, __ATOMIC_RELEASE);
		break;
	}
	pthread_mutex_unlock(&unfinished_lock);
}

static void untrack(const char *path)
{
	if (!path)
		return;
	pthread_mutex_lock(&unfinished_lock);
	for (int i = 0; i < MAX_UNFINISHED; i++)
		if (__atomic_load_n(&unfinished[i].used, __ATOMIC_ACQUIRE) &&
		    strcmp(unfinished[i].path, path) == 0)
			__atomic_store_n(&unfinished[i].used, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&unfinished_lock);
}

/* The path of slot i, or NULL when the slot is free. */
static const char *tracked(int i)
{
	return __atomic_load_n(&unfinished[i].used, __ATOMIC_ACQUIRE) ? unfinished[i].path : NULL;
}

void outfile_remove_all_unfinished(void)
{
	for (int i = 0; i < MAX_UNFINISHED; i++) {
		const char *path = tracked(i);
		if (path && unfinished[i].fd >= 0) {
			int rc = ftruncate(unfinished[i].fd, 0);
			(void)rc; /* nothing more a handler can do */
		} else if (path) {
			unlink(path);
		}
	}
	/* Folders, the later registered first, and again until a pass removes
	 * none: an outer folder registered after its inner one is empty only
	 * once that is gone. */
	for (int removed = 1; removed;) {
		removed = 0;
		for (int i = MAX_UNFINISHED - 1; i >= 0; i--) {
			const char *path = tracked(i);
			if (path && rmdir(path) == 0)
				removed = 1;
		}
	}
}

void outfile_remove_on_signal(const char *path)
{
	if (path)
		track(path, -1);
}

void outfile_empty_on_signal(const char *path, int fd)
{
	if (path)
		track(path, fd);
}

void outfile_keep_on_signal(const char *path)
{
	untrack(path);
}

static void release(struct outfile *f)
{
	if (f->finished && f->fd >= 0)
		close(f->fd);
	untrack(f->tmp);
	free(f->path);
	free(f->target);
	free(f->tmp);
	memset(f, 0, sizeof *f);
}

/* "TARGET.tmp.XXXXXX", a name to create in TARGET's folder. */
static char *temporary_name(const char *target)
{
	size_t n = strlen(target);
	char *tmp = malloc(n + sizeof ".tmp.XXXXXX");
	if (tmp) {
		memcpy(tmp, target, n);
		memcpy(tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
	}
	return tmp;
}

/* The folder of target, for O_TMPFILE. */
static char *folder_of(const char *target)
{
	const char *slash = strrchr(target, '/');
	if (!slash)
		return strdup(".");
	if (slash == target)
		return strdup("/");
	return strndup(target, (size_t)(slash - target));
}

/* An unnamed file in target's folder, or -1 where the filesystem (or this
 * kernel) has none, or /proc is missing for the link at commit. */
static int open_unnamed(const char *target)
{
	if (named_only || access("/proc/self/fd", X_OK) != 0)
		return -1;
	char *dir = folder_of(target);
	if (!dir)
		return -1;
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	free(dir);
	return fd;
}

static int open_named(struct outfile *f, struct sp_err *err)
{
	f->tmp = temporary_name(f->target);
	if (!f->tmp)
		return sp_fail(err, "%s: out of memory", f->path);
	/* Block signals while the name is created and registered, so the
	 * handler never misses a temporary that exists. */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	int fd = mkstemp(f->tmp);
	if (fd >= 0)
		track(f->tmp, -1);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0)
		return sp_fail_errno(err, "%s: cannot create output", f->path);
	/* mkstemp makes the file 0600; outputs should follow the umask. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return fd;
}

/* Opens an existing non-regular file for writing in place. A FIFO is
 * opened without waiting for a reader (ENXIO when there is none). */
static int open_direct(struct outfile *f, struct sp_err *err)
{
	f->direct = 1;
	int fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENXIO)
		return sp_fail(err, "%s: is a FIFO with no reader", f->path);
	if (fd < 0)
		return sp_fail_errno(err, "%s: cannot open output", f->path);
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/* What a symbolic link names, as a path from here (a relative target is
 * relative to the link's folder); NULL if path is no link. */
static char *link_target(const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	const char *slash = strrchr(path, '/');
	if (buf[0] == '/' || !slash)
		return strdup(buf);
	size_t dir = (size_t)(slash - path) + 1;
	char *out = malloc(dir + (size_t)n + 1);
	if (out) {
		memcpy(out, path, dir);
		memcpy(out + dir, buf, (size_t)n + 1);
	}
	return out;
}

/* "-": a copy of descriptor 1, written in place as any stream is. What
 * the program printed before is flushed first, so the two keep their
 * order. */
static int open_stdout(struct outfile *f, struct sp_err *err)
{
	f->direct = 1;
	f->path = strdup(OUTFILE_STDOUT_NAME);
	f->target = strdup("-");
	if (!f->path || !f->target) {
		release(f);
		return sp_fail(err, "standard output: out of memory");
	}
	fflush(stdout);
	int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 || !(f->fp = fdopen(fd, "wb"))) {
		sp_fail_errno(err, "%s: cannot write", f->path);
		if (fd >= 0)
			close(fd);
		release(f);
		return -1;
	}
	return 0;
}

int outfile_is_stdout(const char *path)
{
	return path[0] == '-' && path[1] == '\0';
}

int outfile_open(struct outfile *f, const char *path, struct sp_err *err)
{
	memset(f, 0, sizeof *f);
	if (!*path)
		return sp_fail(err, "an output file name is empty");
	if (outfile_is_stdout(path))
		return open_stdout(f, err);
	struct stat st, lst;
	int exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode))
		return sp_fail(err, "%s: is a directory", path);
	f->path = strdup(path);
	/* A link to a regular file, or to nothing yet: write the file it names
	 * and keep the link. */
	int is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
	if (is_link && exists && S_ISREG(st.st_mode))
		f->target = realpath(path, NULL);
	else if (is_link && !exists)
		f->target = link_target(path);
	else
		f->target = strdup(path);
	if (!f->path || !f->target) {
		release(f);
		return sp_fail(err, "%s: out of memory", path);
	}
	int fd;
	if (exists && !S_ISREG(st.st_mode))
		fd = open_direct(f, err);
	else if ((fd = open_unnamed(f->target)) < 0)
		fd = open_named(f, err);
	if (fd < 0) {
		release(f);
		return -1;
	}
	/* A file rewritten keeps its permissions (a private output stays so). */
	if (exists && S_ISREG(st.st_mode) && fchmod(fd, st.st_mode & 07777) != 0) {
		sp_fail_errno(err, "%s: cannot keep the file's permissions", path);
		close(fd);
		outfile_abort(f);
		return -1;
	}
	f->fp = fdopen(fd, "wb");
	if (!f->fp) {
		sp_fail_errno(err, "%s: cannot open output", path);
		close(fd);
		outfile_abort(f);
		return -1;
	}
	return 0;
}

int outfile_write(struct outfile *f, const void *buf, size_t n, struct sp_err *err)
{
	if (n && fwrite(buf, 1, n, f->fp) != n)
		return sp_fail_errno(err, "%s: write failed", f->path);
	return 0;
}

/* The unnamed temporary given a name in the target's folder, then renamed
 * over the target (linkat cannot replace a file). The name exists only
 * between the two calls. */
static int link_unnamed(struct outfile *f, int fd, struct sp_err *err)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, f->target, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return sp_fail_errno(err, "%s: cannot link into place", f->path);
	f->tmp = temporary_name(f->target);
	if (!f->tmp)
		return sp_fail(err, "%s: out of memory", f->path);
	size_t n = strlen(f->tmp);
	uint64_t state = (uint64_t)getpid() << 32 ^ (uint64_t)fd ^ (uint64_t)(uintptr_t)f;
	for (int tries = 0; tries < 100; tries++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		for (int i = 0; i < 6; i++)
			f->tmp[n - 6 + i] = "abcdefghijklmnopqrstuvwxyz0123456789"[(state >> (8 * i + 16)) % 36];
		sigset_t all, old;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, &old);
		int rc = linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW);
		if (rc == 0)
			track(f->tmp, -1);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (rc == 0)
			return rename(f->tmp, f->target) == 0
				       ? 0
				       : sp_fail_errno(err, "%s: cannot rename into place", f->path);
		if (errno != EEXIST)
			break;
	}
	return sp_fail_errno(err, "%s: cannot link into place", f->path);
}

/* The stream is closed, and its last error seen, before the file is put
 * into place: a close that fails (its final write refused) must leave the
 * old file. An unnamed temporary stays reachable through a duplicate of its
 * descriptor until it is linked. */
static int finish(struct outfile *f, struct sp_err *err)
{
	int rc = 0;
	f->finished = 1;
	f->fd = -1;
	if (fflush(f->fp) != 0 || ferror(f->fp))
		rc = sp_fail_errno(err, "%s: write failed", f->path);
	else if (!f->direct && !f->tmp && (f->fd = fcntl(fileno(f->fp), F_DUPFD_CLOEXEC, 0)) < 0)
		rc = sp_fail_errno(err, "%s: cannot keep the output open", f->path);
	if (fclose(f->fp) != 0 && !rc)
		rc = sp_fail_errno(err, "%s: write failed", f->path);
	f->fp = NULL;
	if (rc)
		outfile_abort(f);
	return rc;
}

/* A finished file into place: the unnamed temporary linked, the named one
 * renamed (a direct output is there already). */
static int place(struct outfile *f, struct sp_err *err)
{
	int rc = 0;
	if (f->fd >= 0)
		rc = link_unnamed(f, f->fd, err);
	else if (f->tmp && rename(f->tmp, f->target) != 0)
		rc = sp_fail_errno(err, "%s: cannot rename into place", f->path);
	if (rc) {
		outfile_abort(f);
		return -1;
	}
	release(f);
	return 0;
}

/* Files committed while commits are held: finished, waiting to be placed.
 * Their named temporaries stay tracked, so an exit on error removes them. */
static struct outfile *held;
static size_t nheld, held_cap;
static int holding;

void outfile_hold_commits(void)
{
	holding = 1;
}

int outfile_commit(struct outfile *f, struct sp_err *err)
{
	if (finish(f, err))
		return -1;
	if (!holding)
		return place(f, err);
	struct outfile *h = buf_grow_array(held, &held_cap, nheld + 1, sizeof *h);
	if (!h) {
		sp_fail(err, "%s: out of memory", f->path);
		outfile_abort(f);
		return -1;
	}
	held = h;
	held[nheld++] = *f;
	memset(f, 0, sizeof *f);
	return 0;
}

int outfile_commit_held(struct sp_err *err)
{
	int rc = 0;
	for (size_t i = 0; i < nheld; i++) {
		if (rc)
			outfile_abort(&held[i]);
		else
			rc = place(&held[i], err);
	}
	free(held);
	held = NULL;
	nheld = held_cap = 0;
	holding = 0;
	return rc;
}

void outfile_abort(struct outfile *f)
{
	if (f->fp)
		fclose(f->fp);
	if (f->tmp)
		unlink(f->tmp);
	release(f);
}
