#!/bin/bash
# Call A: the GPU tier on the final tree (binaries built here), glam on cuda.
set -u
R=$(pwd)
mkdir -p .device/gpu-tier && tar xJf .device/final/bins.tar.xz -C .device/gpu-tier
ls -la .device/gpu-tier
rm -f .device/gpu-tier/user-kernels
G=.device/gpu-tier
(RGPU_BACKEND=cuda timeout 60 $G/glam; echo "glam exited $?") > "$OUT/glam.txt" 2>&1
timeout 500 bash scripts/gpu-tier.sh "$OUT/tier"
cat "$OUT/glam.txt"
cd "$OUT" && tar cJf tier.tar.xz tier && rm -rf tier
