/* Helpers the unit tests share: a scratch folder per test program, paths in
 * it, whole-file reads and writes. Include after cmocka.h. Static inline:
 * each test is its own program and uses what it needs. */
#ifndef SPKIT_TESTUTIL_H
#define SPKIT_TESTUTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char test_dir[] = "/tmp/spkit-test-XXXXXX";

/* cmocka group setup and teardown: create and remove test_dir. */
static inline int test_dir_setup(void **state)
{
	return mkdtemp(test_dir) ? 0 : -1;
}

static inline int test_dir_teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", test_dir);
	return system(cmd);
}

/* test_dir/NAME, NAME printf-style; valid until 8 more calls. */
static inline const char *test_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline const char *test_path(const char *fmt, ...)
{
	static char path[8][512];
	static int next;
	char name[256], *p = path[next++ % 8];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	snprintf(p, sizeof path[0], "%s/%s", test_dir, name);
	return p;
}

static inline unsigned char *test_slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	*n = (size_t)ftell(fp);
	rewind(fp);
	unsigned char *buf = malloc(*n + 1);
	assert_int_equal(fread(buf, 1, *n, fp), *n);
	fclose(fp);
	return buf;
}

static inline void test_spit(const char *path, const void *buf, size_t n)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, n, fp), n);
	fclose(fp);
}

/* Is an unfinished output (afile's NAME.tmp.XXXXXX) left in test_dir? */
static inline int test_dir_has_temporaries(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "ls %s | grep -q '\\.tmp\\.'", test_dir);
	return system(cmd) == 0;
}

#endif
