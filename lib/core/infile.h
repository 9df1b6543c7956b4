/* Input files. fopen succeeds on a directory and only the first read fails,
 * obscurely; infile_open says "is a directory" instead, and reports the
 * file's size, which readers check every size a header claims against. */
#ifndef SPKIT_INFILE_H
#define SPKIT_INFILE_H

#include <stdint.h>
#include <stdio.h>

#include "core/err.h"

/* Open path for reading; *size (if size is not NULL) gets its length. */
int infile_open(const char *path, FILE **fp, uint64_t *size, struct sp_err *err);

#endif
