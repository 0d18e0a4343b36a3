#!/bin/bash
# Issue 19, run 12: the bitonic tile pass unrolled in the source. run 9's statistics showed
# rust-gpu's bitonic_tile at 19 registers and 5376 bytes of binary against the GLSL twin's 63
# and 20736: its copy loops (16 iterations) and its per-step compare-exchange loop (8) stayed
# loops on NVIDIA (the twin's carry [[unroll]]). b1 = main + rgpu::unroll! in those three loops
# (templates/bitonic/kernel/src/schedule.rs); cur = main before (run 10's pack). Same host.
set -u
exec > >(tee "$OUT/issue19-run12.log") 2>&1
R=$PWD
rm -rf /tmp/pk; mkdir -p /tmp/pk; (cd /tmp/pk && tar -xJf "$R/.bench27/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
for round in 1 2; do for v in cur b1; do for b in cuda ash wgpu; do
  BENCH_BACKENDS=$b BENCH_ALGORITHMS=bitonic BENCH_SIZES=16,18,20,22,24,26 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/r$round $v /"
done; done; done
echo "== statistics (b1)"
for b in cuda ash; do BENCH_STATS=1 BENCH_BACKENDS=$b BENCH_ALGORITHMS=bitonic BENCH_SIZES=20 timeout 120 /tmp/pk/b1/bench 2>&1 | grep -E "stats" | sed -E "s/: \[CS.*//; s/^/b1 /"; done
echo "== end to end 2^24 (b1, cur), bitonic"
for i in 1 2; do for v in cur b1; do for b in cuda ash wgpu; do
  echo "$v $b: $(timeout 60 /tmp/pk/$v/sortdemo --backend $b --algorithm bitonic --len 16777216 --bench --json 2>&1 | tail -1 | grep -oE '"ms": [0-9.]+, "device_ms": [0-9.]+')"
done; done; done
echo "== parity (b1), RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
(cd /tmp/pk/b1 && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "test result|FAILED|panick" | tail -5)
for t in u32 i32 f32; do for o in asc desc; do for b in cuda ash wgpu; do
  echo "b1 bitonic $t $o $b 2^24+3: $(timeout 60 /tmp/pk/b1/sortdemo --backend $b --algorithm bitonic --type $t --order $o --len 16777219 --verify --json 2>&1 | tail -1 | grep -oE '"verified": [a-z]+')"
done; done; done
date -u +%T
