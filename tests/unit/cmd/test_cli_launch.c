/* Who this process is in a launch (cmd/common/cli_launch.c), from the
 * variables SLURM and torchrun set: a single process, srun's tasks,
 * torchrun's processes (taking precedence inside a SLURM allocation), run
 * ids, and values out of range refused naming the variable, by the parser
 * and, exiting with status 2, by cli_launch_read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/cli_launch.h"

static const char *const launch_vars[] = {
	"RANK",		"WORLD_SIZE",	 "LOCAL_RANK",		 "TORCHELASTIC_RUN_ID",
	"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID",
	"SLURM_JOB_ID", "SLURM_STEP_ID", NULL};

static int clear_env(void **state)
{
	for (int i = 0; launch_vars[i]; i++)
		unsetenv(launch_vars[i]);
	return 0;
}

static void set_env(const char *pairs[])
{
	for (int i = 0; pairs[i]; i += 2)
		setenv(pairs[i], pairs[i + 1], 1);
}

static void assert_launch(int rank, int size, int local, const char *source, const char *run_id)
{
	struct cli_launch l;
	struct sp_err e = {""};
	if (cli_launch_parse(&l, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(l.rank, rank);
	assert_int_equal(l.size, size);
	assert_int_equal(l.local_rank, local);
	if (source)
		assert_string_equal(l.source, source);
	else
		assert_null(l.source);
	assert_string_equal(l.run_id, run_id);
}

static void assert_refused(const char *message)
{
	struct cli_launch l;
	struct sp_err e;
	assert_int_equal(cli_launch_parse(&l, &e), -1);
	assert_string_equal(e.msg, message);
}

static void test_single_process(void **state)
{
	assert_launch(0, 1, 0, NULL, "");
	set_env((const char *[]){"RANK", "3", "SLURM_PROCID", "2", NULL}); /* half a launch */
	assert_launch(0, 1, 0, NULL, "");
}

static void test_slurm(void **state)
{
	set_env((const char *[]){"SLURM_PROCID", "3", "SLURM_NTASKS", "4", "SLURM_LOCALID", "1",
				 "SLURM_JOB_ID", "777", "SLURM_STEP_ID", "0", NULL});
	assert_launch(3, 4, 1, "SLURM", "777.0");
	/* srun's own count for its step wins over the allocation's */
	set_env((const char *[]){"SLURM_STEP_NUM_TASKS", "8", NULL});
	assert_launch(3, 8, 1, "SLURM", "777.0");
	unsetenv("SLURM_STEP_ID");
	unsetenv("SLURM_LOCALID");
	assert_launch(3, 8, 0, "SLURM", "777");
}

static void test_torchrun_first(void **state)
{
	set_env((const char *[]){"SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_ID", "5",
				 "RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1",
				 "TORCHELASTIC_RUN_ID", "abc-1", NULL});
	assert_launch(5, 8, 1, "torchrun", "abc-1");
	setenv("TORCHELASTIC_RUN_ID", "none", 1); /* torchrun's value without --rdzv-id */
	assert_launch(5, 8, 1, "torchrun", "");
}

static void test_bad_values(void **state)
{
	set_env((const char *[]){"RANK", "8", "WORLD_SIZE", "8", "LOCAL_RANK", "0", NULL});
	assert_refused("RANK='8': not an integer in 0..7");
	set_env((const char *[]){"WORLD_SIZE", "0", NULL});
	assert_refused("WORLD_SIZE='0': not an integer in 1..2147483647");
	set_env((const char *[]){"WORLD_SIZE", "16", "LOCAL_RANK", "-1", NULL});
	assert_refused("LOCAL_RANK='-1': not an integer in 0..2147483647");
	unsetenv("LOCAL_RANK");
	assert_refused("LOCAL_RANK: not set, where RANK and WORLD_SIZE are (torchrun sets all "
		       "three)");
	clear_env(NULL);
	set_env((const char *[]){"SLURM_PROCID", "1x", "SLURM_NTASKS", "2", NULL});
	assert_refused("SLURM_PROCID='1x': not an integer in 0..1");
	set_env((const char *[]){"SLURM_PROCID", "1", "SLURM_NTASKS", "99999999999", NULL});
	assert_refused("SLURM_NTASKS='99999999999': not an integer in 1..2147483647");
	set_env((const char *[]){"SLURM_NTASKS", "2", "SLURM_LOCALID", "a\nb", NULL});
	assert_refused("SLURM_LOCALID='a\nb': not an integer in 0..2147483647");
}

/* cli_launch_read in a child: one error line naming the variable, exit 2. */
static void test_read_exits(void **state)
{
	set_env((const char *[]){"RANK", "9", "WORLD_SIZE", "4", "LOCAL_RANK", "0", NULL});
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		cli_init("maxk-train");
		struct cli_launch l;
		cli_launch_read(&l);
		_exit(0);
	}
	close(fds[1]);
	char text[512] = "";
	ssize_t n = read(fds[0], text, sizeof text - 1);
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EXIT_USAGE);
	assert_true(n > 0);
	assert_string_equal(text, "maxk-train: error: RANK='9': not an integer in 0..3 (try "
				  "'maxk-train --help')\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_single_process, clear_env),
		cmocka_unit_test_setup(test_slurm, clear_env),
		cmocka_unit_test_setup(test_torchrun_first, clear_env),
		cmocka_unit_test_setup(test_bad_values, clear_env),
		cmocka_unit_test_setup(test_read_exits, clear_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
