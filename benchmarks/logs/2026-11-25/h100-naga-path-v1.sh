#!/bin/bash
# Merged main (2026-11-25, after the issue-19 kernel changes): the sort demo's committed
# kernels (v1 of run 4, .bench19/pack.tar.xz) through wgpu's naga path (Metal's and DX12's
# route) and passthrough, against cpu, on an H100.
set -u
exec > >(tee "$OUT/issue18-naga-v1.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack; (cd /tmp/pack && tar -xJf "$R/.bench19/pack.tar.xz" v1) || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
D=/tmp/pack/v1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
for shader in passthrough naga; do
  echo "== parity, RGPU_WGPU_SHADER=$shader, RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
  (cd $D && RGPU_WGPU_SHADER=$shader RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "^test |test result|panick" | tail -16)
  date -u +%T
done
echo "== 2^24+3 keys, every type and order, --verify, wgpu naga vs cpu (sorted output digest)"
for a in radix bitonic; do for t in u32 i32 f32; do for o in asc desc; do
  for b in cpu cuda ash wgpu-naga; do
    if [ $b = wgpu-naga ]; then e="RGPU_WGPU_SHADER=naga"; bb=wgpu; else e=""; bb=$b; fi
    echo "$a $t $o $b: $(env $e timeout 60 $D/sortdemo --backend $bb --algorithm $a --type $t --order $o --len 16777219 --verify --json 2>&1 | tail -1 | cut -c1-300)"
  done
done; done; done
date -u +%T
echo "== done"
