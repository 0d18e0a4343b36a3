#!/bin/bash
# GPU call 1 (2026-11-28): the looped sum's PTX variants beside its CUDA C++ twin, then the GPU tier.
set -u
OUT=${OUT:-/tmp/out}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$VK_DRIVER_FILES" ] || export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
{
for round in 1 2; do
  for v in base multiexit; do
    RGPU_BACKEND=cuda ./.device/loop/time_sum_$v | sed "s/^/round $round $v checked: /"
    UNCHECKED=1 RGPU_BACKEND=cuda ./.device/loop/time_sum_$v | sed "s/^/round $round $v load_unchecked: /"
  done
  python3 .device/loop/twin.py | sed "s/^/round $round /"
done
} 2>&1 | tee "$OUT/looped_sum_variants.log"
bash scripts/gpu-tier.sh "$OUT" 2>&1 | tail -40
