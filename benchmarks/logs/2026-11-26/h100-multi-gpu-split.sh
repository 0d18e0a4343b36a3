#!/bin/bash
# 2-GPU call: the split example on 1 and 2 GPUs, cuda and ash.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
{ nvidia-smi -L; nvidia-smi topo -m; date -u +%FT%TZ
  timeout 400 python3 "$P/split/multi_gpu_split.py" run --bin "$P/split/split" --runs 3
  echo "exit $?"; date -u +%FT%TZ; } > "$OUT/multi_gpu_split.log" 2>&1
tail -30 "$OUT/multi_gpu_split.log"
