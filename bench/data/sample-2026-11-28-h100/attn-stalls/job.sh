set -eux
# where the causal backward at b8 h64 l4096 waits: ncu warp-state stalls of ours and FA2's
N="ncu --clock-control none --section WarpStateStats --section SchedulerStats --section SourceCounters --launch-count 1"
bin/kernel-sample run configs/kernel_sampling/test/flash_atten_causal.yml --device cuda --attention own --run run_function --shape 1,8,64,4096,8192 --precision fp16 --output-dir /tmp/ks 2>&1 | tail -2 || true
$N -k regex:'attention_backward$' -o $R/stall-own bin/kernel-sample run configs/kernel_sampling/test/flash_atten_causal.yml --device cuda --attention own --run run_function --shape 1,8,64,4096,8192 --precision fp16 --output-dir /tmp/ks > /dev/null
cat > /tmp/fa2.py <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(8, 64, 4096, 128, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(2):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(torch.randn_like(o))
torch.cuda.synchronize()
PY
$N -k regex:'flash_bwd_dq_dk_dv' -o $R/stall-fa2 python3 /tmp/fa2.py
for f in $R/stall-*.ncu-rep; do
	ncu --import $f --page details > ${f%.ncu-rep}.txt
	ncu --import $f --page raw > ${f%.ncu-rep}.raw.txt
	grep -E "stalled.*_per_warp_active|Duration|Cycles Per Issued" ${f%.ncu-rep}.raw.txt | head -50
done
