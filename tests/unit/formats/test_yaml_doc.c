/* YAML documents (yaml_doc.h): node kinds and lines, anchors, aliases and
 * merge keys, the limits that stop alias bombs and deep nesting, syntax
 * errors with their lines, every getter's messages, and kernel-sample
 * configurations parsed end to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/err.h"
#include "testutil.h"
#include "formats/yaml_doc.h"

static struct yaml_doc *load(const char *text)
{
	struct yaml_doc *doc;
	struct sp_err e;
	if (yaml_doc_load_buffer(text, strlen(text), "x.yml", &doc, &e))
		fail_msg("%s", e.msg);
	return doc;
}

static void load_fails(const char *text, const char *msg)
{
	struct yaml_doc *doc = (struct yaml_doc *)1;
	struct sp_err e = {{0}};
	assert_int_equal(yaml_doc_load_buffer(text, strlen(text), "x.yml", &doc, &e), -1);
	assert_null(doc);
	assert_string_equal(e.msg, msg);
}

static void test_node_kinds(void **state)
{
	struct yaml_doc *doc = load("# a comment\n"
				"name: linear1\n"
				"shape: [1, 2,\n"
				"  3]\n"
				"nested:\n"
				"  - a\n"
				"  - {k: v}\n"
				"quoted: 'null'\n"
				"nothing:\n"
				"tilde: ~\n");
	const struct yaml_doc_node *root = yaml_doc_root(doc), *map;
	struct sp_err e;
	assert_int_equal(yaml_doc_root_map(doc, &map, &e), 0);
	assert_ptr_equal(map, root);
	assert_int_equal(yaml_doc_kind(root), YDOC_MAPPING);
	assert_int_equal(yaml_doc_line(root), 2);
	assert_int_equal(yaml_doc_map_len(root), 6);
	const char *keys[] = {"name", "shape", "nested", "quoted", "nothing", "tilde"};
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(yaml_doc_map_key_at(root, i), keys[i]);
	assert_null(yaml_doc_map_key_at(root, 6));

	const struct yaml_doc_node *name = yaml_doc_get(root, "name");
	assert_int_equal(yaml_doc_kind(name), YDOC_SCALAR);
	assert_string_equal(yaml_doc_text(name), "linear1");
	assert_int_equal(yaml_doc_line(name), 2);
	assert_string_equal(yaml_doc_file(name), "x.yml");
	assert_ptr_equal(yaml_doc_map_value_at(root, 0), name);

	const struct yaml_doc_node *shape = yaml_doc_get(root, "shape");
	assert_int_equal(yaml_doc_kind(shape), YDOC_SEQUENCE);
	assert_int_equal(yaml_doc_seq_len(shape), 3);
	assert_string_equal(yaml_doc_text(yaml_doc_seq_at(shape, 2)), "3");
	assert_int_equal(yaml_doc_line(yaml_doc_seq_at(shape, 2)), 4);
	assert_null(yaml_doc_seq_at(shape, 3));
	assert_null(yaml_doc_text(shape));

	const struct yaml_doc_node *nested = yaml_doc_get(root, "nested");
	assert_int_equal(yaml_doc_line(nested), 6);
	const struct yaml_doc_node *kv = yaml_doc_seq_at(nested, 1);
	assert_int_equal(yaml_doc_kind(kv), YDOC_MAPPING);
	assert_string_equal(yaml_doc_text(yaml_doc_get(kv, "k")), "v");
	assert_int_equal(yaml_doc_line(yaml_doc_get(kv, "k")), 7);

	assert_false(yaml_doc_is_null(yaml_doc_get(root, "quoted")));
	assert_true(yaml_doc_is_null(yaml_doc_get(root, "nothing")));
	assert_true(yaml_doc_is_null(yaml_doc_get(root, "tilde")));
	assert_null(yaml_doc_get(root, "absent"));
	assert_null(yaml_doc_get(shape, "name")); /* not a mapping */
	assert_int_equal(yaml_doc_map_len(shape), 0);
	assert_int_equal(yaml_doc_seq_len(root), 0);
	yaml_doc_free(doc);

	/* Empty documents have no root; the top must be a mapping when asked. */
	doc = load("# nothing here\n");
	assert_null(yaml_doc_root(doc));
	assert_int_equal(yaml_doc_root_map(doc, &map, &e), -1);
	assert_string_equal(e.msg, "x.yml: empty document");
	yaml_doc_free(doc);
	doc = load("\n- 1\n- 2\n");
	assert_int_equal(yaml_doc_root_map(doc, &map, &e), -1);
	assert_string_equal(e.msg, "x.yml:2: expected a mapping at the top, found a sequence");
	yaml_doc_free(doc);
	assert_int_equal(yaml_doc_load_buffer(NULL, 0, "x.yml", &doc, &e), 0);
	assert_null(yaml_doc_root(doc));
	yaml_doc_free(doc);
	doc = load("42");
	assert_string_equal(yaml_doc_text(yaml_doc_root(doc)), "42");
	yaml_doc_free(doc);
}

static void test_aliases(void **state)
{
	struct yaml_doc *doc = load("shape: &s [1, 2]\n"
				"name: &n linear\n"
				"again: *s\n"
				"also: *n\n"
				"*n : as a key\n");
	const struct yaml_doc_node *root = yaml_doc_root(doc);
	assert_ptr_equal(yaml_doc_get(root, "again"), yaml_doc_get(root, "shape"));
	assert_string_equal(yaml_doc_text(yaml_doc_get(root, "also")), "linear");
	assert_string_equal(yaml_doc_text(yaml_doc_get(root, "linear")), "as a key");
	yaml_doc_free(doc);

	/* A later anchor of the same name replaces the earlier. */
	doc = load("a: &x 1\nb: &x 2\nc: *x\n");
	assert_string_equal(yaml_doc_text(yaml_doc_get(yaml_doc_root(doc), "c")), "2");
	yaml_doc_free(doc);

	load_fails("a: 1\nb: *nope\n", "x.yml:2: unknown alias '*nope'");
	/* A node cannot contain itself: its anchor is named when it ends. */
	load_fails("a: &x\n  - 1\n  - *x\n", "x.yml:3: unknown alias '*x'");
	load_fails("k: &m {a: 1}\n*m : v\n", "x.yml:1: a mapping key must be a scalar");
}

static void test_merge_keys(void **state)
{
	struct yaml_doc *doc = load("base: &base {wait: 2, warmup: 2, active: 10}\n"
				"fast: &fast {active: 3, run: get_one}\n"
				"one:\n"
				"  op: gelu\n"
				"  <<: *base\n"
				"  warmup: 5\n"
				"two:\n"
				"  <<: [*fast, *base]\n"
				"  op: bmm\n"
				"three: {<<: {x: 1}, y: 2}\n");
	const struct yaml_doc_node *root = yaml_doc_root(doc);
	struct sp_err e;
	int64_t v;

	/* Own keys win; merged ones stand where the << stood, in their order. */
	const struct yaml_doc_node *one = yaml_doc_get(root, "one");
	const char *one_keys[] = {"op", "wait", "active", "warmup"};
	assert_int_equal(yaml_doc_map_len(one), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(yaml_doc_map_key_at(one, i), one_keys[i]);
	assert_int_equal(yaml_doc_require_int(one, "warmup", &v, &e), 0);
	assert_int_equal(v, 5);
	assert_int_equal(yaml_doc_require_int(one, "active", &v, &e), 0);
	assert_int_equal(v, 10);
	assert_null(yaml_doc_get(one, "<<"));

	/* Of several merged mappings the earlier wins. */
	const struct yaml_doc_node *two = yaml_doc_get(root, "two");
	assert_int_equal(yaml_doc_map_len(two), 5);
	assert_int_equal(yaml_doc_require_int(two, "active", &v, &e), 0);
	assert_int_equal(v, 3);
	assert_string_equal(yaml_doc_text(yaml_doc_get(two, "run")), "get_one");
	assert_string_equal(yaml_doc_map_key_at(two, 4), "op");

	const struct yaml_doc_node *three = yaml_doc_get(root, "three");
	assert_int_equal(yaml_doc_map_len(three), 2);
	assert_string_equal(yaml_doc_map_key_at(three, 0), "x");
	yaml_doc_free(doc);

	/* A quoted "<<" is an ordinary key. */
	doc = load("'<<': 1\n");
	assert_string_equal(yaml_doc_text(yaml_doc_get(yaml_doc_root(doc), "<<")), "1");
	yaml_doc_free(doc);

	load_fails("a: &a 1\nb:\n  <<: *a\n", "x.yml:3: '<<' merges mappings, found a scalar");
	load_fails("a: &a [1]\nb:\n  <<: [*a]\n",
		   "x.yml:3: '<<' merges mappings, found a sequence");
	load_fails("a: {x: 1}\nb:\n  <<: {y: 1}\n  <<: {z: 1}\n",
		   "x.yml:4: duplicate key '<<' (first at line 3)");
}

static void test_duplicate_keys(void **state)
{
	load_fails("operator: gelu\nwait: 2\n\noperator: bmm\n",
		   "x.yml:4: duplicate key 'operator' (first at line 1)");
	/* Keys from the file as they are: the program escapes the line it
	 * prints. */
	load_fails("\"a\\nb\": 1\n\"a\\nb\": 2\n",
		   "x.yml:2: duplicate key 'a\nb' (first at line 1)");
	load_fails("a:\n  - {x: 1,\n     x: 2}\n", "x.yml:3: duplicate key 'x' (first at line 2)");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Billion laughs: nine levels of ten aliases each would be 10^9 nodes. */
static void test_alias_bomb(void **state)
{
	struct buf b = {0};
	const char *lol = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
	buf_add(&b, lol, strlen(lol));
	for (char c = 'b'; c <= 'i'; c++) {
		char line[128];
		int n = snprintf(line, sizeof line,
				 "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c,
				 c, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1,
				 c - 1);
		buf_add(&b, line, (size_t)n);
	}
	buf_addc(&b, '\0');
	double t0 = now();
	load_fails(b.data, "x.yml:6: document expands to more than 1000000 nodes (aliases?)");
	assert_true(now() - t0 < 1);
	buf_free(&b);

	/* One big list of aliases to a large node fails the same way. */
	struct yaml_doc *doc;
	struct sp_err e;
	b = (struct buf){0};
	buf_add(&b, "big: &big [", 11);
	for (int i = 0; i < 2000; i++)
		buf_add(&b, "x, ", 3);
	buf_add(&b, "x]\nmany: [", 10);
	for (int i = 0; i < 1000; i++)
		buf_add(&b, "*big, ", 6);
	buf_add(&b, "*big]\n", 6);
	assert_int_equal(yaml_doc_load_buffer(b.data, b.len, "x.yml", &doc, &e), -1);
	assert_non_null(strstr(e.msg, "document expands to more than 1000000 nodes"));
	buf_free(&b);
}

static void test_depth(void **state)
{
	struct buf b = {0};
	for (int i = 0; i < 1000; i++)
		buf_addc(&b, '[');
	buf_addc(&b, '\0');
	load_fails(b.data, "x.yml:1: nested more than 64 levels deep");
	buf_free(&b);

	/* Aliases stack nodes deeper than the text does. */
	b = (struct buf){0};
	buf_add(&b, "a: &a ", 6);
	for (int i = 0; i < 40; i++)
		buf_addc(&b, '[');
	for (int i = 0; i < 40; i++)
		buf_addc(&b, ']');
	buf_add(&b, "\nb: ", 4);
	for (int i = 0; i < 30; i++)
		buf_addc(&b, '[');
	buf_add(&b, "*a", 2);
	for (int i = 0; i < 30; i++)
		buf_addc(&b, ']');
	buf_add(&b, "\n", 2);
	load_fails(b.data, "x.yml:2: nested more than 64 levels deep");
	buf_free(&b);
}

static void test_syntax_errors(void **state)
{
	load_fails("operator: linear\ncolumns: [a, b]\noops\nwait: 2\n",
		   "x.yml:4: syntax error: could not find expected ':' "
		   "(while scanning a simple key at line 3)");
	load_fails("a: 1\n  b: 2\n",
		   "x.yml:2: syntax error: mapping values are not allowed in this context");
	load_fails("a: 1\nb: [1, 2\nc: 3\n",
		   "x.yml:3: syntax error: did not find expected ',' or ']' "
		   "(while parsing a flow sequence at line 2)");
	load_fails("a: 1\nb: \"x\xff\"\n", "x.yml:2: syntax error: invalid leading UTF-8 octet");
	load_fails("a: 1\n---\nb: 2\n", "x.yml:2: more than one document");

	struct yaml_doc *doc;
	struct sp_err e;
	assert_int_equal(yaml_doc_load(test_path("absent.yml"), &doc, &e), -1);
	assert_non_null(strstr(e.msg, "absent.yml: cannot open: No such file or directory"));
}

/* Line numbers are in the messages the tests expect. */
static const char getters_yml[] = "n: 12\n"
				  "neg: -3\n"
				  "frac: 1.5\n"
				  "word: abc\n"
				  "huge: 99999999999999999999\n"
				  "x: 1e-3\n" /* line 6 */
				  "inf: .inf\n"
				  "nan: .nan\n"
				  "yes: Yes\n"
				  "off: OFF\n"
				  "maybe: maybe\n" /* line 11 */
				  "null: ~\n"
				  "seq: [1, 2, x]\n"
				  "map: {a: 1}\n"
				  "one: 7\n"
				  "names: [a, 'b c', 3]\n" /* line 16 */
				  "holes: [a, ~]\n"
				  "deep:\n"
				  "  - 1\n"
				  "  - [2]\n";

/* The call fails with exactly this message (in the caller's e). */
#define assert_fails(call, want)                    \
	do {                                        \
		assert_int_equal((call), -1);       \
		assert_string_equal(e.msg, (want)); \
	} while (0)

static void test_getters(void **state)
{
	struct yaml_doc *doc = load(getters_yml);
	const struct yaml_doc_node *m = yaml_doc_root(doc);
	struct sp_err e;
	int64_t i;
	double d;
	int b;
	const char *s;

	assert_int_equal(yaml_doc_int(m, "n", 0, &i, &e), 0);
	assert_int_equal(i, 12);
	assert_int_equal(yaml_doc_require_int(m, "neg", &i, &e), 0);
	assert_int_equal(i, -3);
	assert_int_equal(yaml_doc_int(m, "absent", 77, &i, &e), 0);
	assert_int_equal(i, 77);
	assert_int_equal(yaml_doc_int(m, "null", 78, &i, &e), 0);
	assert_int_equal(i, 78);
	assert_int_equal(yaml_doc_int(NULL, "n", 79, &i, &e), 0); /* an absent section */
	assert_int_equal(i, 79);
	assert_fails(yaml_doc_int(m, "frac", 0, &i, &e),
		     "x.yml:3: frac: expected an integer, found '1.5'");
	assert_fails(yaml_doc_require_int(m, "word", &i, &e),
		     "x.yml:4: word: expected an integer, found 'abc'");
	assert_fails(yaml_doc_int(m, "huge", 0, &i, &e),
		     "x.yml:5: huge: expected a 64-bit integer, found '99999999999999999999'");
	assert_fails(yaml_doc_require_int(m, "absent", &i, &e), "x.yml:1: missing key 'absent'");
	assert_fails(yaml_doc_require_int(m, "null", &i, &e),
		     "x.yml:12: null: expected an integer, found null");
	assert_fails(yaml_doc_int(m, "seq", 0, &i, &e),
		     "x.yml:13: seq: expected an integer, found a sequence");
	assert_fails(yaml_doc_int(yaml_doc_get(m, "seq"), "a", 0, &i, &e),
		     "x.yml:13: expected a mapping with key 'a', found a sequence");
	assert_fails(yaml_doc_require_int(NULL, "n", &i, &e), "missing key 'n'");
	assert_fails(yaml_doc_int(m, "names", 0, &i, &e),
		     "x.yml:16: names: expected an integer, found a sequence");
	assert_fails(yaml_doc_as_int(yaml_doc_seq_at(yaml_doc_get(m, "names"), 1), "names[1]", &i, &e),
		     "x.yml:16: names[1]: expected an integer, found 'b c'");

	assert_int_equal(yaml_doc_double(m, "x", 0, &d, &e), 0);
	assert_true(d == 1e-3);
	assert_int_equal(yaml_doc_require_double(m, "n", &d, &e), 0);
	assert_true(d == 12);
	assert_int_equal(yaml_doc_double(m, "absent", 0.5, &d, &e), 0);
	assert_true(d == 0.5);
	assert_fails(yaml_doc_double(m, "inf", 0, &d, &e),
		     "x.yml:7: inf: expected a finite number, found '.inf'");
	assert_fails(yaml_doc_require_double(m, "nan", &d, &e),
		     "x.yml:8: nan: expected a finite number, found '.nan'");
	assert_fails(yaml_doc_require_double(m, "word", &d, &e),
		     "x.yml:4: word: expected a finite number, found 'abc'");
	assert_int_equal(yaml_doc_as_double(yaml_doc_get(m, "inf"), "inf", 1, &d, &e), 0);
	assert_true(isinf(d));
	assert_int_equal(yaml_doc_as_double(yaml_doc_get(m, "nan"), "nan", 1, &d, &e), 0);
	assert_true(isnan(d));
	assert_fails(yaml_doc_as_double(yaml_doc_get(m, "word"), "word", 1, &d, &e),
		     "x.yml:4: word: expected a number, found 'abc'");

	assert_int_equal(yaml_doc_require_bool(m, "yes", &b, &e), 0);
	assert_int_equal(b, 1);
	assert_int_equal(yaml_doc_bool(m, "off", 1, &b, &e), 0);
	assert_int_equal(b, 0);
	assert_int_equal(yaml_doc_bool(m, "absent", 1, &b, &e), 0);
	assert_int_equal(b, 1);
	assert_fails(yaml_doc_bool(m, "maybe", 0, &b, &e),
		     "x.yml:11: maybe: expected true/false, yes/no or on/off, found 'maybe'");
	assert_fails(yaml_doc_require_bool(m, "absent", &b, &e), "x.yml:1: missing key 'absent'");

	assert_int_equal(yaml_doc_require_string(m, "word", &s, &e), 0);
	assert_string_equal(s, "abc");
	assert_int_equal(yaml_doc_string(m, "n", NULL, &s, &e), 0);
	assert_string_equal(s, "12");
	assert_int_equal(yaml_doc_string(m, "null", "dflt", &s, &e), 0);
	assert_string_equal(s, "dflt");
	assert_fails(yaml_doc_string(m, "map", NULL, &s, &e),
		     "x.yml:14: map: expected a string, found a mapping");
	assert_fails(yaml_doc_require_string(m, "null", &s, &e),
		     "x.yml:12: null: expected a string, found null");
	assert_fails(yaml_doc_require_string(m, "absent", &s, &e), "x.yml:1: missing key 'absent'");

	const struct yaml_doc_node *node;
	assert_int_equal(yaml_doc_require(m, "map", YDOC_MAPPING, &node, &e), 0);
	assert_ptr_equal(node, yaml_doc_get(m, "map"));
	assert_fails(yaml_doc_require(m, "seq", YDOC_MAPPING, &node, &e),
		     "x.yml:13: seq: expected a mapping, found a sequence");
	assert_fails(yaml_doc_require(m, "null", YDOC_SCALAR, &node, &e),
		     "x.yml:12: null: expected a scalar, found null");
	assert_fails(yaml_doc_require(m, "gone", YDOC_SEQUENCE, &node, &e),
		     "x.yml:1: missing key 'gone'");
	yaml_doc_free(doc);
}

static void test_list_getters(void **state)
{
	struct yaml_doc *doc = load(getters_yml);
	const struct yaml_doc_node *m = yaml_doc_root(doc);
	struct sp_err e;
	int64_t *ints = NULL;
	const char **strs = NULL;
	size_t n;

	assert_int_equal(yaml_doc_int_list(m, "one", &ints, &n, &e), 0); /* a scalar is a list of one */
	assert_int_equal(n, 1);
	assert_int_equal(ints[0], 7);
	free(ints);
	assert_int_equal(yaml_doc_require_int_list(m, "deep", &ints, &n, &e), -1);
	assert_string_equal(e.msg, "x.yml:20: deep[1]: expected an integer, found a sequence");
	assert_null(ints);
	assert_fails(yaml_doc_int_list(m, "seq", &ints, &n, &e),
		     "x.yml:13: seq[2]: expected an integer, found 'x'");
	assert_fails(yaml_doc_int_list(m, "map", &ints, &n, &e),
		     "x.yml:14: map: expected a list of integers, found a mapping");
	assert_int_equal(yaml_doc_int_list(m, "absent", &ints, &n, &e), 0);
	assert_null(ints);
	assert_int_equal(n, 0);
	assert_int_equal(yaml_doc_int_list(m, "null", &ints, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_fails(yaml_doc_require_int_list(m, "absent", &ints, &n, &e),
		     "x.yml:1: missing key 'absent'");
	assert_fails(yaml_doc_require_int_list(m, "null", &ints, &n, &e),
		     "x.yml:12: null: expected a list of integers, found null");

	assert_int_equal(yaml_doc_require_string_list(m, "names", &strs, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_string_equal(strs[1], "b c");
	assert_string_equal(strs[2], "3");
	free(strs);
	assert_fails(yaml_doc_string_list(m, "holes", &strs, &n, &e),
		     "x.yml:17: holes[1]: expected a string, found null");
	assert_int_equal(yaml_doc_string_list(m, "word", &strs, &n, &e), 0);
	assert_int_equal(n, 1);
	free(strs);
	assert_fails(yaml_doc_require_string_list(m, "absent", &strs, &n, &e),
		     "x.yml:1: missing key 'absent'");
	yaml_doc_free(doc);
}

/* kernel-sample's reading of a sampling config, as the program would do it. */
struct sampling {
	const char *op, *run;
	const char **columns, **operators;
	int64_t *starts, *steps, *ends, *warmup_shapes;
	size_t ncolumns, nshape, nops, nwarm;
	int64_t first_n, wait, warmup, active;
};

static int read_sampling(const char *path, struct yaml_doc **doc, struct sampling *c,
			 struct sp_err *err)
{
	const struct yaml_doc_node *m;
	size_t n1, n2;
	memset(c, 0, sizeof *c);
	if (yaml_doc_load(path, doc, err) || yaml_doc_root_map(*doc, &m, err) ||
	    yaml_doc_require_string(m, "kernel_name", &c->op, err) ||
	    yaml_doc_require_string_list(m, "columns_name", &c->columns, &c->ncolumns, err) ||
	    yaml_doc_require_int(m, "first_n_column", &c->first_n, err) ||
	    yaml_doc_require_int_list(m, "starts", &c->starts, &c->nshape, err) ||
	    yaml_doc_require_int_list(m, "steps", &c->steps, &n1, err) ||
	    yaml_doc_require_int_list(m, "ends", &c->ends, &n2, err) ||
	    yaml_doc_require_string_list(m, "operators", &c->operators, &c->nops, err) ||
	    yaml_doc_int_list(m, "warmup_shapes", &c->warmup_shapes, &c->nwarm, err) ||
	    yaml_doc_int(m, "wait", 2, &c->wait, err) || yaml_doc_int(m, "warmup", 2, &c->warmup, err) ||
	    yaml_doc_int(m, "active", 10, &c->active, err) ||
	    yaml_doc_string(m, "run", "get_all", &c->run, err))
		return -1;
	if (n1 != c->nshape || n2 != c->nshape || c->nops != c->nshape ||
	    (int64_t)c->nshape != c->first_n)
		return sp_fail(err,
			       "%s:%zu: starts, steps, ends and operators need first_n_column "
			       "entries each",
			       path, yaml_doc_line(yaml_doc_get(m, "starts")));
	for (size_t i = 0; i < c->nops; i++)
		if (strcmp(c->operators[i], "mul") && strcmp(c->operators[i], "add"))
			return sp_fail(err,
				       "%s:%zu: operators[%zu]: expected mul or add, found '%s'",
				       path, yaml_doc_line(yaml_doc_seq_at(yaml_doc_get(m, "operators"), i)), i,
				       c->operators[i]);
	return 0;
}

static void free_sampling(struct sampling *c)
{
	free(c->columns);
	free(c->operators);
	free(c->starts);
	free(c->steps);
	free(c->ends);
	free(c->warmup_shapes);
}

/* estimate-train-time's collect/flash_atten.yml, as users have it: JSON-like flow
 * style with comments. */
static const char seed_config[] =
	"{\n"
	"  # Module and function to profile\n"
	"  \"module_name\": \"target_functions\",\n"
	"  \"kernel_name\": \"flash_atten\",\n"
	"  \"function_name\": \"flash_atten\",\n"
	"\n"
	"  # Output CSV columns\n"
	"  \"columns_name\": ['mp', 'b', 'h', 'l', 'dim', 'F_dur(us)', 'B_dur(us)'],\n"
	"\n"
	"  # Profiler trace targets for extraction\n"
	"  \"targets\": [\n"
	"    ['built-in method apply of FunctionMeta object', 'FlashAttnFunc'],\n"
	"    ['autograd::engine::evaluate_function: FlashAttnFuncBackward']\n"
	"  ],\n"
	"\n"
	"  # Number of shape parameters\n"
	"  \"first_n_column\": 5,\n"
	"\n"
	"  # Parameter sweep ranges\n"
	"  # mp, b, h, l, dim\n"
	"  \"starts\": [1, 4, 16, 1024, 2048],\n"
	"  \"steps\": [2, 2, 8, 512, 512],\n"
	"  \"ends\": [16, 8, 80, 5120, 8192],\n"
	"  \"operators\": ['mul', 'mul', 'add', 'add', 'add'],\n"
	"\n"
	"  # Warmup shapes (small, fast)\n"
	"  \"warmup_shapes\": [1, 4, 16, 1024, 2048],\n"
	"\n"
	"  # Profiler settings\n"
	"  \"wait\": 2,      # Iterations before profiling\n"
	"  \"warmup\": 2,    # Warmup iterations\n"
	"  \"active\": 10,   # Profiled iterations\n"
	"\n"
	"  # Test/debug shapes\n"
	"  \"shapes\": [1, 4, 16, 1024, 2048],\n"
	"\n"
	"  # Run mode: get_all, get_one, get_profiler, run_function\n"
	"  \"run\": \"get_all\"\n"
	"}\n";

/* The same in block style, sharing profiler settings through a merge key,
 * as a family of configs would. */
static const char block_config[] = "# kernel-sample: flash attention, the full sweep\n"
				   "profiler: &profiler\n"
				   "  wait: 2\n"
				   "  warmup: 2\n"
				   "  active: 10\n"
				   "  run: get_all\n"
				   "\n"
				   "kernel_name: flash_atten\n"
				   "<<: *profiler\n"
				   "active: 20\n"
				   "columns_name: [mp, b, h, l, dim, F_dur(us), B_dur(us)]\n"
				   "first_n_column: 5\n"
				   "#        mp  b   h   l     dim\n"
				   "starts: [1,  4,  16, 1024, 2048]\n"
				   "steps:  [2,  2,  8,  512,  512]\n"
				   "ends:   [16, 8,  80, 5120, 8192]\n"
				   "operators: [mul, mul, add, add, add]\n"
				   "warmup_shapes: [1, 4, 16, 1024, 2048]\n";

static void test_sampling_config(void **state)
{
	const char *texts[] = {seed_config, block_config};
	for (int k = 0; k < 2; k++) {
		const char *path = test_path("flash_atten.yml");
		test_spit(path, texts[k], strlen(texts[k]));
		struct yaml_doc *doc;
		struct sampling c;
		struct sp_err e;
		if (read_sampling(path, &doc, &c, &e))
			fail_msg("%s", e.msg);
		assert_string_equal(c.op, "flash_atten");
		assert_int_equal(c.ncolumns, 7);
		assert_string_equal(c.columns[5], "F_dur(us)");
		assert_int_equal(c.nshape, 5);
		int64_t starts[] = {1, 4, 16, 1024, 2048}, ends[] = {16, 8, 80, 5120, 8192};
		assert_memory_equal(c.starts, starts, sizeof starts);
		assert_memory_equal(c.ends, ends, sizeof ends);
		assert_int_equal(c.steps[3], 512);
		assert_string_equal(c.operators[0], "mul");
		assert_string_equal(c.operators[4], "add");
		assert_int_equal(c.nwarm, 5);
		assert_int_equal(c.wait, 2);
		assert_int_equal(c.warmup, 2);
		assert_int_equal(c.active, k == 0 ? 10 : 20);
		assert_string_equal(c.run, "get_all");
		free_sampling(&c);
		yaml_doc_free(doc);
	}

	/* Mistakes users make, each reported at its line. */
	struct {
		const char *from, *to, *msg;
	} edits[] = {
		{"steps:  [2,  2,  8,  512,  512]", "steps:  [2,  2,  8,  512]",
		 "flash_atten.yml:14: starts, steps, ends and operators need first_n_column "
		 "entries each"},
		{"ends:   [16, 8,  80, 5120, 8192]", "ends:   [16, 8,  80, 5k, 8192]",
		 "flash_atten.yml:16: ends[3]: expected an integer, found '5k'"},
		{"operators: [mul, mul, add, add, add]", "operators: [mul, mul, add,\n add, pow]",
		 "flash_atten.yml:18: operators[4]: expected mul or add, found 'pow'"},
		{"kernel_name: flash_atten\n", "", "flash_atten.yml:2: missing key 'kernel_name'"},
		{"active: 20\n", "active: 20\nactive: 30\n",
		 "flash_atten.yml:11: duplicate key 'active' (first at line 10)"},
		{"first_n_column: 5", "first_n_column 5\nx: 1",
		 "flash_atten.yml:13: syntax error: could not find expected ':' "
		 "(while scanning a simple key at line 12)"},
	};
	for (size_t k = 0; k < sizeof edits / sizeof *edits; k++) {
		struct buf b = {0};
		const char *at = strstr(block_config, edits[k].from);
		assert_non_null(at);
		buf_add(&b, block_config, (size_t)(at - block_config));
		buf_add(&b, edits[k].to, strlen(edits[k].to));
		buf_add(&b, at + strlen(edits[k].from), strlen(at + strlen(edits[k].from)) + 1);
		const char *path = test_path("flash_atten.yml");
		test_spit(path, b.data, b.len - 1);
		buf_free(&b);
		struct yaml_doc *doc = NULL;
		struct sampling c;
		struct sp_err e;
		assert_int_equal(read_sampling(path, &doc, &c, &e), -1);
		assert_string_equal(strstr(e.msg, "flash_atten.yml"), edits[k].msg);
		free_sampling(&c);
		yaml_doc_free(doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_kinds),    cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_merge_keys),    cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_alias_bomb),    cmocka_unit_test(test_depth),
		cmocka_unit_test(test_syntax_errors), cmocka_unit_test(test_getters),
		cmocka_unit_test(test_list_getters),  cmocka_unit_test(test_sampling_config),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
