#!/bin/bash
# Issue 19, run 14: what main commits at the end of this session (86ae5ef: radix as in run 6,
# bitonic with run 13's unrolled compare-exchanges) beside the GLSL twin, one lease, built by
# benchmarks/issue19_pack6.sh: device time at 2^16..2^26 for both sorts on cuda, ash and wgpu;
# each radix kernel's share; per-kernel statistics; end to end; CUB; parity with every backend
# through passthrough and naga; 2^24+3 bitonic keys verified through wgpu's naga path.
set -u
exec > >(tee "$OUT/issue19-run14.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.bench29/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
S=16,18,20,22,24,26
echo "== device time (median of 10 after a warm-up; min, max), one algorithm and backend per process"
bench() { # variant backend algorithm
  BENCH_BACKENDS=$2 BENCH_ALGORITHMS=$3 BENCH_SIZES=$S timeout 120 $D/$1/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/$1 /"
}
for a in radix bitonic; do
  bench cur cuda $a
  for v in cur glsl; do for b in ash wgpu; do bench $v $b $a; done; done
done
date -u +%T
echo "== each radix kernel's share at 2^24, and the statistics"
for v in cur glsl; do for b in cuda ash; do
  [ $v = glsl ] && [ $b = cuda ] && continue
  BENCH_PHASES=1 BENCH_STATS=1 BENCH_BACKENDS=$b BENCH_ALGORITHMS=radix,bitonic BENCH_SIZES=24 timeout 120 $D/$v/bench 2>&1 | grep -E "phases|stats|rror|panick" | sed -E "s/: \[CS.*//; s/ \(cuFunc.*//; s/^/$v /"
done; done
date -u +%T
echo "== end to end (sortdemo --bench --json: host keys in, sorted host keys out; median of 10), u32"
e2e() { # variant backend algorithm log2n
  echo "$1 $2 $3 2^$4: $(timeout 120 $D/$1/sortdemo --backend $2 --algorithm $3 --len $((1 << $4)) --bench --json 2>&1 | tail -1 | grep -oE '"ms": [0-9.]+, "device_ms": [0-9.]+')"
}
for i in 1 2 3; do for a in radix bitonic; do
  e2e cur cuda $a 24
  for v in cur glsl; do for b in ash wgpu; do e2e $v $b $a 24; done; done
done; done
for n in 20 26; do for a in radix bitonic; do
  e2e cur cuda $a $n
  for v in cur glsl; do for b in ash wgpu; do e2e $v $b $a $n; done; done
done; done
date -u +%T
echo "== CUB (cupy.sort)"
timeout 120 python3 "$R/.bench21/cub_cupy.py" 20 24 26
for shader in passthrough naga; do
  echo "== parity (cur), RGPU_WGPU_SHADER=$shader, RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
  (cd $D/cur && RGPU_WGPU_SHADER=$shader RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "test result|FAILED|panick" | tail -5)
done
echo "== 2^24+3 keys, bitonic, wgpu through naga"
for t in u32 i32 f32; do for o in asc desc; do
  echo "bitonic $t $o wgpu-naga: $(RGPU_WGPU_SHADER=naga timeout 60 $D/cur/sortdemo --backend wgpu --algorithm bitonic --type $t --order $o --len 16777219 --verify --json 2>&1 | tail -1 | grep -oE '"verified": [a-z]+')"
done; done
date -u +%T
echo "== done"
