#!/bin/bash
# H100 call D: the sort demo's bench (demo numbers), rgpu-primitives beside CUB and CuPy, and
# the portability corpus / narrow-memory pack when it was built.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
  for a in radix bitonic; do for b in cuda ash wgpu; do
    BENCH_BACKENDS=$b BENCH_ALGORITHMS=$a BENCH_SIZES=16,20,24,26 timeout 100 "$P/demo/bench" 2>&1 | grep -E "n=2\^|rror|panick"
  done; done
  echo "== wgpu through naga (RGPU_WGPU_SHADER=naga), radix"
  RGPU_WGPU_SHADER=naga BENCH_BACKENDS=wgpu BENCH_ALGORITHMS=radix BENCH_SIZES=24,26 timeout 100 "$P/demo/bench" 2>&1 | grep -E "n=2\^|rror|panick"
  date -u +%T; } > "$OUT/demo_bench.log" 2>&1
tail -30 "$OUT/demo_bench.log"
if [ -d "$P/prim" ]; then
  (cd "$P/prim" && timeout 300 ./run.sh 16,20,24,26) > "$OUT/primitives.log" 2>&1
  echo "exit $?" >> "$OUT/primitives.log"; grep -c bench "$OUT/primitives.log"; tail -5 "$OUT/primitives.log"
fi
if [ -f "$P/narrow/pack.tar.xz" ]; then
  mkdir -p /tmp/nm && (cd /tmp/nm && tar -xJf "$P/narrow/pack.tar.xz" && timeout 200 bash run.sh "$OUT") > "$OUT/narrow_memory_words.log" 2>&1
  echo "exit $?" >> "$OUT/narrow_memory_words.log"; tail -40 "$OUT/narrow_memory_words.log"
fi
