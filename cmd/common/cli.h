/* Command-line conventions shared by every program: one error voice
 * ("PROGRAM: error: ..."), exit 2 for usage and 1 for everything else,
 * -q/-v verbosity, --version, option-value parsing with range checks,
 * --parts/--part with SLURM defaults, and --device.
 *
 * Only cmd/ calls the functions that print and exit; the rest of lib/
 * returns errors as values (err.h). */
#ifndef SPKIT_CLI_H
#define SPKIT_CLI_H

#include <stdint.h>
#include <stdnoreturn.h>

#include "core/err.h"
#include "core/gpu.h"

/* Exit statuses beyond 0 and 1 (an error): 2 for a usage error; 75 for a
 * run stopped by a signal at a safe point after writing its checkpoint, so
 * a job script can requeue it (sysexits.h's EX_TEMPFAIL, "try again
 * later"; distinct from errors and from 128 + N, a death by signal N). */
enum { EXIT_USAGE = 2, EXIT_STOPPED = 75 };

/* 0 = quiet (-q), 1 = normal, 2 = verbose (-v), 3 = more (-vv). */
extern int cli_verbosity;

/* Set the program name used in messages and install the SIGINT/SIGTERM
 * handler that removes unfinished output files (outfile.h) before dying. */
void cli_init(const char *program_name);
const char *cli_name(void);

/* For a run that can stop cleanly (maxk-train --checkpoint): from now on
 * the first SIGINT, SIGTERM or SIGUSR1 is only recorded, for the program
 * to see (cli_stop_signal) and stop at a safe point; a second one dies as
 * under cli_init's handlers. */
void cli_catch_stop_signals(void);
/* The recorded signal, or 0. */
int cli_stop_signal(void);
/* "PROGRAM: stopped: MESSAGE" on stderr (also under -q), exit EXIT_STOPPED. */
noreturn void cli_stopped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The lines on stderr. What they are given holds file names, option values
 * and the library's messages raw, never escaped (err.h): each line is
 * escaped once, whole, as it is written (sp_quote). */
noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void cli_fatal(const struct sp_err *err);
noreturn void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A message on stderr when cli_verbosity >= level. */
void cli_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* At -v, "CPU threads: N (from SOURCE)" (core/parallel.h), for the
 * programs whose CPU paths run threads. */
void cli_log_threads(void);

/* The options every program takes, closing its getopt_long table and
 * short-option string, and their handling: a program's option switch ends
 * with `default: cli_common_option(c, usage, argv);`, which also turns
 * getopt's unknown-option and missing-value results into usage errors.
 * Parse with opterr = 0 and a short-option string that starts with ':'. */
#define CLI_COMMON_SHORTOPTS "qvhV"
#define CLI_COMMON_LONGOPTS                                                          \
	{"quiet", no_argument, NULL, 'q'}, {"verbose", no_argument, NULL, 'v'},     \
	{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, { 0 }
void cli_common_option(int c, const char *usage, char **argv);

/* getopt_long, with an empty value ("-o ''", "--log=") a usage error
 * naming the option, found before any work instead of after it. */
struct option;
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       int *longindex);

/* "--help" text on stdout, exit 0; and "--version". */
noreturn void cli_help(const char *text);
noreturn void cli_version(void);

/* Subcommands, `PROG COMMAND [OPTION]...` (ksmm-tune tune, kernel-sample
 * merge, macko-spmv bench): cli_run_command runs the command that argv[1]
 * names, with argv shifted so that the command's argv[0] is its name and
 * getopt starts after it, and exits with what it returns. Before a command,
 * --help/-h and --version/-V are the program's. A program whose main form
 * has no name (macko-spmv MATRIX X) passes it as main_form: it runs, with
 * the whole argv, when argv[1] names no command; without one, a missing or
 * unknown command is a usage error listing the commands. */
struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
};
noreturn void cli_run_command(int argc, char **argv, const struct cli_command *commands,
			      int (*main_form)(int argc, char **argv), const char *usage);

/* Option values; a bad value is a usage error naming the option. */
/* One of names (NULL-terminated): its index; anything else is a usage
 * error that lists the names. */
int cli_choice(const char *option, const char *text, const char *const *names);
/* "a, b, c" of a NULL-terminated list, for messages; returns buf. */
const char *cli_join_names(const char *const *names, char *buf, size_t size);
/* "a,b" of names into indices (each once at most); returns the count. */
int cli_choice_list(const char *option, const char *text, const char *const *names, int *out,
		    int cap);
int64_t cli_int(const char *option, const char *text, int64_t min, int64_t max);
double cli_double(const char *option, const char *text, double min, double max);
/* A number in (0, 1]: a density or a fraction. */
double cli_fraction(const char *option, const char *text);
/* A comma-separated list with an empty item ("a,,b", "a,", ",a") is a
 * usage error: the user meant something there. */
void cli_list_check(const char *option, const char *text);
/* Parse "a,b,c" integers into out (at most cap); returns the count. */
int cli_int_list(const char *option, const char *text, int64_t *out, int cap,
		 int64_t min, int64_t max);

/* --parts N --part I (1-based). NULL strings take the defaults from
 * SLURM_ARRAY_TASK_COUNT/SLURM_ARRAY_TASK_ID (the task id taken relative
 * to SLURM_ARRAY_TASK_MIN), else SLURM_NTASKS/SLURM_PROCID, else 1/1. */
struct cli_parts {
	int count;
	int index; /* 1-based */
};
struct cli_parts cli_parts(const char *parts_text, const char *part_text);
/* Is item i (0-based) of a sweep this part's? Round-robin. */
static inline int cli_parts_owns(struct cli_parts p, int64_t i)
{
	return i % p.count == p.index - 1;
}

/* --device cpu|cuda|cuda:N|auto (cuda:N: the program's N-th CUDA device,
 * counted as CUDA_VISIBLE_DEVICES leaves them; cuda and auto take device 0);
 * and the choice resolved against the machine, making the device current,
 * dying with "--device cuda: no usable CUDA device (why)" where cuda was
 * asked for and cannot be had. */
enum gpu_device_choice cli_device(const char *text);
int cli_device_index(void); /* N of the last cuda:N, else 0 */
int cli_use_gpu(enum gpu_device_choice want);

#endif
