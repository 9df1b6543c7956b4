#include "partition/hardware.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "formats/yaml_doc.h"

static const char *const dtype_names[HW_NDTYPES + 1] = {"fp32", "tf32", "fp16", "bf16", "int8",
							NULL};

int hw_dtype_parse(const char *name)
{
	for (int d = 0; d < HW_NDTYPES; d++)
		if (!strcmp(dtype_names[d], name))
			return d;
	return -1;
}

const char *hw_dtype_name(enum hw_dtype d)
{
	return dtype_names[d];
}

void hw_default(struct hw_spec *hw)
{
	/* configs/hardware/h200.yaml */
	static const struct hw_spec h200 = {
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

/* A required positive number, scaled into *out. */
static int positive(const struct yaml_doc_node *map, const char *key, double scale, double *out,
		    struct sp_err *err)
{
	if (yaml_doc_require_double(map, key, out, err))
		return -1;
	if (!(*out > 0))
		return yaml_doc_fail(yaml_doc_get(map, key), err, "%s: expected a positive number", key);
	/* 1e300 TFLOP/s would be an infinite peak, 1e-320 us no launch cost. */
	double v = *out * scale;
	if (!isfinite(v) || v < DBL_MIN)
		return yaml_doc_fail(yaml_doc_get(map, key), err, "%s: %g is out of range", key, *out);
	*out = v;
	return 0;
}

int hw_load(const char *path, struct hw_spec *hw, struct sp_err *err)
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
		 positive(root, "memory_bandwidth_gbs", 1e9, &hw->bandwidth, err) ||
		 positive(root, "l2_cache_mb", 1 << 20, &hw->l2_bytes, err) ||
		 positive(root, "launch_overhead_us", 1e-6, &hw->launch_s, err) ||
		 yaml_doc_require(root, "peak_tflops", YDOC_MAPPING, &peaks, err) ||
		 yaml_doc_check_keys(peaks, dtype_names, "peak_tflops", err);
	for (int d = 0; !rc && d < HW_NDTYPES; d++)
		rc = positive(peaks, dtype_names[d], 1e12, &hw->peak_flops[d], err);
	if (!rc && yaml_doc_get(root, "vector_tflops"))
		rc = positive(root, "vector_tflops", 1e12, &hw->vector_flops, err);
	else
		hw->vector_flops = hw->peak_flops[HW_FP32];
	if (!rc && hw->sms < 1)
		rc = yaml_doc_fail(yaml_doc_get(root, "sms"), err, "sms: expected a positive integer");
	if (!rc)
		snprintf(hw->name, sizeof hw->name, "%s", name);
	yaml_doc_free(doc);
	return rc ? -1 : 0;
}
