#!/bin/bash
# Issue 19, run 4, second call (a fresh H100): main's kernels (base) against v1 (the ranking's
# 8 ballots unrolled and branch-free, while loops for range loops, `|`/`&` for `||`/`&&`,
# bitonic's fused-pass loops unrolled) and v1i (v1 + an identity KeyMap instead of
# Option<KeyMap> in the upsweep's encoding and the downsweep's decoding). cuda, ash, wgpu from
# each; end to end at 2^24; parity with every backend required.
set -u
exec > >(tee "$OUT/issue19-run4b.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.bench19/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
echo "== device time (median of 10 after a warm-up; min, max), one algorithm and backend per process"
S=16,18,20,22,24,26
bench() { # variant backend algorithm
  BENCH_BACKENDS=$2 BENCH_ALGORITHMS=$3 BENCH_SIZES=$S timeout 60 $D/$1/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/$1 /"
}
for v in base v1 v1i; do for b in cuda ash wgpu; do bench $v $b radix; done; done
for v in base v1i; do for b in cuda ash wgpu; do bench $v $b bitonic; done; done
date -u +%T
echo "== end to end, 2^24 u32"
for v in base v1 v1i; do for b in cuda ash wgpu; do for a in radix bitonic; do
  echo "$v $b $a: $(timeout 60 $D/$v/sortdemo --backend $b --algorithm $a --len 16777216 --bench --json 2>&1 | tail -1)"
done; done; done
date -u +%T
for v in v1i v1; do
  echo "== parity ($v), RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
  (cd $D/$v && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 150 ./parity --test-threads 1 2>&1 | grep -E "^test |test result|panick" | tail -16)
  date -u +%T
done
echo "== done"
