/* The rendezvous file (lib/core/rendezvous.c): a round trip between
 * processes, the waiting side started first; an existing file refused; a
 * file for another number of ranks refused naming both; the timeout; a file
 * left by an earlier run ignored; a file cut short or altered never read as
 * valid; run ids that cannot be part of a file name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/rendezvous.h"
#include "testutil.h"

static const unsigned char id_bytes[128] = {1, 2, 3, 250, [127] = 9};

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("'%s' does not contain '%s'", text, part);
	assert_null(strchr(text, '\n'));
}

/* Ranks 1..3 are children waiting before rank 0 (this process) publishes. */
static void test_round_trip(void **state)
{
	pid_t kids[3];
	for (int r = 0; r < 3; r++) {
		kids[r] = fork();
		assert_true(kids[r] >= 0);
		if (kids[r] == 0) {
			unsigned char got[128] = {0};
			struct sp_err e;
			int rc = rendezvous_wait(test_dir, "4242.0", 4, got, sizeof got, 10, &e);
			_exit(rc == 0 && !memcmp(got, id_bytes, sizeof got) ? 0 : 1);
		}
	}
	struct timespec t = {0, 150000000};
	nanosleep(&t, NULL);
	struct sp_err e;
	assert_int_equal(rendezvous_publish(test_dir, "4242.0", 4, id_bytes, sizeof id_bytes, &e),
			 0);
	for (int r = 0; r < 3; r++) {
		int status;
		assert_int_equal(waitpid(kids[r], &status, 0), kids[r]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* after the wait: the file is there, then gone; no temporary was left */
	assert_int_equal(access(test_path("spkit-rendezvous-4242.0.id"), F_OK), 0);
	assert_int_equal(rendezvous_remove(test_dir, "4242.0", &e), 0);
	assert_int_equal(access(test_path("spkit-rendezvous-4242.0.id"), F_OK), -1);
	assert_int_equal(rendezvous_remove(test_dir, "4242.0", &e), 0); /* absent: fine */
	char cmd[300];
	snprintf(cmd, sizeof cmd, "ls -A %s | grep -q '^\\.spkit-rendezvous'", test_dir);
	assert_int_not_equal(system(cmd), 0);
}

static void test_existing_file_refused(void **state)
{
	struct sp_err e;
	const unsigned char other[128] = {7};
	assert_int_equal(rendezvous_publish(test_dir, "job", 2, id_bytes, sizeof id_bytes, &e), 0);
	assert_int_equal(rendezvous_publish(test_dir, "job", 2, other, sizeof other, &e), -1);
	assert_contains(e.msg, "/spkit-rendezvous-job.id: a rendezvous file of an earlier run with "
			       "id 'job' is there; remove it if no run with that id is going");
	unsigned char got[128];
	assert_int_equal(rendezvous_wait(test_dir, "job", 2, got, sizeof got, 1, &e), 0);
	assert_memory_equal(got, id_bytes, sizeof got); /* the first, unchanged */
	assert_int_equal(rendezvous_remove(test_dir, "job", &e), 0);
}

static void test_world_mismatch(void **state)
{
	struct sp_err e;
	unsigned char got[128];
	assert_int_equal(rendezvous_publish(test_dir, "w", 4, id_bytes, sizeof id_bytes, &e), 0);
	assert_int_equal(rendezvous_wait(test_dir, "w", 2, got, sizeof got, 5, &e), -1);
	char host[64] = "", want[200];
	gethostname(host, sizeof host - 1);
	snprintf(want, sizeof want,
		 "spkit-rendezvous-w.id: the rendezvous file is for a run of 4 ranks, this run has "
		 "2 (written by process %d on %s)",
		 (int)getpid(), host);
	assert_contains(e.msg, want);
	assert_int_equal(rendezvous_wait(test_dir, "w", 4, got, 64, 5, &e), -1);
	assert_contains(e.msg, "the rendezvous file holds 128 bytes, 64 expected");
	assert_int_equal(rendezvous_remove(test_dir, "w", &e), 0);
}

static double elapsed_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void test_timeout(void **state)
{
	struct sp_err e;
	unsigned char got[128];
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rendezvous_wait(test_dir, "never", 3, got, sizeof got, 0.3, &e), -1);
	double took = elapsed_since(&t0);
	assert_true(took >= 0.3 && took < 2);
	char want[600];
	snprintf(want, sizeof want,
		 "no rendezvous file from rank 0 in 0.3 s (%s/spkit-rendezvous-never.id): rank 0 "
		 "did not start or cannot write there",
		 test_dir);
	assert_string_equal(e.msg, want);
}

/* A file from before this process started (by more than the timeout) is
 * not read; the same file made recent is. */
static void test_leftover_ignored(void **state)
{
	struct sp_err e;
	unsigned char got[128];
	assert_int_equal(rendezvous_publish(test_dir, "old", 2, id_bytes, sizeof id_bytes, &e), 0);
	const char *path = test_path("spkit-rendezvous-old.id");
	struct timeval hour_ago[2];
	gettimeofday(&hour_ago[0], NULL);
	hour_ago[0].tv_sec -= 3600;
	hour_ago[1] = hour_ago[0];
	assert_int_equal(utimes(path, hour_ago), 0);
	assert_int_equal(rendezvous_wait(test_dir, "old", 2, got, sizeof got, 0.3, &e), -1);
	assert_contains(e.msg, "no rendezvous file from rank 0 in 0.3 s");
	assert_contains(e.msg, "; the file there is older than this run (an earlier run's)");
	assert_int_equal(utimes(path, NULL), 0);
	assert_int_equal(rendezvous_wait(test_dir, "old", 2, got, sizeof got, 0.3, &e), 0);
	assert_int_equal(rendezvous_remove(test_dir, "old", &e), 0);
}

/* A copy of a published file, cut short or with a byte changed, under
 * another run's name: never valid, whatever the wait. */
static void test_damaged_file_never_valid(void **state)
{
	struct sp_err e;
	unsigned char got[128];
	assert_int_equal(rendezvous_publish(test_dir, "good", 2, id_bytes, sizeof id_bytes, &e), 0);
	size_t n;
	unsigned char *whole = test_slurp(test_path("spkit-rendezvous-good.id"), &n);
	assert_int_equal(n, 112 + 128);
	const size_t cuts[] = {0, 7, 111, 112, 200, n - 1};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		test_spit(test_path("spkit-rendezvous-cut.id"), whole, cuts[i]);
		assert_int_equal(rendezvous_wait(test_dir, "cut", 2, got, sizeof got, 0.1, &e), -1);
		assert_contains(e.msg, "spkit-rendezvous-cut.id: not a valid rendezvous file after "
				       "0.1 s (");
	}
	whole[150] ^= 1; /* in the payload */
	test_spit(test_path("spkit-rendezvous-cut.id"), whole, n);
	assert_int_equal(rendezvous_wait(test_dir, "cut", 2, got, sizeof got, 0.1, &e), -1);
	assert_contains(e.msg, "(checksum mismatch)");
	whole[150] ^= 1;
	test_spit(test_path("spkit-rendezvous-cut.id"), whole, n + 1); /* a byte too many */
	assert_int_equal(rendezvous_wait(test_dir, "cut", 2, got, sizeof got, 0.1, &e), -1);
	assert_contains(e.msg, "(241 bytes, 240 expected)");
	test_spit(test_path("spkit-rendezvous-cut.id"), whole, n); /* restored: valid */
	assert_int_equal(rendezvous_wait(test_dir, "cut", 2, got, sizeof got, 0.1, &e), 0);
	assert_memory_equal(got, id_bytes, sizeof got);
	free(whole);
	assert_int_equal(rendezvous_remove(test_dir, "cut", &e), 0);
	assert_int_equal(rendezvous_remove(test_dir, "good", &e), 0);
}

static void test_bad_run_ids(void **state)
{
	struct sp_err e;
	unsigned char got[128];
	assert_int_equal(rendezvous_publish(test_dir, "", 2, id_bytes, 128, &e), -1);
	assert_string_equal(e.msg,
			    "rendezvous run id '': empty (it becomes part of a file name)");
	assert_int_equal(rendezvous_wait(test_dir, "../x", 2, got, 128, 1, &e), -1);
	assert_string_equal(e.msg,
			    "rendezvous run id '../x': contains '/' (it becomes part of a file name)");
	assert_int_equal(rendezvous_remove(test_dir, "a\nb", &e), -1);
	assert_string_equal(e.msg, "rendezvous run id 'a\nb': contains a control character (it "
				   "becomes part of a file name)");
	char longer[200];
	memset(longer, 'x', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	assert_int_equal(rendezvous_check_run_id(longer, &e), -1);
	assert_contains(e.msg, ": longer than 128 bytes");
	assert_int_equal(rendezvous_check_run_id("1234.0", &e), 0);
	assert_int_equal(rendezvous_check_run_id("torchrun-abc_01", &e), 0);
}

static void test_unwritable_folder(void **state)
{
	struct sp_err e;
	assert_int_equal(
		rendezvous_publish("/nonexistent/spkit", "r", 2, id_bytes, sizeof id_bytes, &e), -1);
	assert_contains(e.msg, "/nonexistent/spkit: cannot write the rendezvous file there: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_existing_file_refused),
		cmocka_unit_test(test_world_mismatch),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_leftover_ignored),
		cmocka_unit_test(test_damaged_file_never_valid),
		cmocka_unit_test(test_bad_run_ids),
		cmocka_unit_test(test_unwritable_folder),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
