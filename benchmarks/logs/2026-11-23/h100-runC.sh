#!/bin/bash
# Device run C: parity of both sorts with every backend required (cuda PTX from nvptx, wgpu/ash
# SPIR-V from rust-gpu 0.11), end-to-end --bench on cuda with 16 MiB staging chunks.
set -u
exec > >(tee "$OUT/runC.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.device/packC.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack/rustgpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== parity (rust-gpu SPIR-V, nvptx PTX), RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
cd $D && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 400 ./parity --test-threads 1 2>&1 | grep -Ev "^$" | tail -40
echo "parity rc=${PIPESTATUS[0]}"
echo "== end to end (--bench: upload, sort, download), cuda, 2^24 and 2^26, 3 rounds"
for rep in 1 2 3; do
  for a in radix bitonic; do for t in u32 f32; do for n in 16777216 67108864; do
    echo "$a $t $n: $($D/sortdemo --backend cuda --algorithm $a --type $t --len $n --bench --json 2>&1 | tail -1)"
  done; done; done
done
echo "== device time, bench example, cuda and rust-gpu ash/wgpu"
BENCH_BACKENDS=cuda,ash,wgpu BENCH_SIZES=16,20,24,26 timeout 200 $D/bench 2>&1 | tail -40
