#!/bin/bash
# Issue 19, run 8: two downsweep variants beside main's kernels (cur), radix only.
#  e1 = the ranking's 16 steps in two copies: `if lanes.turns == 1` (one subgroup per part,
#       every GPU with 32+ lanes) steps with no turn loop and no barrier; else the turns.
#  e3 = the write-out decodes through an identity KeyMap on passes that do not decode,
#       instead of `Option::map_or` per key.
set -u
exec > >(tee "$OUT/issue19-run8.log") 2>&1
R=$PWD
rm -rf /tmp/pk; mkdir -p /tmp/pk; (cd /tmp/pk && tar -xJf "$R/.bench23/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
for round in 1 2; do for v in cur e1 e3; do for b in ash wgpu; do
  BENCH_PHASES=1 BENCH_BACKENDS=$b BENCH_ALGORITHMS=radix BENCH_SIZES=20,24,26 timeout 120 /tmp/pk/$v/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/r$round $v /"
done; done; done
BENCH_BACKENDS=cuda BENCH_ALGORITHMS=radix BENCH_SIZES=20,24,26 timeout 120 /tmp/pk/cur/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/cur /"
for v in e1 e3; do for b in cuda ash wgpu; do for t in u32 f32; do for o in asc desc; do
  echo "$v $b $t $o 2^24+3: $(timeout 60 /tmp/pk/$v/sortdemo --backend $b --algorithm radix --type $t --order $o --len 16777219 --verify --json 2>&1 | tail -1 | cut -c1-160)"
done; done; done; done
date -u +%T
