#include "core/infile.h"

#include <sys/stat.h>

int infile_open(const char *path, FILE **fp, uint64_t *size, struct sp_err *err)
{
	struct stat st;
	*fp = fopen(path, "rb");
	if (!*fp)
		return sp_fail_errno(err, "%s: cannot open", path);
	int rc = 0;
	if (fstat(fileno(*fp), &st) != 0)
		rc = sp_fail_errno(err, "%s: cannot stat", path);
	else if (S_ISDIR(st.st_mode))
		rc = sp_fail(err, "%s: is a directory", path);
	if (rc) {
		fclose(*fp);
		*fp = NULL;
		return rc;
	}
	if (size)
		*size = (uint64_t)st.st_size;
	return 0;
}
