#!/bin/bash
# Issue 19, one H100 lease: float results (SAXPY + a*b+c chains) on every backend, parity with
# rust-gpu's optimized SPIR-V, and device time of both sorts on cuda, ash and wgpu with
# rust-gpu's SPIR-V before spirv-opt (raw), after spirv-opt + NoContraction (opt) and the GLSL
# twin (glsl); noopt: no spirv-opt at all; unchecked: opt with Shared's unchecked forms
# really unchecked on spirv (get_unchecked), 2^16..2^26, one algorithm and backend per process; end to end; CUB.
# Built on the dev machine (benchmarks/issue19_pack.sh), carried as .bench/pack.tar.xz; run as
# two calls (sorts first, floats in a second pack), each part runs where its folder is packed.
set -u
exec > >(tee "$OUT/issue19.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.bench/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ -d $D/saxpy ]; then
echo "== floats: SAXPY and mad_chain (a*b+c chains) vs plain Rust, every backend required"
for v in saxpy fused; do for t in parity mad_chain; do
  [ -x $D/$v/$t ] || continue
  echo "-- $v $t"; (cd $D/$v && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 60 ./$t --nocapture 2>&1 | grep -E "passed|failed|differ|test result|panicked" | head -12)
done; done
for b in cpu cuda wgpu ash; do echo "saxpy main $b: $(RGPU_BACKEND=$b $D/saxpy/saxpy --check --n 10000000 2>&1 | tail -1)"; done
fi
[ -d $D/opt ] || { echo "== done"; exit 0; }
echo "== parity, rust-gpu SPIR-V after spirv-opt + NoContraction, RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
(cd $D/opt && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "^test |test result" | tail -14)
echo "== device time (sort_ms = median of 10 after a warm-up; min, max), one algorithm and backend per process"
for a in radix bitonic; do
  BENCH_BACKENDS=cuda BENCH_ALGORITHMS=$a BENCH_SIZES=16,18,20,22,24,26 timeout 60 $D/opt/bench 2>&1 | grep -E "n=2\^|error|panick" | sed "s/^/nvptx /"
  for v in raw noopt opt unchecked glsl; do for b in ash wgpu; do
    [ -x $D/$v/bench ] || continue
    BENCH_BACKENDS=$b BENCH_ALGORITHMS=$a BENCH_SIZES=16,18,20,22,24,26 timeout 60 $D/$v/bench 2>&1 | grep -E "n=2\^|error|panick" | sed "s/^/$v /"
  done; done
done
echo "== end to end (--bench --json: ms = host keys in, sorted keys out, median of 10), 2^24 u32"
for v in raw opt unchecked glsl; do for b in cuda ash wgpu; do for a in radix bitonic; do
  [ $v != opt ] && [ $b = cuda ] && continue
  [ -x $D/$v/sortdemo ] || continue
  echo "$v $b $a: $(timeout 60 $D/$v/sortdemo --backend $b --algorithm $a --len 16777216 --bench --json 2>&1 | tail -1)"
done; done; done
echo "== CUB (cupy.sort)"
timeout 60 python3 $D/cub_cupy.py 16 20 24 26
echo "== done"
