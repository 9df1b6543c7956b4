#include "core/infile.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int infile_open_fd(const char *path, enum infile_kind kind, int *fd, uint64_t *size,
		   struct sp_err *err)
{
	const int from_stdin = infile_is_stdin(path);
	if (from_stdin) {
		/* A copy of descriptor 0, closed like any other; whether a
		 * reader that seeks may have it is decided below, as for a
		 * file: `< file` yes, a pipe no. */
		path = INFILE_STDIN_NAME;
		*fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
	} else {
		/* O_NONBLOCK: a FIFO with no writer opens at once (and then
		 * reads as empty) instead of blocking in open() forever. */
		*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
	if (*fd < 0)
		return sp_fail_errno(err, "%s: cannot open", path);
	struct stat st;
	int rc = 0;
	if (fstat(*fd, &st) != 0)
		rc = sp_fail_errno(err, "%s: cannot stat", path);
	else if (S_ISDIR(st.st_mode))
		rc = sp_fail(err, "%s: is a directory", path);
	else if (!S_ISREG(st.st_mode) &&
		 (kind == INFILE_REGULAR || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))))
		rc = sp_fail(err, "%s: is %s; this input must be a regular file%s", path,
			     kind_of(st.st_mode),
			     from_stdin ? " (give its name, or '< FILE')" : "");
	if (rc) {
		close(*fd);
		*fd = -1;
		return rc;
	}
	int flags = fcntl(*fd, F_GETFL);
	if (flags >= 0)
		fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK);
	if (size)
		*size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	return 0;
}

int infile_is_stdin(const char *path)
{
	return path[0] == '-' && path[1] == '\0';
}

int infile_check(const char *path, struct sp_err *err)
{
	if (infile_is_stdin(path))
		return 0;
	struct stat st;
	if (stat(path, &st) != 0)
		return sp_fail_errno(err, "%s: cannot open", path);
	if (S_ISDIR(st.st_mode))
		return sp_fail(err, "%s: is a directory", path);
	return 0;
}

static int open_file(const char *path, enum infile_kind kind, FILE **fp, uint64_t *size,
		     struct sp_err *err)
{
	int fd;
	*fp = NULL;
	if (infile_open_fd(path, kind, &fd, size, err))
		return -1;
	*fp = fdopen(fd, "rb");
	if (!*fp) {
		close(fd);
		return sp_fail_errno(err, "%s: cannot open", path);
	}
	return 0;
}

int infile_open(const char *path, FILE **fp, uint64_t *size, struct sp_err *err)
{
	return open_file(path, INFILE_REGULAR, fp, size, err);
}

int infile_open_stream(const char *path, FILE **fp, struct sp_err *err)
{
	return open_file(path, INFILE_STREAM, fp, NULL, err);
}
