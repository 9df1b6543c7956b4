/* libFuzzer target for ksmm-tune's readers: the input's first byte picks
 * one ('p' a patterns file, 's' a tuning space, anything else a tuning
 * CSV), the rest is the file. Properties:
 * - no crash, leak or hang; every error names the file;
 * - a patterns file that reads holds only sizes and batches in range;
 * - a space that reads enumerates configurations whose values are in
 *   range, every index giving one;
 * - a tuning CSV that reads has ok rows with a positive time, and its rows
 *   written back by ksmm_result_write read back with the same keys. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksmm/ksmm_patterns.h"
#include "ksmm/ksmm_results.h"
#include "ksmm/ksmm_space.h"

#define NAME "fuzz.in"

static void check_message(const struct sp_err *e)
{
	if (strncmp(e->msg, NAME, strlen(NAME)))
		abort();
}

static void fuzz_patterns(const char *data, size_t size)
{
	struct ksmm_pattern_list l = {0};
	struct sp_err e;
	if (ksmm_patterns_read_buffer(data, size, NAME, &l, &e)) {
		check_message(&e);
	} else {
		for (size_t i = 0; i < l.n; i++) {
			const struct ksmm_pattern *p = &l.v[i].p;
			if (p->a < 1 || p->b < 1 || p->c < 1 || p->d < 1 || p->a > INT32_MAX ||
			    p->b > INT32_MAX || p->c > INT32_MAX || p->d > INT32_MAX ||
			    l.v[i].batch < 0 || l.v[i].batch > INT32_MAX)
				abort();
			if (ksmm_pattern_check(p, l.v[i].batch ? l.v[i].batch : 1, l.v[i].where, &e) &&
			    !e.msg[0])
				abort();
		}
	}
	ksmm_pattern_list_free(&l);
}

static void fuzz_space(const char *data, size_t size)
{
	struct ksmm_space s;
	struct sp_err e;
	if (ksmm_space_read_buffer(data, size, NAME, &s, &e)) {
		check_message(&e);
		return;
	}
	if (s.count == 0 || s.count > KSMM_SPACE_CONFIGS_MAX * 2ull)
		abort();
	uint64_t step = s.count / 64 + 1;
	for (uint64_t i = 0; i < s.count; i += step) {
		struct ksmm_config c;
		ksmm_space_at(&s, i, &c);
		for (int k = 0; k < KSMM_P_COUNT; k++) {
			int v = ksmm_config_get(&c, (enum ksmm_param)k);
			if (v < (k == KSMM_P_TF32 ? 0 : 1) || v > KSMM_SPACE_VALUE_MAX)
				abort();
		}
	}
	ksmm_space_free(&s);
}

static void fuzz_results(const char *data, size_t size)
{
	struct ksmm_result *r;
	size_t n;
	struct sp_err e;
	if (ksmm_results_read_buffer(data, size, NAME, &r, &n, &e)) {
		check_message(&e);
		return;
	}
	struct csv_writer w;
	/* Through a scratch file: the writer's whole-file mode needs a path. */
	char path[] = "/tmp/spkit_fuzz_ksmm.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	if (csv_writer_open(&w, path, ksmm_result_columns, KSMM_RESULT_COLS, &e))
		abort();
	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].status, "ok") == 0 && !(r[i].ms > 0))
			abort();
		ksmm_result_write(&w, &r[i]);
		if (csv_writer_end_row(&w, &e))
			abort();
	}
	if (csv_writer_commit(&w, &e))
		abort();
	struct ksmm_result *back;
	size_t m;
	if (ksmm_results_read(path, &back, &m, &e) || m != n)
		abort();
	for (size_t i = 0; i < n; i++) {
		struct ksmm_result_key a, b;
		ksmm_result_key(&r[i], &a);
		ksmm_result_key(&back[i], &b);
		for (int k = 0; k < KSMM_RESULT_KEYS; k++)
			if (strcmp(a.v[k], b.v[k]))
				abort();
		if (strcmp(r[i].status, back[i].status))
			abort();
	}
	unlink(path);
	free(back);
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const char *text = (const char *)data + 1;
	switch (data[0]) {
	case 'p': fuzz_patterns(text, size - 1); break;
	case 's': fuzz_space(text, size - 1); break;
	default: fuzz_results(text, size - 1); break;
	}
	return 0;
}
