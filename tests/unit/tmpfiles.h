/* Scratch files for the unit tests: a fresh folder per test binary, and
 * whole-file reads and writes. Header-only (static inline) because each
 * test is built from its one .c file. */
#ifndef SPKIT_TEST_TMPFILES_H
#define SPKIT_TEST_TMPFILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char test_dir[] = "/tmp/spkit-test-XXXXXX";

static inline int test_dir_create(void **state)
{
	return mkdtemp(test_dir) ? 0 : -1;
}

static inline int test_dir_remove(void **state)
{
	char cmd[sizeof test_dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", test_dir);
	return system(cmd);
}

/* test_dir/name, in one of four static buffers used in turn, so a few
 * paths can be live at once (as printf arguments, say). */
static inline const char *test_path(const char *name)
{
	static char paths[4][256];
	static int next;
	char *path = paths[next++ % 4];
	snprintf(path, sizeof paths[0], "%s/%s", test_dir, name);
	return path;
}

static inline void test_write(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		abort();
}

/* The whole file, NUL-terminated; the caller frees it. NULL if absent. */
static inline char *test_read(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0, n;
	char *s = malloc(cap + 1);
	while (s && (n = fread(s + len, 1, cap - len, f)) > 0)
		if ((len += n) == cap)
			s = realloc(s, (cap *= 2) + 1);
	fclose(f);
	if (s)
		s[len] = '\0';
	return s;
}

static inline int test_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Entries in test_dir, to catch stray temporaries. */
static inline int test_dir_count(void)
{
	char cmd[sizeof test_dir + 32];
	snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", test_dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (!p || fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

#endif
