#!/bin/bash
# Issue 19, run 9: per-kernel statistics (the new Device::kernel_stats: cuFuncGetAttribute on
# cuda, VK_KHR_pipeline_executable_properties on ash) and device facts for the demo's kernels,
# rust-gpu's SPIR-V (cur) and the GLSL twin (glsl), built by benchmarks/issue19_pack6.sh from
# main after the merge of the stats work; and the runtime's cuda tests (tests/cuda.rs, built
# here with `cargo test --features cuda --test cuda --no-run --release`) with the GPU required.
set -u
exec > >(tee "$OUT/issue19-run9.log") 2>&1
R=$PWD
rm -rf /tmp/pk; mkdir -p /tmp/pk; (cd /tmp/pk && tar -xJf "$R/.bench24/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
echo "== BENCH_STATS=1 bench at 2^24 (device time, then facts and each kernel's statistics)"
for v in cur glsl; do for b in cuda ash wgpu; do
  [ $v = glsl ] && [ $b = cuda ] && continue
  echo "-- $v $b"
  BENCH_STATS=1 BENCH_BACKENDS=$b BENCH_ALGORITHMS=radix,bitonic BENCH_SIZES=24 timeout 120 /tmp/pk/$v/bench 2>&1
done; done
date -u +%T
echo "== sortdemo --bench --json (cur), radix, 2^24: the JSON with device_facts and kernel_stats"
for b in cuda ash wgpu; do timeout 60 /tmp/pk/cur/sortdemo --backend $b --algorithm radix --len 16777216 --bench --json 2>&1 | tail -1; done
echo "== runtime cuda tests, RGPU_REQUIRE_CUDA=1"
(cd /tmp && RGPU_REQUIRE_CUDA=1 timeout 120 "$R/.bench24/runtime-cuda-test" --test-threads 1 2>&1 | grep -E "^test |test result|panick|facts|stats" | tail -40)
date -u +%T
