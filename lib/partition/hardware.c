#include "partition/hardware.h"

#include <dirent.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/num.h"
#include "formats/yaml_doc.h"

const char *const hardware_dtype_names[HARDWARE_NDTYPES + 1] = {
	[HARDWARE_FP32] = "fp32", [HARDWARE_TF32] = "tf32", [HARDWARE_FP16] = "fp16",
	[HARDWARE_BF16] = "bf16", [HARDWARE_INT8] = "int8", [HARDWARE_NDTYPES] = NULL};

int hardware_dtype_parse(const char *name)
{
	for (int d = 0; d < HARDWARE_NDTYPES; d++)
		if (!strcmp(hardware_dtype_names[d], name))
			return d;
	return -1;
}

const char *hardware_dtype_name(enum hardware_dtype d)
{
	return hardware_dtype_names[d];
}

void hardware_default(struct hardware_spec *hw)
{
	/* configs/hardware/h200.yaml */
	static const struct hardware_spec h200 = {
		.name = "NVIDIA H200 SXM",
		.peak_flops = {66.9e12, 494.7e12, 989.4e12, 989.4e12, 1978.9e12},
		.vector_flops = 66.9e12,
		.bandwidth = 4800e9,
		.l2_bytes = 60.0 * (1 << 20),
		.sms = 132,
		.launch_s = 3.7e-6,
	};
	*hw = h200;
}

/* A required positive number times 10^exp10, into *out. The scaling is
 * done in decimal (the number's shortest text with N added to its decimal
 * exponent, read back), so "66.9" TFLOP/s is the double nearest 66.9e12, exactly as the
 * built-in default writes it; 66.9 * 1e12 would be an ulp off, and a
 * report's numbers would differ from the default's in the last digit. */
static int positive(const struct yaml_doc_node *map, const char *key, int exp10, double *out,
		    struct sp_err *err)
{
	if (yaml_doc_require_double(map, key, out, err))
		return -1;
	if (!(*out > 0))
		return yaml_doc_fail(yaml_doc_get(map, key), err, "%s: expected a positive number", key);
	char num[NUM_DOUBLE_MAX], text[NUM_DOUBLE_MAX + 16];
	num_format_double(num, *out, 0);
	char *e = strchr(num, 'e'); /* "1.5e+20": its exponent joins exp10 */
	long exponent = exp10;
	if (e) {
		exponent += strtol(e + 1, NULL, 10);
		*e = '\0';
	}
	snprintf(text, sizeof text, "%se%ld", num, exponent);
	/* 1e300 TFLOP/s would be an infinite peak, 1e-320 us no launch cost. */
	double v = strtod(text, NULL);
	if (!isfinite(v) || v < DBL_MIN)
		return yaml_doc_fail(yaml_doc_get(map, key), err, "%s: %g is out of range", key, *out);
	*out = v;
	return 0;
}

static int hardware_load_file(const char *path, struct hardware_spec *hw,
			      struct sp_err *err);

#ifndef SPKIT_DATADIR
#define SPKIT_DATADIR "/usr/local/share/spkit"
#endif
#ifndef SPKIT_SOURCE_DIR
#define SPKIT_SOURCE_DIR "."
#endif

int hardware_dirs(const char *dirs[4])
{
	static char env[PATH_MAX], exe[PATH_MAX];
	int n = 0;
	const char *data = getenv("SPKIT_DATA_DIR");
	if (data && *data && snprintf(env, sizeof env, "%s/hardware", data) < (int)sizeof env)
		dirs[n++] = env;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash && (size_t)(slash - exe) + sizeof "/../share/spkit/hardware" < sizeof exe) {
			strcpy(slash, "/../share/spkit/hardware");
			dirs[n++] = exe;
		}
	}
	dirs[n++] = SPKIT_DATADIR "/hardware";
	dirs[n++] = SPKIT_SOURCE_DIR "/configs/hardware";
	return n;
}

static int is_name(const char *s)
{
	size_t n = strlen(s);
	return n && !strchr(s, '/') && strcmp(s, "-") &&
	       !(n > 5 && !strcmp(s + n - 5, ".yaml")) && !(n > 4 && !strcmp(s + n - 4, ".yml"));
}

/* The NAME.yaml files of the folders, as "a100, h100, h200" (each once). */
static void known_names(const char *const *dirs, int ndirs, char *out, size_t size)
{
	char *names[64];
	int count = 0;
	for (int d = 0; d < ndirs; d++) {
		DIR *dir = opendir(dirs[d]);
		for (struct dirent *e; dir && (e = readdir(dir));) {
			size_t n = strlen(e->d_name);
			if (n <= 5 || strcmp(e->d_name + n - 5, ".yaml") || count == 64)
				continue;
			int seen = 0;
			for (int i = 0; i < count && !seen; i++)
				seen = !strncmp(names[i], e->d_name, n - 5) && !names[i][n - 5];
			if (!seen && (names[count] = strndup(e->d_name, n - 5)))
				count++;
		}
		if (dir)
			closedir(dir);
	}
	for (int i = 0; i < count; i++) /* sorted, for a stable message */
		for (int j = i + 1; j < count; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < count; i++) {
		if (len < size)
			len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
		free(names[i]);
	}
}

int hardware_load_found(const char *path, struct hardware_spec *hw, const char **found,
			struct sp_err *err)
{
	static char file[PATH_MAX + 64];
	if (!is_name(path)) {
		if (found)
			*found = path;
		return hardware_load_file(path, hw, err);
	}
	const char *dirs[4];
	int n = hardware_dirs(dirs);
	for (int i = 0; i < n; i++) {
		snprintf(file, sizeof file, "%s/%s.yaml", dirs[i], path);
		if (access(file, R_OK) == 0) {
			if (found)
				*found = file;
			return hardware_load_file(file, hw, err);
		}
	}
	char names[256], where[3 * PATH_MAX];
	known_names(dirs, n, names, sizeof names);
	size_t len = 0;
	for (int i = 0; i < n && len < sizeof where; i++)
		len += (size_t)snprintf(where + len, sizeof where - len, "%s%s", i ? ", " : "", dirs[i]);
	return sp_fail(err, "%s: no such hardware: no %s.yaml in %s (known: %s)", path, path, where,
		       names[0] ? names : "none");
}

int hardware_load(const char *path, struct hardware_spec *hw, struct sp_err *err)
{
	return hardware_load_found(path, hw, NULL, err);
}

static int hardware_load_file(const char *path, struct hardware_spec *hw, struct sp_err *err)
{
	static const char *const keys[] = {"name", "sms", "memory_bandwidth_gbs", "l2_cache_mb",
					   "launch_overhead_us", "vector_tflops", "peak_tflops",
					   NULL};
	struct yaml_doc *doc;
	const struct yaml_doc_node *root, *peaks;
	const char *name;
	memset(hw, 0, sizeof *hw);
	if (yaml_doc_load(path, &doc, err))
		return -1;
	int rc = yaml_doc_root_map(doc, &root, err) ||
		 yaml_doc_check_keys(root, keys, "a hardware file", err) ||
		 yaml_doc_require_string(root, "name", &name, err) ||
		 yaml_doc_require_int(root, "sms", &hw->sms, err) ||
		 positive(root, "memory_bandwidth_gbs", 9, &hw->bandwidth, err) ||
		 positive(root, "l2_cache_mb", 0, &hw->l2_bytes, err) ||
		 positive(root, "launch_overhead_us", -6, &hw->launch_s, err) ||
		 yaml_doc_require(root, "peak_tflops", YDOC_MAPPING, &peaks, err) ||
		 yaml_doc_check_keys(peaks, hardware_dtype_names, "peak_tflops", err);
	for (int d = 0; !rc && d < HARDWARE_NDTYPES; d++)
		rc = positive(peaks, hardware_dtype_names[d], 12, &hw->peak_flops[d], err);
	if (!rc && yaml_doc_get(root, "vector_tflops"))
		rc = positive(root, "vector_tflops", 12, &hw->vector_flops, err);
	else
		hw->vector_flops = hw->peak_flops[HARDWARE_FP32];
	if (!rc && !isfinite(hw->l2_bytes *= 1 << 20)) /* MiB: exact in binary */
		rc = yaml_doc_fail(yaml_doc_get(root, "l2_cache_mb"), err,
				   "l2_cache_mb: out of range");
	if (!rc && hw->sms < 1)
		rc = yaml_doc_fail(yaml_doc_get(root, "sms"), err, "sms: expected a positive integer");
	if (!rc)
		snprintf(hw->name, sizeof hw->name, "%s", name);
	yaml_doc_free(doc);
	return rc ? -1 : 0;
}
