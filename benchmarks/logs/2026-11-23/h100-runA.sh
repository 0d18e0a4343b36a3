#!/bin/bash
# Device run A: performance (before/after bitonic, radix vs CUB, rust-gpu SPIR-V on NVIDIA Vulkan, end to end).
set -u
exec > >(tee "$OUT/runA.log") 2>&1
cd /tmp && tar -xJf "$OLDPWD/.device/pack.tar.xz" || exit 1
for f in "$OLDPWD"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
D=/tmp/pack
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
vk_before() { RGPU_GPU_TIMING=1 $D/before/sortdemo --backend $1 --len $((1<<$2)) --bench 2>&1 | grep '^gpu-timing:' | tail -n 10 | sed 's/.* \([0-9.]*\) ms$/\1/' | med; }
dev_after() { $1 --backend $2 --len $((1<<$3)) --bench --json ${4:-} 2>/dev/null | sed 's/.*"device_ms": \([0-9.]*\).*/\1/'; }
echo "== bitonic before/after (device ms; cuda: CUDA events in bench; vulkan: GPU timestamps)"
for rep in 1 2; do
  echo "-- rep $rep cuda before"; BENCH_SKIP_CPU=1 $D/before/bench 2>&1 | grep -v "^$" | head -20
  echo "-- rep $rep cuda after"; BENCH_BACKENDS=cuda BENCH_ALGORITHMS=bitonic BENCH_SIZES=16,20,24,26 $D/after/bench 2>&1 | grep -E "cuda|error"
  for b in ash wgpu; do for p in 16 20 24 26; do
    echo "vk $b 2^$p before=$(vk_before $b $p) after=$(dev_after $D/after/sortdemo $b $p) rustgpu=$(dev_after $D/rustgpu/sortdemo $b $p)"
  done; done
done
echo "== radix + bitonic bench, fixture SPIR-V (after) and rust-gpu SPIR-V (rustgpu)"
BENCH_BACKENDS=cuda,ash,wgpu BENCH_ALGORITHMS=radix,bitonic BENCH_SIZES=16,20,24,26 $D/after/bench 2>&1 | grep -E "n=2\^|error"
echo "-- rustgpu"
BENCH_BACKENDS=ash,wgpu BENCH_ALGORITHMS=radix,bitonic BENCH_SIZES=16,20,24,26 $D/rustgpu/bench 2>&1 | grep -E "n=2\^|error"
echo "== CUB (cupy.sort)"
python3 "$OLDPWD/benchmarks/cub_cupy.py" 16 20 24 26
echo "== f32 radix device ms and end to end (--bench --json: ms = end to end median, device_ms)"
for bin in after rustgpu; do for b in cuda ash wgpu; do for a in radix bitonic; do for t in u32 f32; do
  [ $bin = rustgpu ] && [ $b = cuda ] && continue
  echo "$bin $b $a $t 2^24: $($D/$bin/sortdemo --backend $b --algorithm $a --type $t --len 16777216 --bench --json 2>&1 | tail -1)"
done; done; done; done
echo "== 2^26 end to end radix"
for b in cuda ash wgpu; do echo "$b: $($D/rustgpu/sortdemo --backend $b --algorithm radix --len 67108864 --bench --json 2>&1 | tail -1)"; done
