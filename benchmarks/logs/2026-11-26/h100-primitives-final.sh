#!/bin/bash
# Issue 28 after the reduction's tile grew to 64 items a thread: the pack's run.sh (every
# (backend, op) in its own process) at 2^16..2^26 beside CUB and CuPy, then the reduction
# per kernel on cuda and ash, with the SM clock sampled.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" / >/dev/null; done; ldconfig; fi
export VK_DRIVER_FILES=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1) XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem --format=csv,noheader -lms 100 > $OUT/clocks_j.csv 2>&1 & S=$!
cp -r $P/prim3 /tmp/prim3 && cd /tmp/prim3
{ date -u +%T; timeout 450 ./run.sh 16,20,24,26; date -u +%T
for b in cuda ash; do for op in reduce_sum_u32 reduce_sum_f32; do
  BENCH_KERNELS=1 BENCH_BACKENDS=$b BENCH_OPS=$op BENCH_SIZES=24,26 timeout 60 ./primitives_bench 2>&1 | grep -E "^kernel|rror|panick"
done; done; date -u +%T; } > $OUT/primitives_j.log 2>&1
kill $S
grep -c "^bench" $OUT/primitives_j.log; grep -E "reduce|rror" $OUT/primitives_j.log | grep -E "2\^2[46]|rror" | cut -c1-90
