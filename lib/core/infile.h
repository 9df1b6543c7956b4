/* Input files. fopen succeeds on a directory and only the first read fails,
 * obscurely, and it blocks forever on a FIFO that nobody writes; the
 * functions here say "is a directory" instead, open without waiting for a
 * writer, and report the file's size, which readers check every size a
 * header claims against.
 *
 * Two kinds of reader: those that seek or map the file (.npy, .npz, .onnx,
 * .warp4, Matrix Market and edge lists) take regular files only, and refuse
 * a FIFO or a device with a one-line error; those that read straight
 * through (gzip text, CSV, YAML) also take FIFOs and character devices,
 * and bound what they read themselves (a line cap, NUL bytes refused).
 *
 * The path "-" is standard input, for both kinds: a reader that streams
 * takes whatever it is; one that seeks takes it when it is a regular file
 * (`< x.npy`) and refuses a pipe or a terminal with the same one-line
 * error as a FIFO, naming "standard input". No file named "-" is ever
 * opened (./- reaches one). */
#ifndef SPKIT_INFILE_H
#define SPKIT_INFILE_H

#include <stdint.h>
#include <stdio.h>

#include "core/err.h"

enum infile_kind { INFILE_REGULAR, INFILE_STREAM };

/* Messages name standard input so. */
#define INFILE_STDIN_NAME "standard input"
/* Whether path is "-", standard input. */
int infile_is_stdin(const char *path);

/* Open path for reading; *size (if size is not NULL) gets the length of a
 * regular file, 0 for a stream. */
int infile_open_fd(const char *path, enum infile_kind kind, int *fd, uint64_t *size,
		   struct sp_err *err);
/* The messages of infile_open_fd for a path that does not exist or is a
 * folder, without opening it (a FIFO's data stays for the real reader). */
int infile_check(const char *path, struct sp_err *err);
/* The same as a FILE, for a regular file. */
int infile_open(const char *path, FILE **fp, uint64_t *size, struct sp_err *err);
/* The same as a FILE, for a reader that streams. */
int infile_open_stream(const char *path, FILE **fp, struct sp_err *err);

#endif
