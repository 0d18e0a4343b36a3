#!/bin/bash
# The split example on the 2-H100 machine again with 4000 launches a chunk (4x the default's
# work per process, so device opening and uploads weigh less); run right after
# h100-multi-gpu-split.sh on the same warm machine, carrying .pack/h100/split and .gl.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=$(ls /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1) XDG_RUNTIME_DIR=/tmp
timeout 400 python3 .pack/h100/split/multi_gpu_split.py run --bin .pack/h100/split/split --runs 3 --repeat 4000 2>&1 | tee $OUT/multi_gpu_split_repeat4000.log | tail -8
