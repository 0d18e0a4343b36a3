#!/bin/bash
# Issue 19, run 6: one lease, what main commits (rust-gpu's SPIR-V, "cur") beside the GLSL
# twin ("glsl", tests/fixtures/spirv through --kernel-artifact; same host, same PTX), both
# built here from main (f24b212) by `rgpu new` + `rgpu build --backend cuda,wgpu,ash --arch
# sm_90 --yes`, then `--kernel-artifact all.fixture.spv` for glsl (benchmarks/issue19_pack6.sh).
# Device time at 2^16..2^26 for both sorts on cuda, ash and wgpu; each radix kernel's share
# (BENCH_PHASES=1); end to end (sortdemo --bench --json); CUB; parity with every backend.
set -u
exec > >(tee "$OUT/issue19-run6.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.bench21/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
S=16,18,20,22,24,26
echo "== device time (median of 10 after a warm-up; min, max), one algorithm and backend per process"
bench() { # variant backend algorithm [env]
  env ${4:-} BENCH_BACKENDS=$2 BENCH_ALGORITHMS=$3 BENCH_SIZES=$S timeout 120 $D/$1/bench 2>&1 | grep -E "n=2\^|rror|panick" | sed "s/^/$1 /"
}
for a in radix bitonic; do
  bench cur cuda $a
  for v in cur glsl; do for b in ash wgpu; do bench $v $b $a; done; done
done
date -u +%T
echo "== each radix kernel's share (BENCH_PHASES=1: every launch timed by itself, summed over the 4 passes)"
for v in cur glsl; do for b in cuda ash; do
  [ $v = glsl ] && [ $b = cuda ] && continue
  env BENCH_PHASES=1 BENCH_BACKENDS=$b BENCH_ALGORITHMS=radix BENCH_SIZES=20,24,26 timeout 120 $D/$v/bench 2>&1 | grep -E "phases|rror|panick" | sed "s/^/$v /"
done; done
date -u +%T
echo "== end to end (sortdemo --bench --json: host keys in, sorted host keys out; median of 10 after a warm-up), u32"
e2e() { # variant backend algorithm log2n
  echo "$1 $2 $3 2^$4: $(timeout 120 $D/$1/sortdemo --backend $2 --algorithm $3 --len $((1 << $4)) --bench --json 2>&1 | tail -1)"
}
for a in radix bitonic; do for n in 16 18 20 22 24 26; do
  e2e cur cuda $a $n
  for v in cur glsl; do for b in ash wgpu; do e2e $v $b $a $n; done; done
done; done
echo "-- 2^24 again, twice (host time varies between processes)"
for i in 1 2; do for a in radix bitonic; do
  e2e cur cuda $a 24
  for v in cur glsl; do for b in ash wgpu; do e2e $v $b $a 24; done; done
done; done
date -u +%T
echo "== CUB (cupy.sort)"
timeout 120 python3 "$R/.bench21/cub_cupy.py" 16 18 20 22 24 26
date -u +%T
echo "== parity (cur), RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
(cd $D/cur && RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "^test |test result|panick" | tail -16)
date -u +%T
echo "== done"
