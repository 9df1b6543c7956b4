/* The rendezvous file: see rendezvous.h. Layout, little-endian:
 *
 *   0  "SPKITRDV"        8  version (1), u32     12 ranks, u32
 *   16 pid, u64          24 created, u64 (s since the epoch)
 *   32 payload bytes, u64                         40 host name, 64 bytes
 *   104 FNV-1a 64 of bytes 0..104 and the payload, u64
 *   112 the payload
 *
 * The checksum and the exact size catch a file cut short or altered by
 * anything other than the link that publishes it. */
#include "core/rendezvous.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/bytes.h"

#define MAGIC "SPKITRDV"
#define VERSION 1
#define HOST_BYTES 64
#define SUM_AT 104
#define HEADER_BYTES 112

/* This process's start (the library is linked statically, so constructors
 * run before main): the reference a leftover file is older than. */
static double process_start;

__attribute__((constructor)) static void note_process_start(void)
{
	process_start = (double)time(NULL);
}

int rendezvous_check_run_id(const char *run_id, struct sp_err *err)
{
	char shown[64];
	size_t n = strlen(run_id);
	const char *why = n == 0			   ? "empty"
			  : n > RENDEZVOUS_RUN_ID_MAX ? "longer than 128 bytes"
						       : NULL;
	for (size_t i = 0; !why && i < n; i++) {
		unsigned char c = (unsigned char)run_id[i];
		if (c == '/')
			why = "contains '/'";
		else if (c < 0x20 || c == 0x7f)
			why = "contains a control character";
	}
	return why ? sp_fail(err, "rendezvous run id '%s': %s (it becomes part of a file name)",
			     sp_clip(shown, sizeof shown, run_id), why)
		   : 0;
}

int rendezvous_path(const char *dir, const char *run_id, char *path, size_t size,
		    struct sp_err *err)
{
	if (rendezvous_check_run_id(run_id, err))
		return -1;
	int n = snprintf(path, size, "%s/spkit-rendezvous-%s.id", dir, run_id);
	return n >= 0 && (size_t)n < size ? 0 : sp_fail(err, "%s: rendezvous path too long", dir);
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t checksum(const unsigned char *header, const void *blob, size_t bytes)
{
	return fnv1a(fnv1a(0xcbf29ce484222325ULL, header, SUM_AT), blob, bytes);
}

static int write_all(int fd, const void *p, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, (const char *)p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

static int refuse_existing(const char *path, const char *run_id, struct sp_err *err)
{
	char shown[64];
	return sp_fail(err,
		       "%s: a rendezvous file of an earlier run with id '%s' is there; remove it if "
		       "no run with that id is going",
		       path, sp_clip(shown, sizeof shown, run_id));
}

int rendezvous_publish(const char *dir, const char *run_id, int world, const void *blob,
		       size_t bytes, struct sp_err *err)
{
	char path[4096], tmp[4200];
	if (rendezvous_path(dir, run_id, path, sizeof path, err))
		return -1;
	if (world < 1)
		return sp_fail(err, "%s: %d ranks", path, world);
	struct stat st;
	if (lstat(path, &st) == 0)
		return refuse_existing(path, run_id, err);
	unsigned char header[HEADER_BYTES] = {0};
	memcpy(header, MAGIC, 8);
	le_store(header + 8, VERSION, 4);
	le_store(header + 12, (uint64_t)world, 4);
	le_store(header + 16, (uint64_t)getpid(), 8);
	le_store(header + 24, (uint64_t)time(NULL), 8);
	le_store(header + 32, bytes, 8);
	gethostname((char *)header + 40, HOST_BYTES - 1);
	le_store(header + SUM_AT, checksum(header, blob, bytes), 8);

	snprintf(tmp, sizeof tmp, "%s/.spkit-rendezvous-%s.id.XXXXXX", dir, run_id);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return sp_fail_errno(err, "%s: cannot write the rendezvous file there", dir);
	int failed = write_all(fd, header, sizeof header) || write_all(fd, blob, bytes) ||
		     fsync(fd);
	failed |= close(fd) != 0;
	if (failed) {
		sp_fail_errno(err, "%s: writing the rendezvous file", tmp);
		unlink(tmp);
		return -1;
	}
	/* link, unlike rename, never replaces an existing name */
	int linked = link(tmp, path);
	int link_errno = errno;
	unlink(tmp);
	if (linked == 0)
		return 0;
	if (link_errno == EEXIST)
		return refuse_existing(path, run_id, err);
	errno = link_errno;
	return sp_fail_errno(err, "%s: cannot publish the rendezvous file", path);
}

/* Whether the file is a whole, valid file for this run: 1 and the blob
 * copied; 0 not (yet) valid, `why` saying what is wrong; -1 an error that
 * waiting cannot mend (another number of ranks or payload size). */
static int read_file(FILE *fp, const char *path, int world, void *blob, size_t bytes, char *why,
		     size_t why_size, struct sp_err *err)
{
	size_t want = HEADER_BYTES + bytes;
	unsigned char *buf = malloc(want + 1);
	if (!buf)
		return sp_fail(err, "%s: out of memory reading it", path);
	size_t got = fread(buf, 1, want + 1, fp);
	int ok = 0;
	if (got < HEADER_BYTES || memcmp(buf, MAGIC, 8))
		snprintf(why, why_size, "not a rendezvous file, or cut short (%zu bytes)", got);
	else if (le32(buf + 8) != VERSION)
		snprintf(why, why_size, "version %u, this spkit reads %d", le32(buf + 8), VERSION);
	else if ((int64_t)le32(buf + 12) != world) {
		char host[HOST_BYTES];
		memcpy(host, buf + 40, HOST_BYTES);
		host[HOST_BYTES - 1] = '\0';
		ok = sp_fail(err,
			     "%s: the rendezvous file is for a run of %u ranks, this run has %d "
			     "(written by process %llu on %s)",
			     path, le32(buf + 12), world, (unsigned long long)le64(buf + 16), host);
	}
	else if (le64(buf + 32) != bytes)
		ok = sp_fail(err, "%s: the rendezvous file holds %llu bytes, %zu expected", path,
			     (unsigned long long)le64(buf + 32), bytes);
	else if (got != want)
		snprintf(why, why_size, "%zu bytes, %zu expected", got, want);
	else if (le64(buf + SUM_AT) != checksum(buf, buf + HEADER_BYTES, bytes))
		snprintf(why, why_size, "checksum mismatch");
	else {
		memcpy(blob, buf + HEADER_BYTES, bytes);
		ok = 1;
	}
	free(buf);
	return ok;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int rendezvous_wait(const char *dir, const char *run_id, int world, void *blob, size_t bytes,
		    double timeout_s, struct sp_err *err)
{
	char path[4096], why[160] = "";
	if (rendezvous_path(dir, run_id, path, sizeof path, err))
		return -1;
	const double deadline = now_s() + timeout_s;
	int leftover = 0;
	for (;;) {
		why[0] = '\0';
		leftover = 0;
		/* open, then fstat, never stat by name: an NFS client checks with the
		 * server on open (close-to-open consistency), where a lookup may
		 * answer from a cached "no such file" while the file is there */
		FILE *fp = fopen(path, "rb");
		if (!fp && errno != ENOENT)
			snprintf(why, sizeof why, "cannot open it: %s", strerror(errno));
		struct stat st;
		if (fp && fstat(fileno(fp), &st) == 0) {
			/* older than this process by more than the timeout: an earlier run's */
			leftover = (double)st.st_mtime < process_start - timeout_s;
			int got = leftover ? 0
					   : read_file(fp, path, world, blob, bytes, why, sizeof why,
						       err);
			if (got) {
				fclose(fp);
				return got > 0 ? 0 : -1;
			}
		}
		if (fp)
			fclose(fp);
		const double left = deadline - now_s();
		if (left <= 0)
			break;
		/* every 50 ms, but never past the deadline */
		const double nap = left < 0.05 ? left : 0.05;
		struct timespec t = {0, (long)(nap * 1e9)};
		nanosleep(&t, NULL);
	}
	if (*why)
		return sp_fail(err, "%s: not a valid rendezvous file after %g s (%s)", path,
			       timeout_s, why);
	return sp_fail(err,
		       "no rendezvous file from rank 0 in %g s (%s): rank 0 did not start or "
		       "cannot write there%s",
		       timeout_s, path,
		       leftover ? "; the file there is older than this run (an earlier run's)" : "");
}

int rendezvous_remove(const char *dir, const char *run_id, struct sp_err *err)
{
	char path[4096];
	if (rendezvous_path(dir, run_id, path, sizeof path, err))
		return -1;
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	return sp_fail_errno(err, "%s: cannot remove the rendezvous file", path);
}
