/* Errors travel up from the library as values: a function that can fail
 * returns 0 on success or -1 with a one-line message in a struct sp_err.
 * The message names the file and the problem ("x.npy: truncated: header
 * claims 800 bytes of data, file holds 400"); the program prefixes its own
 * name when it prints it (cli_fatal). The library never prints or exits.
 *
 * What a message quotes from outside (a file name, a value from a file or
 * the environment) it holds raw, never escaped, long values cut by sp_clip:
 * the whole line is escaped once, by sp_quote, where it leaves the program
 * (on stderr, into a log), so that each byte is escaped exactly once. */
#ifndef SPKIT_ERR_H
#define SPKIT_ERR_H

#include <stddef.h>
#include <stdint.h>

#define SP_ERR_MAX 512

struct sp_err {
	char msg[SP_ERR_MAX];
};

/* Fill err with a printf-style message; returns -1 so callers can
 * `return sp_fail(err, ...)`. err may be NULL. */
int sp_fail(struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* As sp_fail, appending ": strerror(errno)". */
int sp_fail_errno(struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefix an existing message with "what: " (e.g. the file name). */
int sp_err_prefix(struct sp_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Text from a file or the environment (a CSV cell, a YAML key, a
 * variable's value) as a part of a message: copied as it is, cut with
 * "..." to fit `size` bytes, never inside a UTF-8 character. Returns buf. */
const char *sp_clip(char *buf, size_t size, const char *text);

/* A message as it leaves the program (cli.c's lines on stderr, a sweep's
 * log): one line of valid UTF-8 that reads back unambiguously. The
 * backslash is written as \\, control characters as \n, \r, \t or \xNN,
 * each byte that is not part of a valid UTF-8 character (or is part of a
 * C1 control) as \xNN, so that a name holding the four characters \x1b
 * shows apart from one holding the byte ESC; cut with "..." to fit `size`
 * bytes, never inside an escape or a character. Applied once, to the
 * whole line: applied again, it would double every backslash. Returns
 * buf. */
const char *sp_quote(char *buf, size_t size, const char *text);

/* One character of text as sp_quote writes it, into out: the character
 * itself (printable ASCII, or valid UTF-8 that is not a C1 control) or its
 * escape. Returns its length in bytes (1 to 4) and sets *next past the
 * character read. For writers of text for people (text_out.h). */
size_t sp_quote_char(const char *p, char out[4], const char **next);

/* The "s" of the noun after a count in a message, none for exactly one:
 * printf("%d file%s", n, sp_plural(n)). */
static inline const char *sp_plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

#endif
