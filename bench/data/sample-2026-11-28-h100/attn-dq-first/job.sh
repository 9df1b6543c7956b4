set -eux
# branch attn-dq-first (.xfer-g/dqfirst): dQ += dS K and its reductions before dV/dK's mma
.xfer-g/dqfirst/gpu_test_sample_ops
for i in 1 2; do for b in $SPKIT_DEV .xfer-g/dqfirst; do echo "# attention, build $b"; $b/sample_ops_time fp16 own flash_atten_causal,flash_atten; done; done
echo "# norms, main"; $SPKIT_DEV/sample_ops_time fp16 own layernorm,RMSlayernorm
python3 scripts/bench-sample-torch.py --ops flash_atten_causal,flash_atten,layernorm,RMSlayernorm --reps 30
