#!/bin/bash
# Issue 19, run 13: which of run 12's three unrolled loops helps Vulkan and which costs CUDA.
#  b1 = copy loops (16) and compare-exchange loop (8) unrolled (run 12)
#  b2 = the two copy loops only;  b3 = the compare-exchange loop only;  cur = neither
set -u
exec > >(tee "$OUT/issue19-run13.log") 2>&1
R=$PWD
rm -rf /tmp/pk; mkdir -p /tmp/pk; (cd /tmp/pk && tar -xJf "$R/.bench28/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
for round in 1 2; do for v in cur b1 b2 b3; do for b in cuda ash; do
  BENCH_BACKENDS=$b BENCH_ALGORITHMS=bitonic BENCH_SIZES=20,24,26 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/r$round $v /"
done; done; done
for v in b2 b3; do for b in cuda ash; do BENCH_STATS=1 BENCH_BACKENDS=$b BENCH_ALGORITHMS=bitonic BENCH_SIZES=20 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "stats bitonic_tile" | sed -E "s/: \[CS.*//; s/\(cuFunc.*//; s/^/$v /"; done; done
date -u +%T
