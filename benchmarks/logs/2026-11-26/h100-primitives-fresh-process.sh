#!/bin/bash
# Issue 28, clean numbers: every (backend, op) in a fresh process (a long Vulkan process lets
# the GPU fall to idle clocks between the bench's host-side resets: see run_h/fgh), plain and
# per kernel; CUB in the same call.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" / >/dev/null; done; ldconfig; fi
export VK_DRIVER_FILES=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1) XDG_RUNTIME_DIR=/tmp
B=$P/prim2/primitives_bench
OPS="sort_u32 sort_f32 sort_u64 sort_pairs_u32 exclusive_scan_u32 inclusive_scan_u32 reduce_sum_u32 reduce_sum_f32 reduce_max_f32 histogram_256"
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem --format=csv,noheader -lms 100 > $OUT/clocks_i.csv 2>&1 & S=$!
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
for b in cuda ash wgpu; do for op in $OPS; do
  BENCH_BACKENDS=$b BENCH_OPS=$op BENCH_SIZES=16,20,24,26 timeout 60 $B 2>&1 | grep -E "^bench|rror|panick"
done; done; date -u +%T
for b in cuda ash; do for op in $OPS; do
  BENCH_KERNELS=1 BENCH_BACKENDS=$b BENCH_OPS=$op BENCH_SIZES=24,26 timeout 60 $B 2>&1 | grep -E "^kernel|rror|panick"
done; done; date -u +%T
cd $P/prim && nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/primitives_cub primitives_cub.cu && timeout 120 /tmp/primitives_cub 16 20 24 26 | grep "^bench"
date -u +%T; } > $OUT/primitives_fresh.log 2>&1
kill $S
grep -c . $OUT/primitives_fresh.log; awk -F', ' '{print $3}' $OUT/clocks_i.csv | sort | uniq -c | sort -rn | head -4
