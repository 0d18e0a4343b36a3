#!/bin/bash
# Call C: the load and out-of-memory tests (the endless-kernel children left out: their
# processes do not end on this machine), and gather/scatter/blur on Vulkan in fresh processes.
set -u
R=$(pwd)
. scripts/gpu-machine-vulkan.sh
tar xJf .device/final/benchB.tar.xz -C .device/final
mkdir -p "$OUT/c"
(cd .device/final/rgpu-reliability && RGPU_FIXTURE_DIR=$PWD/fixtures RGPU_REQUIRE_VULKAN=1 RGPU_LOAD_LAUNCHES=10000 RGPU_LOAD_FILL=1 \
  timeout 240 ./reliability --test-threads=1 --nocapture --skip an_endless_kernel_times_out_on_ash --skip an_endless_kernel_times_out_on_cuda) > "$OUT/c/reliability_load.txt" 2>&1
echo "reliability (load, memory) exited $?"
for k in gather scatter blur nbody; do
  for b in ash wgpu cuda; do
    timeout 120 .device/final/user-kernels --sizes large --backends $b --kernels $k --reps 20 >> "$OUT/c/fresh_process_rows.jsonl" 2>>"$OUT/c/fresh_process.err"
  done
done
echo "fresh-process reruns done"
cd "$OUT" && tar cJf c.tar.xz c && rm -rf c
