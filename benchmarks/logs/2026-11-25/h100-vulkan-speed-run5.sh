#!/bin/bash
# Issue 19, run 5: what the demo keeps after the merge (radix.rs = run 4's v0, schedule.rs =
# v1), built by `rgpu new cur && rgpu build --backend cuda,wgpu,ash --arch sm_90 --yes` from
# main; beside main's kernels before issue 19's lever 5 (run 4's "base", .bench19) in the
# same lease. Then parity with every backend required (passthrough and naga) and 2^24+3 keys
# verified through wgpu's naga path.
set -u
exec > >(tee "$OUT/issue19-run5.log") 2>&1
R=$PWD
rm -rf /tmp/pack; mkdir -p /tmp/pack/cur; (cd /tmp/pack && tar -xJf "$R/.bench19/pack.tar.xz" base) || exit 1
(cd /tmp/pack/cur && tar -xJf "$R/.bench20/cur.tar.xz") || exit 1
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
for v in base cur; do for b in cuda ash wgpu; do bench $v $b radix; done; done
for v in base cur; do for b in cuda ash wgpu; do bench $v $b bitonic; done; done
date -u +%T
for shader in passthrough naga; do
  echo "== parity (cur), RGPU_WGPU_SHADER=$shader, RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash"
  (cd $D/cur && RGPU_WGPU_SHADER=$shader RGPU_REQUIRE_BACKENDS=cuda,wgpu,ash timeout 200 ./parity --test-threads 1 2>&1 | grep -E "^test |test result|panick" | tail -16)
  date -u +%T
done
echo "== 2^24+3 keys, radix, every type and order, --verify (cur): cuda, ash, wgpu through naga"
for t in u32 i32 f32; do for o in asc desc; do for b in cuda ash wgpu-naga; do
  if [ $b = wgpu-naga ]; then e="RGPU_WGPU_SHADER=naga"; bb=wgpu; else e=""; bb=$b; fi
  echo "radix $t $o $b: $(env $e timeout 60 $D/cur/sortdemo --backend $bb --algorithm radix --type $t --order $o --len 16777219 --verify --json 2>&1 | tail -1 | cut -c1-200)"
done; done; done
date -u +%T
echo "== done"
