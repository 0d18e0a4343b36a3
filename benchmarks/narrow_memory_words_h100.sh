#!/bin/bash
# Runs on the H100 in the unpacked pack of benchmarks/narrow_memory_words.sh (no cargo there):
#   tar -xJf pack.tar.xz && bash run.sh "$OUT"
# 1. the portability corpus on cpu, cuda, ash, wgpu (SPIR-V passthrough) and wgpu through
#    naga (the path Metal and DX12 take): every line must equal the cpu's;
# 2. the narrow-memory benchmark: rgpu's 32-bit words (words/) against native 8-bit storage
#    (native/) on wgpu and ash, and cuda's PTX for reference.
set -ux
OUT=${1:-.}
nvidia-smi -L
nvidia-smi --query-gpu=driver_version --format=csv,noheader
for path in cpu cuda ash wgpu naga; do
  if [ "$path" = naga ]; then
    RGPU_BACKEND=wgpu RGPU_WGPU_SHADER=naga ./words/corpus > "$OUT/corpus.$path" 2>&1
  else
    RGPU_BACKEND=$path ./words/corpus > "$OUT/corpus.$path" 2>&1
  fi
done
for path in cuda ash wgpu naga; do
  if diff <(tail -n +2 "$OUT/corpus.cpu") <(tail -n +2 "$OUT/corpus.$path"); then
    echo "corpus on $path: identical to the cpu ($(tail -n +2 "$OUT/corpus.$path" | wc -l) kernels)"
  else
    echo "corpus on $path: DIFFERS from the cpu"
  fi
done
for round in 1 2; do
  for backend in ash wgpu; do
    RGPU_BACKEND=$backend ./words/narrow_bench 2>&1 | sed "s/^/round $round words  /"
    RGPU_BACKEND=$backend ./native/narrow_bench 2>&1 | sed "s/^/round $round native /"
  done
done
RGPU_BACKEND=cuda ./words/narrow_bench 2>&1 | sed "s/^/cuda /"
