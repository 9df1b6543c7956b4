#include "common/cli.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/memory.h"
#include "core/outfile.h"
#include "core/parallel.h"

int cli_verbosity = 1;
static const char *program = "spkit";

static void on_fatal_signal(int sig)
{
	outfile_remove_all_unfinished();
	signal(sig, SIG_DFL);
	raise(sig);
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	if (stop_signal)
		on_fatal_signal(sig);
	stop_signal = sig;
}

static void handle_signals(const int *sigs, int count, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < count; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* An error has been printed: the exit that follows is a failure already. */
static int error_reported;

static void report_line(const char *kind, const char *tail, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* At exit: what was printed on standard output (statistics, a report)
 * must have reached it. A full disk or a closed file there would
 * otherwise end in exit 0 with the text lost. */
static void check_stdout(void)
{
	if (error_reported)
		return;
	int flushed = fflush(stdout) == 0;
	if (flushed && !ferror(stdout))
		return;
	report_line("error", NULL, "standard output: write failed%s%s", flushed ? "" : ": ",
		    flushed ? "" : strerror(errno));
	outfile_remove_all_unfinished();
	_exit(EXIT_FAILURE);
}

void cli_init(const char *program_name)
{
	const char *slash = strrchr(program_name, '/');
	program = slash ? slash + 1 : program_name;
	atexit(check_stdout);
	handle_signals((const int[]){SIGINT, SIGTERM, SIGHUP}, 3, on_fatal_signal);
	const char *limit = getenv("SPKIT_MEMORY_LIMIT");
	if (limit && *limit)
		mem_set_limit((uint64_t)cli_int("SPKIT_MEMORY_LIMIT", limit, 1, INT64_MAX));
}

void cli_catch_stop_signals(void)
{
	handle_signals((const int[]){SIGINT, SIGTERM, SIGUSR1}, 3, on_stop_signal);
}

int cli_stop_signal(void)
{
	return stop_signal;
}

const char *cli_name(void)
{
	return program;
}

/* One line on stderr: "PROGRAM: KIND: MESSAGE", then `tail` (or nothing).
 * The message holds file names, option values and the library's messages
 * raw (err.h); here it is escaped, once and as a whole (sp_quote), so that
 * a name holding a newline or an escape sequence cannot split the line or
 * drive the terminal. Four bytes of room a byte: no escape is cut. */
static void vreport(const char *kind, const char *tail, const char *fmt, va_list ap)
{
	char text[SP_ERR_MAX * 2], shown[sizeof text * 4];
	vsnprintf(text, sizeof text, fmt, ap);
	fflush(stdout);
	fprintf(stderr, "%s: %s: %s%s\n", program, kind, sp_quote(shown, sizeof shown, text),
		tail ? tail : "");
}

static void report_line(const char *kind, const char *tail, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(kind, tail, fmt, ap);
	va_end(ap);
}

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* The hint stays on the error's line: SPEC.md's errors are one line,
	 * so that `grep error:` in a job log shows the whole of it. */
	char hint[128];
	snprintf(hint, sizeof hint, " (try '%s --help')", program);
	vreport("error", hint, fmt, ap);
	va_end(ap);
	error_reported = 1;
	outfile_remove_all_unfinished();
	exit(EXIT_USAGE);
}

void cli_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error", NULL, fmt, ap);
	va_end(ap);
	error_reported = 1;
	outfile_remove_all_unfinished();
	exit(EXIT_FAILURE);
}

void cli_stopped(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("stopped", NULL, fmt, ap);
	va_end(ap);
	exit(EXIT_STOPPED);
}

void cli_fatal(const struct sp_err *err)
{
	cli_die("%s", err->msg[0] ? err->msg : "unknown error");
}

void cli_warn(const char *fmt, ...)
{
	if (cli_verbosity == 0) /* -q: errors and requested results only */
		return;
	va_list ap;
	va_start(ap, fmt);
	vreport("warning", NULL, fmt, ap);
	va_end(ap);
}

/* Escaped as vreport escapes: a file or device name it shows cannot split
 * the line or drive the terminal. */
void cli_log(int level, const char *fmt, ...)
{
	if (cli_verbosity < level)
		return;
	char text[SP_ERR_MAX * 2], shown[sizeof text * 4];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", sp_quote(shown, sizeof shown, text));
}

void cli_log_threads(void)
{
	const char *source = "";
	int n = parallel_threads_from(&source);
	cli_log(2, "CPU threads: %d (from %s)", n, source);
}

void cli_help(const char *text)
{
	fputs(text, stdout);
	exit(EXIT_SUCCESS);
}

void cli_version(void)
{
	printf("%s (spkit) %s\n", program, SPKIT_VERSION);
	exit(EXIT_SUCCESS);
}

void cli_common_option(int c, const char *usage, char **argv)
{
	switch (c) {
	case 'q': cli_verbosity = 0; return;
	case 'v': cli_verbosity++; return;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	case ':': cli_usage_error("option '%s' needs a value", argv[optind - 1]);
	default: cli_usage_error("unknown option '%s'", argv[optind - 1]);
	}
}

void cli_run_command(int argc, char **argv, const struct cli_command *commands,
		     int (*main_form)(int argc, char **argv), const char *usage)
{
	const char *first = argc > 1 ? argv[1] : "";
	if (!strcmp(first, "--help") || !strcmp(first, "-h"))
		cli_help(usage);
	if (!strcmp(first, "--version") || !strcmp(first, "-V"))
		cli_version();
	for (const struct cli_command *c = commands; c->name; c++)
		if (!strcmp(first, c->name)) {
			optind = 1;
			exit(c->run(argc - 1, argv + 1));
		}
	if (main_form)
		exit(main_form(argc, argv));
	if (first[0] == '-')
		cli_usage_error("unknown option '%s'", first);
	char names[256] = "";
	for (const struct cli_command *c = commands; c->name; c++)
		snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
			 c == commands ? "" : ", ", c->name);
	if (argc < 2)
		cli_usage_error("a command is needed: one of %s", names);
	cli_usage_error("unknown command '%s': one of %s", first, names);
}

const char *cli_join_names(const char *const *names, char *buf, size_t size)
{
	buf[0] = '\0';
	for (int i = 0; names[i]; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", names[i]);
	return buf;
}

int cli_choice(const char *option, const char *text, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(text, names[i]))
			return i;
	char list[512];
	cli_usage_error("%s: '%s' is not one of %s", option, text,
			cli_join_names(names, list, sizeof list));
}

int cli_choice_list(const char *option, const char *text, const char *const *names, int *out,
		    int cap)
{
	int n = 0;
	char item[128];
	for (const char *p = text;; p++) {
		size_t len = strcspn(p, ",");
		if (len >= sizeof item)
			len = sizeof item - 1;
		memcpy(item, p, len);
		item[len] = '\0';
		int k = cli_choice(option, item, names);
		for (int i = 0; i < n; i++)
			if (out[i] == k)
				cli_usage_error("%s: '%s' is listed twice", option, item);
		if (n == cap)
			cli_usage_error("%s: more than %d items", option, cap);
		out[n++] = k;
		p += strcspn(p, ",");
		if (!*p)
			return n;
	}
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
	       int *longindex)
{
	int li = -1;
	int c = getopt_long(argc, argv, shortopts, longopts, &li);
	if (longindex)
		*longindex = li;
	if (c != -1 && c != '?' && c != ':' && optarg && !*optarg) {
		if (li >= 0)
			cli_usage_error("--%s: the value is empty", longopts[li].name);
		cli_usage_error("-%c: the value is empty", c);
	}
	return c;
}

int64_t cli_int(const char *option, const char *text, int64_t min, int64_t max)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (end == text || *end != '\0' || errno == ERANGE)
		cli_usage_error("%s: '%s' is not an integer", option, text);
	if (v < min || v > max)
		cli_usage_error("%s: %lld is out of range [%lld, %lld]", option, v,
				(long long)min, (long long)max);
	return v;
}

double cli_double(const char *option, const char *text, double min, double max)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v))
		cli_usage_error("%s: '%s' is not a finite number", option, text);
	if (v < min || v > max)
		cli_usage_error("%s: %g is out of range [%g, %g]", option, v, min, max);
	return v;
}

double cli_fraction(const char *option, const char *text)
{
	double v = cli_double(option, text, -HUGE_VAL, HUGE_VAL);
	if (!(v > 0 && v <= 1))
		cli_usage_error("%s: %g is outside (0, 1]", option, v);
	return v;
}

void cli_list_check(const char *option, const char *text)
{
	size_t len = strlen(text);
	if (len && (text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,")))
		cli_usage_error("%s: an empty item in '%s'", option, text);
}

int cli_int_list(const char *option, const char *text, int64_t *out, int cap,
		 int64_t min, int64_t max)
{
	char buf[1024];
	cli_list_check(option, text);
	if (strlen(text) >= sizeof buf)
		cli_usage_error("%s: list is too long", option);
	strcpy(buf, text);
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == cap)
			cli_usage_error("%s: more than %d values", option, cap);
		out[n++] = cli_int(option, tok, min, max);
	}
	if (n == 0)
		cli_usage_error("%s: empty list", option);
	return n;
}

/* An environment integer, or -1 when unset or not a number. */
static long env_long(const char *name)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return (*end || errno) ? -1 : v;
}

struct cli_parts cli_parts(const char *parts_text, const char *part_text)
{
	struct cli_parts p = {1, 1};
	long count = env_long("SLURM_ARRAY_TASK_COUNT");
	long id = env_long("SLURM_ARRAY_TASK_ID");
	if (count > 0 && id >= 0) {
		long first = env_long("SLURM_ARRAY_TASK_MIN");
		p.count = (int)count;
		p.index = (int)(id - (first >= 0 ? first : 0)) + 1;
	} else if (env_long("SLURM_NTASKS") > 0 && env_long("SLURM_PROCID") >= 0) {
		p.count = (int)env_long("SLURM_NTASKS");
		p.index = (int)env_long("SLURM_PROCID") + 1;
	}
	if (parts_text)
		p.count = (int)cli_int("--parts", parts_text, 1, 1000000);
	if (part_text)
		p.index = (int)cli_int("--part", part_text, 1, 1000000);
	if (p.index < 1 || p.index > p.count)
		cli_usage_error("--part %d is outside 1..%d (--parts)", p.index, p.count);
	return p;
}

/* The device of --device cuda:N, one per process as the option is. */
static int device_index;

enum gpu_device_choice cli_device(const char *text)
{
	/* "cuda:N" is listed for the error message; such text is taken first */
	static const enum gpu_device_choice named[] = {DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA,
						       DEVICE_AUTO};
	device_index = 0;
	if (!strncmp(text, "cuda:", 5)) {
		device_index = (int)cli_int("--device", text + 5, 0, 1023);
		return DEVICE_CUDA;
	}
	return named[cli_choice("--device", text,
				(const char *const[]){"cpu", "cuda", "cuda:N", "auto", NULL})];
}

int cli_device_index(void)
{
	return device_index;
}

int cli_use_gpu(enum gpu_device_choice want)
{
	struct sp_err err;
	int use_gpu;
	if (gpu_resolve(want, &use_gpu, &err))
		cli_die("--device cuda: %s", err.msg);
	if (use_gpu && gpu_select(device_index, &err))
		cli_die("--device cuda:%d: %s", device_index, err.msg);
	return use_gpu;
}
