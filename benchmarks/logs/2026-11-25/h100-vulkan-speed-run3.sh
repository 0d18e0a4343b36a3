#!/bin/bash
# Issue 19, third call (same session, a fresh H100): rust-gpu's SPIR-V with the kernel API's
# unchecked forms (Shared::load_unchecked/store_unchecked/atomic_add_unchecked through
# spirv-std's IndexUnchecked: "unchecked"; plus Global::read/write the same way: "unchecked2"),
# against opt and cuda rerun in the same call; parity with every backend required.
set -u
exec > >(tee "$OUT/issue19-run3.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.bench/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in unchecked2 unchecked; do
  [ -x $D/$v/parity ] || continue
  echo "== parity ($v), RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
  (cd $D/$v && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "^test |test result" | tail -14)
  break
done
echo "== device time (median of 10 after a warm-up; min, max), one algorithm and backend per process"
for a in radix bitonic; do
  BENCH_BACKENDS=cuda BENCH_ALGORITHMS=$a BENCH_SIZES=16,18,20,22,24,26 timeout 60 $D/opt/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/nvptx /"
  for v in opt unchecked unchecked2; do for b in ash wgpu; do
    [ -x $D/$v/bench ] || continue
    BENCH_BACKENDS=$b BENCH_ALGORITHMS=$a BENCH_SIZES=16,18,20,22,24,26 timeout 60 $D/$v/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/$v /"
  done; done
done
echo "== end to end, 2^24 u32"
for v in opt unchecked unchecked2; do for b in cuda ash wgpu; do for a in radix bitonic; do
  [ $v != opt ] && [ $b = cuda ] && continue
  [ -x $D/$v/sortdemo ] || continue
  echo "$v $b $a: $(timeout 60 $D/$v/sortdemo --backend $b --algorithm $a --len 16777216 --bench --json 2>&1 | tail -1)"
done; done; done
echo "== done"
