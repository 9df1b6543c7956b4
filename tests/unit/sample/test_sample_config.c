/* kernel-sample configs (sample_config.h): the original's flow style with
 * its comments and quoting, block style, defaults, and every refusal with
 * its file, line and message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sample/sample_config.h"
#include "testutil.h"

/* estimate-train-time's collect/layernorm.yml as it stands (flow style,
 * comments inside the mapping, single-quoted lists, a trailing comment). */
static const char layernorm[] =
	"{\n"
	"  \"module_name\": \"target_functions\",\n"
	"  \"kernel_name\": \"layernorm\",\n"
	"  \"function_name\": \"layernorm\",\n"
	"  \"columns_name\": ['b', 'l', 'dim', 'F_dur(us)', 'B_dur(us)'],\n"
	"  \"targets\": [['built-in method layer_norm of type object', "
	"'aten::native_layer_norm'], ['aten::native_layer_norm_backward']],\n"
	"  \"first_n_column\": 3, \n"
	"\n"
	"  # b, l, dim\n"
	"  \"starts\":[2, 1024, 2048],\n"
	"  \"steps\":[2, 512, 512],\n"
	"  \"ends\":[8, 5120, 8192],\n"
	"  \"operators\":['mul', 'add', 'add'],\n"
	"\n"
	"  \"warmup_shapes\":[16, 4096, 4096],\n"
	"\n"
	"  \"wait\": 4,\n"
	"  \"warmup\": 6,\n"
	"  \"active\": 10,\n"
	"\n"
	"  \"shapes\":[16, 2048, 1024],\n"
	"\n"
	"  # run_function, get_profiler, get_one, get_all\n"
	"  \"run\": \"get_all\"\n"
	"}\n"
	"\n"
	"# test command\n";

static int read_text(const char *text, struct sample_config *c, struct sp_err *e)
{
	return sample_config_read_buffer(text, strlen(text), "x.yml", c, e);
}

static void test_original_flow_style(void **state)
{
	struct sample_config c;
	struct sp_err e;
	if (read_text(layernorm, &c, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(c.path, "x.yml");
	assert_string_equal(c.kernel_name, "layernorm");
	assert_string_equal(c.function_name, "layernorm");
	assert_int_equal(c.ncols, 5);
	assert_string_equal(c.columns[0], "b");
	assert_string_equal(c.columns[3], "F_dur(us)");
	assert_string_equal(c.columns[4], "B_dur(us)");
	assert_int_equal(c.columns_line, 5);
	assert_int_equal(c.grid.ndims, 3);
	assert_memory_equal(c.grid.start, ((int64_t[]){2, 1024, 2048}), 3 * sizeof(int64_t));
	assert_memory_equal(c.grid.step, ((int64_t[]){2, 512, 512}), 3 * sizeof(int64_t));
	assert_memory_equal(c.grid.end, ((int64_t[]){8, 5120, 8192}), 3 * sizeof(int64_t));
	assert_int_equal(c.grid.grow[0], SAMPLE_MUL);
	assert_int_equal(c.grid.grow[2], SAMPLE_ADD);
	assert_true(c.has_warmup_shape);
	assert_memory_equal(c.warmup_shape, ((int64_t[]){16, 4096, 4096}), 3 * sizeof(int64_t));
	assert_true(c.has_shape);
	assert_memory_equal(c.shape, ((int64_t[]){16, 2048, 1024}), 3 * sizeof(int64_t));
	assert_int_equal(c.wait, 4);
	assert_int_equal(c.warmup, 6);
	assert_int_equal(c.active, 10);
	assert_int_equal(c.run, SAMPLE_GET_ALL);
	sample_config_free(&c);
	sample_config_free(&c); /* safe twice: left empty */
}

static void test_block_style_and_defaults(void **state)
{
	static const char text[] = "kernel_name: gelu_small\n"
				   "function_name: gelu\n"
				   "columns_name: [mp, b, l, dim, F_dur(us), B_dur(us)]\n"
				   "first_n_column: 4\n"
				   "starts: [1, 1, 8, 16]\n"
				   "steps:\n"
				   "  - 2\n"
				   "  - 1\n"
				   "  - 8\n"
				   "  - 16\n"
				   "ends: [2, 2, 16, 32]\n"
				   "operators: [mul, add, add, add]\n"
				   "run: get_one\n"
				   "shapes: [1, 2, 8, 16]\n";
	struct sample_config c;
	struct sp_err e;
	if (read_text(text, &c, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(c.kernel_name, "gelu_small");
	assert_string_equal(c.function_name, "gelu");
	assert_int_equal(c.grid.step[1], 1);
	assert_false(c.has_warmup_shape);
	assert_int_equal(c.wait, 4); /* the original configs' counts */
	assert_int_equal(c.warmup, 6);
	assert_int_equal(c.active, 10);
	assert_int_equal(c.run, SAMPLE_GET_ONE);
	sample_config_free(&c);
}

/* layernorm with the line that starts with `from` (within the first
 * occurrence) replaced by `to`, which must fail with msg. */
static void fails_with(const char *from, const char *to, const char *msg)
{
	char text[4096];
	const char *at = strstr(layernorm, from);
	assert_non_null(at);
	const char *eol = strchr(at, '\n');
	snprintf(text, sizeof text, "%.*s%s%s", (int)(at - layernorm), layernorm, to, eol);
	struct sample_config c = {0};
	struct sp_err e = {{0}};
	if (read_text(text, &c, &e) == 0)
		fail_msg("accepted: %s", to);
	assert_string_equal(e.msg, msg);
	assert_null(c.path); /* left empty */
	assert_int_equal(c.ncols, 0);
}

static void test_refusals(void **state)
{
	fails_with("\"first_n_column\"", "\"first_n_colum\": 3,",
		   "x.yml:7: unknown key 'first_n_colum' in a kernel-sample config (expected "
		   "module_name, kernel_name, function_name, columns_name, targets, "
		   "first_n_column, starts, steps, ends, operators, warmup_shapes, wait, warmup, "
		   "active, shapes, run)");
	fails_with("\"steps\"", "\"steps\":[2, 512],",
		   "x.yml:11: steps has 2 values, first_n_column is 3");
	fails_with("\"ends\"", "\"ends\":[8, 5120, 8192, 1],",
		   "x.yml:12: ends has 4 values, first_n_column is 3");
	fails_with("\"operators\"", "\"operators\":['mul', 'add'],",
		   "x.yml:13: operators has 2 values, first_n_column is 3");
	fails_with("\"warmup_shapes\"", "\"warmup_shapes\":[16, 4096],",
		   "x.yml:15: warmup_shapes has 2 values, first_n_column is 3");
	fails_with("\"shapes\"", "\"shapes\":[16],",
		   "x.yml:21: shapes has 1 values, first_n_column is 3");
	fails_with("\"columns_name\"", "\"columns_name\": ['b', 'l', 'dim', 'F_dur(us)'],",
		   "x.yml:5: columns_name has 4 names, expected first_n_column (3) shape columns "
		   "and the forward and backward durations");
	fails_with("\"columns_name\"", "\"columns_name\": ['b', 'l', 'b', 'F', 'B'],",
		   "x.yml:5: columns_name[2]: 'b' named twice");
	fails_with("\"steps\"", "\"steps\":[2, 0, 512],",
		   "x.yml:11: steps[1]: step 0 never advances ('add' needs 1 or more)");
	fails_with("\"steps\"", "\"steps\":[1, 512, 512],",
		   "x.yml:11: steps[0]: step 1 never advances ('mul' needs 2 or more)");
	fails_with("\"steps\"", "\"steps\":[2, -512, 512],",
		   "x.yml:11: steps[1]: -512 is outside 0..1099511627776");
	fails_with("\"ends\"", "\"ends\":[8, 5120, 2047],",
		   "x.yml:12: ends[2]: end 2047 is below its start 2048");
	fails_with("\"starts\"", "\"starts\":[0, 1024, 2048],",
		   "x.yml:10: starts[0]: 0 is outside 1..1099511627776");
	fails_with("\"operators\"", "\"operators\":['mul', 'multi', 'add'],",
		   "x.yml:13: operators[1]: unknown operator 'multi' (expected mul or add)");
	fails_with("\"run\"", "\"run\": \"get_some\"",
		   "x.yml:24: run: unknown mode 'get_some' (expected get_all, get_one, "
		   "get_profiler or run_function)");
	fails_with("\"first_n_column\"", "\"first_n_column\": 9,",
		   "x.yml:7: first_n_column: 9 is outside 1..8");
	fails_with("\"active\"", "\"active\": 0,", "x.yml:19: active: 0 is outside 1..100000");
	fails_with("\"wait\"", "\"wait\": -1,", "x.yml:17: wait: -1 is outside 0..100000");
	fails_with("\"kernel_name\"", "", "x.yml:1: missing key 'kernel_name'");
	fails_with("\"starts\"", "\"starts\":[2, 1.5, 2048],",
		   "x.yml:10: starts[1]: expected an integer, found '1.5'");
	fails_with("\"ends\"", "\"ends\":[1099511627776, 1099511627776, 1099511627776],",
		   "x.yml:1: the grid has more than 1099511627776 shapes");
}

static void test_single_shape_modes_need_shapes(void **state)
{
	static const char text[] = "kernel_name: gelu\n"
				   "columns_name: [n, F, B]\n"
				   "first_n_column: 1\n"
				   "starts: [1]\n"
				   "steps: [1]\n"
				   "ends: [3]\n"
				   "operators: [add]\n"
				   "run: get_profiler\n";
	struct sample_config c;
	struct sp_err e;
	assert_int_equal(read_text(text, &c, &e), -1);
	assert_string_equal(e.msg, "x.yml:8: run: get_profiler needs the shape to run in 'shapes'");
}

static void test_not_a_mapping(void **state)
{
	struct sample_config c;
	struct sp_err e;
	assert_int_equal(read_text("[1, 2]\n", &c, &e), -1);
	assert_non_null(strstr(e.msg, "x.yml"));
	assert_int_equal(read_text("{ \"kernel_name\": \n", &c, &e), -1);
	assert_true(strncmp(e.msg, "x.yml:", 6) == 0);
	assert_int_equal(sample_config_read("/nonexistent/x.yml", &c, &e), -1);
	assert_true(strncmp(e.msg, "/nonexistent/x.yml", 18) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_original_flow_style),
		cmocka_unit_test(test_block_style_and_defaults),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_single_shape_modes_need_shapes),
		cmocka_unit_test(test_not_a_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
