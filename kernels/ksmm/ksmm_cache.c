/* The NVRTC disk cache: machine code of compiled configurations, so that a
 * second sweep over the same space compiles nothing. An entry is
 *     "spkit-nvrtc 1\n" KEY '\0' CUBIN
 * named after a 64-bit hash of KEY; KEY is compared on reading, so a
 * collision or a foreign file is a miss, never the wrong code. Entries are
 * written as any output is (core/outfile.h: an unnamed temporary linked into
 * place), so parallel workers (--parts) and a kill never leave half an entry
 * or a temporary. Failing to create or write the folder is not an error: it
 * costs a compile. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/outfile.h"
#include "ksmm/ksmm_impl.h"

#define MAGIC "spkit-nvrtc 1\n"
/* A cubin of this kernel is tens of KB; anything past this is not ours. */
#define MAX_ENTRY ((size_t)64 << 20)

static _Atomic uint64_t hits, compiles;

void ksmm_cache_stats(struct ksmm_cache_stats *out)
{
	out->hits = atomic_load(&hits);
	out->compiles = atomic_load(&compiles);
}

void ksmm_cache_count_compile(void)
{
	atomic_fetch_add(&compiles, 1);
}

uint64_t ksmm_hash(const void *data, size_t n, uint64_t h)
{
	const unsigned char *s = data;
	if (!h)
		h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

int ksmm_cache_dir(char *buf, size_t n, struct sp_err *err)
{
	const char *dir = getenv("SPKIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	int len;
	if (dir && *dir)
		len = snprintf(buf, n, "%s", dir);
	else if (xdg && *xdg)
		len = snprintf(buf, n, "%s/spkit/nvrtc", xdg);
	else if (home && *home)
		len = snprintf(buf, n, "%s/.cache/spkit/nvrtc", home);
	else
		return sp_fail(err, "NVRTC cache: none of SPKIT_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
	if (len < 0 || (size_t)len >= n)
		return sp_fail(err, "NVRTC cache: folder name longer than %zu bytes", n);
	return 0;
}

/* mkdir -p; errors are left for the open that follows to meet. */
static void make_dirs(const char *dir)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
		return;
	for (char *s = path + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(path, 0755);
			*s = '/';
		}
	mkdir(path, 0755);
}

static int entry_path(const char *key, char *path, size_t n)
{
	char dir[4000];
	if (ksmm_cache_dir(dir, sizeof dir, NULL))
		return -1;
	const unsigned long long h = (unsigned long long)ksmm_hash(key, strlen(key), 0);
	const int len = snprintf(path, n, "%s/ksmm-%016llx.cubin", dir, h);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

int ksmm_cache_load(const char *key, void **data, size_t *size)
{
	char path[4096];
	if (entry_path(key, path, sizeof path))
		return 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	const size_t head = strlen(MAGIC) + strlen(key) + 1;
	unsigned char *buf = NULL;
	long len = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		len = ftell(f);
	if (len <= (long)head || (size_t)len > MAX_ENTRY || fseek(f, 0, SEEK_SET) != 0 ||
	    !(buf = malloc((size_t)len)) || fread(buf, 1, (size_t)len, f) != (size_t)len ||
	    memcmp(buf, MAGIC, strlen(MAGIC)) != 0 ||
	    memcmp(buf + strlen(MAGIC), key, strlen(key) + 1) != 0) {
		free(buf);
		fclose(f);
		return 0;
	}
	fclose(f);
	*size = (size_t)len - head;
	memmove(buf, buf + head, *size);
	*data = buf;
	atomic_fetch_add(&hits, 1);
	return 1;
}

void ksmm_cache_store(const char *key, const void *data, size_t size)
{
	char path[4096], dir[4000];
	if (entry_path(key, path, sizeof path) || ksmm_cache_dir(dir, sizeof dir, NULL))
		return;
	make_dirs(dir);
	struct outfile f;
	struct sp_err e;
	if (outfile_open(&f, path, &e))
		return;
	if (outfile_write(&f, MAGIC, strlen(MAGIC), &e) ||
	    outfile_write(&f, key, strlen(key) + 1, &e) || outfile_write(&f, data, size, &e))
		outfile_abort(&f);
	else
		outfile_commit(&f, &e);
}
