"""python3 roofline.py REPORT.json HARDWARE.yaml|default: recompute every op's
roofline time, max(flops / peak, bytes / bandwidth) + launch overhead, and its
bottleneck class from graph-partition's own FLOPs and bytes, with the peaks of
the hardware file (or the built-in H200's), and check the report's per-op
times and classes, the total, the distribution and the critical path's time
bounds; prints the number of ops checked and the classes seen."""
import json
import sys

rep = json.load(open(sys.argv[1]))
if sys.argv[2] == "default":
    hw = {"sms": 132, "memory_bandwidth_gbs": 4800, "launch_overhead_us": 3.7,
          "vector_tflops": 66.9,
          "peak_tflops": {"fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4,
                          "int8": 1978.9}}
else:  # the files are flat enough to read without a YAML library
    hw, section = {"peak_tflops": {}}, None
    for line in open(sys.argv[2]):
        line = line.split("#")[0].rstrip()
        if not line:
            continue
        key, _, value = line.strip().partition(":")
        if line.startswith("  "):
            hw[section][key] = float(value)
        elif value.strip():
            hw[key] = value.strip() if key == "name" else float(value)
        else:
            section = key
    hw.setdefault("vector_tflops", hw["peak_tflops"]["fp32"])
peak = hw["peak_tflops"][rep["dtype"]] * 1e12
vector = hw["vector_tflops"] * 1e12
bw = hw["memory_bandwidth_gbs"] * 1e9
launch = hw["launch_overhead_us"] * 1e-6
fixed = rep["thresholds"] == "fixed"

def close(a, b):
    return abs(a - b) <= 2e-5 * max(abs(a), abs(b)) + 1e-15

total, counts = 0.0, {}
for o in rep["ops"]:
    moved = o["input_bytes"] + o["output_bytes"] + o["weight_bytes"]
    p = peak if o["class"] == "matmul" else vector
    work = max(o["flops"] / p, moved / bw)
    if not o["kernel"] or o["stage"] < 0:
        want_t, want_c = 0.0, "none"
    else:
        want_t = work + launch
        ai = o["flops"] / moved if moved else 0.0
        if fixed:
            want_c = ("compute_bound" if ai > 40 else "balanced" if ai > 10 else
                      "memory_bound" if ai > 1 else "bandwidth_bound")
        elif launch > work:
            want_c = "latency_bound"
        else:
            want_c = "compute_bound" if ai >= p / bw else "memory_bound"
    assert close(o["time_us"] * 1e-6, want_t), (o["name"], o["time_us"], want_t)
    assert o["bottleneck"] == want_c, (o["name"], o["bottleneck"], want_c)
    total += want_t
    counts[want_c] = counts.get(want_c, 0) + 1
s = rep["summary"]
assert close(s["roofline_time_us"] * 1e-6, total), (s["roofline_time_us"], total)
assert all(s["bottlenecks"].get(c, 0) == n for c, n in counts.items()), (s["bottlenecks"], counts)
assert sum(s["bottlenecks"].values()) == len(rep["ops"])
# the critical path by time is at least the slowest op and at most the sum
assert max(o["time_us"] for o in rep["ops"]) <= s["critical_path_time_us"] * (1 + 1e-6)
assert s["critical_path_time_us"] * 1e-6 <= total * (1 + 1e-6)
print(len(rep["ops"]), " ".join(sorted(counts)))
