/* A scratch folder for targets whose library entry point takes a path (a
 * dataset folder, a checkpoint): made once under /tmp, removed at exit.
 * Include it first (nftw and memmem need _GNU_SOURCE before any system header). */
#ifndef SPKIT_FUZZDIR_H
#define SPKIT_FUZZDIR_H

#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_root[] = "/tmp/spkit_fuzz.XXXXXX";

static int fuzz_remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static void fuzz_remove_root(void)
{
	nftw(fuzz_root, fuzz_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The folder, made on the first call. */
static const char *fuzz_dir(void)
{
	static int made;
	if (!made) {
		if (!mkdtemp(fuzz_root))
			abort();
		atexit(fuzz_remove_root);
		made = 1;
	}
	return fuzz_root;
}

/* Write `size` bytes to REL inside the folder (its parent folders made as
 * needed); returns the whole path (a static buffer). */
static const char *fuzz_put(const char *rel, const void *data, size_t size)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), rel);
	for (char *s = strchr(path + strlen(fuzz_root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0700);
		*s = '/';
	}
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp))
		abort();
	return path;
}

/* An error has a message. What it quotes from the input it holds raw: the
 * program escapes the line it prints (sp_quote, err.h). */
static void fuzz_check_message(const char *msg)
{
	if (!msg[0])
		abort();
}

#endif
