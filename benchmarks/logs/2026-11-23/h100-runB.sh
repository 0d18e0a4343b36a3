#!/bin/bash
# Device run B: correctness (parity with rust-gpu SPIR-V on NVIDIA Vulkan, 2^26 verify, kernel API SAXPY,
# the rgpu init story, transfers).
set -u
exec > >(tee "$OUT/runB.log") 2>&1
R=$PWD
rm -rf /tmp/pack; (cd /tmp && tar -xJf "$R/.device/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack
echo "== cuda bitonic launch overhead: before / after / after2 (function lookup cached per launcher), interleaved"
for rep in 1 2 3; do
  BENCH_SKIP_CPU=1 $D/before/bench 2>&1 | grep "n=2^1[6-9]\|n=2^2[0]" | sed "s/^/before /"
  BENCH_BACKENDS=cuda BENCH_ALGORITHMS=bitonic BENCH_SIZES=16,20 $D/after/bench 2>&1 | grep cuda | sed "s/^/after /"
  BENCH_BACKENDS=cuda BENCH_ALGORITHMS=bitonic BENCH_SIZES=16,20,24 $D/after2/bench 2>&1 | grep cuda | sed "s/^/after2 /"
done
echo "== kernel API SAXPY (minimal template; wgpu/ash SPIR-V from rust-gpu)"
for b in cpu cuda wgpu ash; do RGPU_BACKEND=$b $D/mini/mini --check --n 10000000; echo "rc=$?"; done
echo "== rgpu init story (histo): output vs the original program's"
A="--width 640 --height 480 --seed 7 --gain 1.3 --bias -0.1"
for b in cpu cuda wgpu; do RGPU_BACKEND=$b $D/story/histo $A > /tmp/h-$b.txt; cmp /tmp/h-$b.txt $D/story/expected.txt && echo "histo $b: identical"; done
A2="--width 4096 --height 4096 --seed 3 --gain 0.7 --bias 0.05"
RGPU_BACKEND=cpu $D/story/histo $A2 > /tmp/h2-cpu.txt; RGPU_BACKEND=cuda $D/story/histo $A2 > /tmp/h2-cuda.txt; cmp /tmp/h2-cpu.txt /tmp/h2-cuda.txt && echo "histo 4096x4096 cuda == cpu"
echo "== 2^26 verify, radix and bitonic, rust-gpu SPIR-V on NVIDIA Vulkan and cuda"
for b in cuda ash wgpu; do for a in radix bitonic; do echo "$b $a: $($D/rustgpu/sortdemo --backend $b --algorithm $a --type f32 --order desc --len 67108864 --verify 2>&1 | tail -1)"; done; done
echo "== parity (rust-gpu SPIR-V), every backend required"
cd $D/rustgpu && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 300 ./parity --nocapture --test-threads 1 2>&1 | grep -E "^test |passed|failed|skipped|test result|panicked" | head -60
echo "== transfers"
cd /tmp/pack && timeout 200 bash transfer/run.sh
cp /tmp/transfer-log.txt "$OUT/" 2>/dev/null
