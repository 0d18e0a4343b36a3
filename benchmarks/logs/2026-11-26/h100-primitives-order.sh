#!/bin/bash
# Issue 28: where rgpu-primitives' Vulkan time goes. Per-kernel device time (BENCH_KERNELS=1:
# each launch in its own Device::timed) on cuda, ash and wgpu at 2^24 and 2^26; each op alone
# in a fresh process at 2^26 (is the growth from 2^24 to 2^26 the op's own, or left by the
# ops before it?); then the plain bench and CUB in the same call.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" / >/dev/null; done; ldconfig; fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
B=$P/prim2/primitives_bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
echo "== A: each op alone at 2^26, a fresh process each (ash)"
for op in sort_u32 sort_f32 sort_pairs_u32 exclusive_scan_u32 inclusive_scan_u32 reduce_sum_u32; do
  BENCH_BACKENDS=ash BENCH_OPS=$op BENCH_SIZES=26 timeout 60 $B 2>&1 | grep -E "^bench|rror|panick"
done
echo "== B: the usual order, 2^24 and 2^26, plain (ash, wgpu, cuda)"
for b in ash wgpu cuda; do BENCH_BACKENDS=$b BENCH_SIZES=24,26 timeout 120 $B 2>&1 | grep -E "^bench|rror|panick"; done
date -u +%T
echo "== C: per kernel (BENCH_KERNELS=1), 2^24 and 2^26 (ash, wgpu, cuda)"
for b in ash wgpu cuda; do BENCH_KERNELS=1 BENCH_BACKENDS=$b BENCH_SIZES=24,26 timeout 150 $B 2>&1 | grep -E "^kernel|rror|panick"; done
date -u +%T
echo "== D: CUB"
cd $P/prim && nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/primitives_cub primitives_cub.cu && timeout 120 /tmp/primitives_cub 24 26 | grep "^bench"
date -u +%T
# E was appended by the call's command line:
#   BENCH_BACKENDS=ash BENCH_OPS=inclusive_scan_u32,exclusive_scan_u32,reduce_sum_u32,sort_pairs_u32,sort_f32,sort_u32 \
#     BENCH_SIZES=26 $P/prim2/primitives_bench   # one process, the reversed order
