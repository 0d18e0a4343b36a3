#!/bin/bash
# Issue 18 on the H100: the sort demo's parity tests and SAXPY's from rust-gpu's SPIR-V,
# through wgpu's passthrough and through naga (RGPU_WGPU_SHADER=naga), every backend required;
# the demo at 2^24+3 through naga; device times of naga beside passthrough (same lease).
cd "$(dirname "$0")"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p -m 700 $XDG_RUNTIME_DIR
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
echo "== parity, passthrough, RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash ./parity 2>&1 | tail -4
echo "== parity, naga"
RGPU_WGPU_SHADER=naga RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash ./parity 2>&1 | tail -4
echo "== saxpy parity, passthrough / naga"
RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash ./saxparity 2>&1 | tail -3
RGPU_WGPU_SHADER=naga RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash ./saxparity 2>&1 | tail -3
for b in cpu cuda wgpu; do for s in passthrough naga; do
  [ $b != wgpu ] && [ $s = naga ] && continue
  echo "== saxpy --check on $b ($s)"; RGPU_WGPU_SHADER=$s RGPU_BACKEND=$b ./saxpy --check 2>&1 | tail -2
done; done
for a in bitonic radix; do for t in u32 f32; do
  echo "== demo $a $t 2^24+3 wgpu naga"
  RGPU_WGPU_SHADER=naga RGPU_BACKEND=wgpu ./h100demo --algorithm $a --len 16777219 --type $t --order desc --verify --json 2>&1 | tail -1
done; done
echo "== bench passthrough (cuda, wgpu, ash)"
BENCH_BACKENDS=cuda,wgpu,ash BENCH_SIZES=20,24 ./bench 2>&1
echo "== bench naga (wgpu)"
RGPU_WGPU_SHADER=naga BENCH_BACKENDS=wgpu BENCH_SIZES=20,24 ./bench 2>&1
echo "== bench passthrough again (wgpu)"
BENCH_BACKENDS=wgpu BENCH_SIZES=20,24 ./bench 2>&1
