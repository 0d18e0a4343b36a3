#!/bin/bash
# Issue 19, run 10: the memory model. rust-gpu 0.11 declares `OpMemoryModel Logical Vulkan`
# (capability VulkanMemoryModel); glslang's twin declares GLSL450. The modules' barriers
# (AcquireRelease|WorkgroupMemory) and atomics (no semantics) mean the same under both.
#  cur    = main's demo (rust-gpu), pack of run 9 (benchmarks/issue19_pack6.sh)
#  glmm   = cur's module with only the memory model changed to GLSL450 (capability removed),
#           spirv-as + spirv-val, embedded with --kernel-artifact
#  glsl   = the GLSL twin
#  twinvk = the twin with only the memory model changed to Vulkan (+ VulkanMemoryModel and
#           VulkanMemoryModelDeviceScope: glslang's atomics use Device scope)
set -u
exec > >(tee "$OUT/issue19-run10.log") 2>&1
R=$PWD
rm -rf /tmp/pk; mkdir -p /tmp/pk; (cd /tmp/pk && tar -xJf "$R/.bench25/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
for round in 1 2; do for v in cur glmm glsl twinvk; do for a in radix bitonic; do
  BENCH_BACKENDS=ash BENCH_ALGORITHMS=$a BENCH_SIZES=20,22,24,26 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/r$round $v /"
done; done; done
for v in cur glmm; do
  BENCH_BACKENDS=wgpu BENCH_ALGORITHMS=radix,bitonic BENCH_SIZES=24 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/$v /"
done
echo "== each radix kernel's share at 2^24, and statistics"
for v in cur glmm glsl twinvk; do
  BENCH_PHASES=1 BENCH_STATS=1 BENCH_BACKENDS=ash BENCH_ALGORITHMS=radix BENCH_SIZES=24 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "phases|stats|rror|panick" | sed -E "s/: \[CS.*//; s/^/$v /"
done
BENCH_BACKENDS=cuda BENCH_ALGORITHMS=radix,bitonic BENCH_SIZES=20,22,24,26 timeout 120 /tmp/pk/cur/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/cur /"
echo "== glmm: 2^24+3 keys verified"
for b in ash wgpu; do for a in radix bitonic; do for t in u32 f32; do
  echo "glmm $b $a $t desc: $(timeout 60 /tmp/pk/glmm/sortdemo --backend $b --algorithm $a --type $t --order desc --len 16777219 --verify --json 2>&1 | tail -1 | cut -c1-150)"
done; done; done
date -u +%T
