#!/bin/bash
# Call B: the user kernels beside their twins; the scans beside CUB; the load and timeout tests.
set -u
R=$(pwd)
. scripts/gpu-machine-vulkan.sh
tar xJf .device/final/benchB.tar.xz -C .device/final
mkdir -p benchmarks/user_kernels/target/release && cp .device/final/user-kernels benchmarks/user_kernels/target/release/user-kernels
mkdir -p "$OUT/b"
(cd .device/final/pack && OPS="exclusive_scan_u32 inclusive_scan_u32 exclusive_scan_u32_reduce_then_scan inclusive_scan_u32_reduce_then_scan" timeout 180 ./run.sh 20,24,26) > "$OUT/b/scan_vs_cub.txt" 2>&1
echo "scan bench exited $?"
OUT=$OUT/b timeout 240 bash benchmarks/user_kernels.sh --kernels saxpy,reduce_sum,reduce_sum_plain,reduce_sum_looped,reduce_sum_looped_len,exclusive_scan,histogram,blur,gather,scatter,nbody,nbody_tuned,softmax > "$OUT/b/user_kernels.txt" 2>&1
echo "user kernels exited $?"
(cd .device/final/rgpu-reliability && RGPU_FIXTURE_DIR=$PWD/fixtures RGPU_REQUIRE_VULKAN=1 RGPU_LOAD_LAUNCHES=10000 RGPU_LOAD_FILL=1 timeout 120 ./reliability --test-threads=1 --nocapture) > "$OUT/b/reliability.txt" 2>&1
echo "reliability exited $?"
cd "$OUT" && tar cJf b.tar.xz b && rm -rf b
