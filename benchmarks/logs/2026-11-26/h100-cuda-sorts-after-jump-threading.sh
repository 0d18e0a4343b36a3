#!/bin/bash
# After MIR jump threading was turned off for nvptx: the sort demo and rgpu-primitives on
# cuda again (the demo's numbers must not move), beside CUB in the same run.
P=$(pwd)/.pack/h100
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for a in radix bitonic; do
  BENCH_BACKENDS=cuda BENCH_ALGORITHMS=$a BENCH_SIZES=16,20,24,26 timeout 100 $P/demo/bench 2>&1 | grep -E "n=2\^|rror|panick"
done
cd $P/prim && BENCH_BACKENDS=cuda BENCH_SIZES=16,20,24,26 timeout 200 ./primitives_bench 2>&1 | grep -E "^bench|rror|panick"
nvcc -O3 -std=c++17 -arch=sm_90 -o primitives_cub primitives_cub.cu && timeout 120 ./primitives_cub 16 20 24 26 | grep "^bench"
