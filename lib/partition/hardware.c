#include "partition/hardware.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * done in decimal (the number's shortest text with "eN" appended, read
 * back), so "66.9" TFLOP/s is the double nearest 66.9e12, exactly as the
 * built-in default writes it; 66.9 * 1e12 would be an ulp off, and a
 * report's numbers would differ from the default's in the last digit. */
static int positive(const struct yaml_doc_node *map, const char *key, int exp10, double *out,
		    struct sp_err *err)
{
	if (yaml_doc_require_double(map, key, out, err))
		return -1;
	if (!(*out > 0))
		return yaml_doc_fail(yaml_doc_get(map, key), err, "%s: expected a positive number", key);
	char num[NUM_DOUBLE_MAX], text[NUM_DOUBLE_MAX + 8];
	snprintf(text, sizeof text, "%se%d", num_format_double(num, *out, 0), exp10);
	/* 1e300 TFLOP/s would be an infinite peak, 1e-320 us no launch cost. */
	double v = strtod(text, NULL);
	if (!isfinite(v) || v < DBL_MIN)
		return yaml_doc_fail(yaml_doc_get(map, key), err, "%s: %g is out of range", key, *out);
	*out = v;
	return 0;
}

int hardware_load(const char *path, struct hardware_spec *hw, struct sp_err *err)
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
