#!/bin/bash
# The corpus (words/corpus of the narrow2 pack) per backend, one process per kernel with a
# timeout, so a hang names its kernel; then the narrow-memory timings for ash and wgpu.
R=$(pwd); for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
export XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/nm && cd /tmp/nm && tar -xJf $R/.pack/h100/narrow2/pack.tar.xz
K=$(RGPU_BACKEND=cpu ./words/corpus | grep -v '^backend' | cut -d: -f1)
RGPU_BACKEND=cpu ./words/corpus > "$OUT/corpus.cpu"
for path in cuda ash wgpu naga; do
  : > "$OUT/corpus.$path"
  for k in $K; do
    if [ $path = naga ]; then env="RGPU_BACKEND=wgpu RGPU_WGPU_SHADER=naga"; else env="RGPU_BACKEND=$path"; fi
    env $env timeout 15 ./words/corpus $k 2>&1 | grep -v '^backend' >> "$OUT/corpus.$path" || echo "$k: TIMEOUT or error (exit $?)" >> "$OUT/corpus.$path"
  done
  echo "== $path: differs from the cpu in:"; diff <(grep -v '^backend' "$OUT/corpus.cpu") "$OUT/corpus.$path" | grep '^>'
done
