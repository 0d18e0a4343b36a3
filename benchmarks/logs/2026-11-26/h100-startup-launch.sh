#!/bin/bash
# H100 call B: start-up and launch overhead, then rgpu-primitives beside CUB and CuPy.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$OUT/startup.log"
timeout 200 python3 benchmarks/startup_and_launch_overhead.py "$P/startup" --backends cuda,ash,wgpu \
  --runs 5 --launches 2000 --rounds 7 >> "$OUT/startup.log" 2>&1
echo "exit $?" >> "$OUT/startup.log"
cp benchmarks/primitives_cupy.py benchmarks/primitives_cub.cu "$P/prim/"
(cd "$P/prim" && timeout 330 ./run.sh 16,20,24,26) > "$OUT/primitives.log" 2>&1
echo "exit $?" >> "$OUT/primitives.log"
tail -30 "$OUT/startup.log"; tail -60 "$OUT/primitives.log"
