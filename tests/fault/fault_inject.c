/* Fault injection for the programs, loaded with LD_PRELOAD by
 * tests/bats/faults.bats (the technique of SQLite's malloc and I/O error
 * tests):
 *
 *   SPKIT_FAIL_MALLOC=N   the Nth allocation (malloc, calloc, realloc,
 *                         posix_memalign, aligned_alloc, memalign; the
 *                         program's, libc's, zlib's, libyaml's, protobuf-c's)
 *                         returns NULL with ENOMEM
 *   SPKIT_FAIL_WRITE=N    the Nth write (write, fwrite, fputs, fputc, putc,
 *                         fprintf, vfprintf, fflush, fclose, fsync) fails with
 *                         ENOSPC (fsync: EIO); a stream gets its error flag,
 *                         as when the kernel refuses its buffer
 *   SPKIT_FAIL_PERSIST=1  every call from the Nth on fails, not only the
 *                         Nth: the error path itself must cope
 *   SPKIT_FAIL_REPORT=F   at exit, "allocations A writes W failed F" into F
 *                         (F = the number of faults injected)
 *
 * By default only the Nth call fails: the error path after it runs with
 * memory, as after the first failure of a passing shortage. Writes to standard output and
 * standard error are not counted: they are streams the user redirects, not
 * outputs the program commits (and the one error line must get out).
 *
 * Why a preloaded library and not a hook in lib/core: allocations happen
 * in libc (fopen, strdup, realpath, qsort), zlib, libyaml and protobuf-c as
 * much as in spkit's code, and stdio's writes reach the kernel inside libc;
 * a hook would see only spkit's own calls. The programs are tested as
 * built, with nothing compiled in. The allocator behind the wrappers is
 * glibc's (__libc_malloc and friends), so no dlsym is needed for it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static long fail_alloc_at, fail_write_at;
static long allocs, writes, failed;
static int armed; /* counting starts when main does */
static int persist;

__attribute__((constructor)) static void fault_init(void)
{
	const char *a = getenv("SPKIT_FAIL_MALLOC"), *w = getenv("SPKIT_FAIL_WRITE");
	fail_alloc_at = a ? atol(a) : 0;
	fail_write_at = w ? atol(w) : 0;
	persist = getenv("SPKIT_FAIL_PERSIST") != NULL;
}

/* Counting starts at main, not before: the static initializers of the
 * CUDA runtime (cudart_static, linked into every program built with nvcc)
 * do not check their allocations and crash on a failed one before the
 * program has run a line; they are not the program's to handle. glibc's
 * __libc_start_main is wrapped to arm the counters just before main. */
typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;

static int armed_main(int argc, char **argv, char **envp)
{
	armed = 1;
	return program_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
		      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
		    void *) = dlsym(RTLD_NEXT, "__libc_start_main");
	program_main = main;
	return real(armed_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* Is this call the one to fail? Counts it either way. */
static int hit(long *counter, long at)
{
	if (!armed)
		return 0;
	long n = __atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
	if (at <= 0 || (persist ? n < at : n != at))
		return 0;
	__atomic_add_fetch(&failed, 1, __ATOMIC_SEQ_CST);
	return 1;
}

static int alloc_fails(void)
{
	if (!hit(&allocs, fail_alloc_at))
		return 0;
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return alloc_fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return n && alloc_fails() ? NULL : __libc_realloc(p, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	if (alloc_fails())
		return ENOMEM;
	void *q = __libc_memalign(align, n);
	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return alloc_fails() ? NULL : __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
	return alloc_fails() ? NULL : __libc_memalign(align, n);
}

/* The next definition of a libc function, looked up once. */
#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static int write_fails_fd(int fd, int err)
{
	if (fd == STDOUT_FILENO || fd == STDERR_FILENO || !hit(&writes, fail_write_at))
		return 0;
	errno = err;
	return 1;
}

/* A stream's write fails as one refused by the kernel would: errno and
 * the error flag that ferror reads (glibc's _IO_ERR_SEEN). */
static int write_fails(FILE *fp)
{
	if (fp == stdout || fp == stderr || !write_fails_fd(-1, ENOSPC))
		return 0;
	fp->_flags |= _IO_ERR_SEEN;
	return 1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write);
	return write_fails_fd(fd, ENOSPC) ? -1 : real_write(fd, buf, n);
}

int fsync(int fd)
{
	REAL(fsync);
	return write_fails_fd(fd, EIO) ? -1 : real_fsync(fd);
}

size_t fwrite(const void *buf, size_t size, size_t n, FILE *fp)
{
	REAL(fwrite);
	return size && n && write_fails(fp) ? 0 : real_fwrite(buf, size, n, fp);
}

int fputs(const char *s, FILE *fp)
{
	REAL(fputs);
	return write_fails(fp) ? EOF : real_fputs(s, fp);
}

int fputc(int c, FILE *fp)
{
	REAL(fputc);
	return write_fails(fp) ? EOF : real_fputc(c, fp);
}

int putc(int c, FILE *fp)
{
	REAL(putc);
	return write_fails(fp) ? EOF : real_putc(c, fp);
}

int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	REAL(vfprintf);
	return write_fails(fp) ? -1 : real_vfprintf(fp, fmt, ap);
}

int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfprintf(fp, fmt, ap);
	va_end(ap);
	return rc;
}

int fflush(FILE *fp)
{
	REAL(fflush);
	return fp && write_fails(fp) ? EOF : real_fflush(fp);
}

/* A failed close still releases the stream, as glibc's does. */
int fclose(FILE *fp)
{
	REAL(fclose);
	int fail = write_fails(fp);
	int rc = real_fclose(fp);
	if (fail) {
		errno = ENOSPC;
		return EOF;
	}
	return rc;
}

__attribute__((destructor)) static void fault_report(void)
{
	const char *path = getenv("SPKIT_FAIL_REPORT");
	if (!path)
		return;
	armed = 0;
	char line[128];
	int n = snprintf(line, sizeof line, "allocations %ld writes %ld failed %ld\n", allocs,
			 writes, failed);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		REAL(write);
		if (real_write(fd, line, (size_t)n) < 0)
			n = 0;
		close(fd);
	}
}
