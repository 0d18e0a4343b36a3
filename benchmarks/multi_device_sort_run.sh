#!/usr/bin/env bash
# The multi-device sort on this machine's GPUs (packed by
# `EXAMPLE=multi_device_sort_bench benchmarks/primitives_pack.sh`): for 2^24 and 2^26 keys (u32 and
# f32), the single-device sort on GPU 0 and the multi-device sort over 1, 2 and 4 GPUs
# (those present), CUDA (NCCL moves the keys when libnccl.so.2 loads) and then ash (host
# memory moves them). Each `bench` line: median of BENCH_RUNS (10) wall times, min, max,
# spread; the multi lines add the speedup over the single sort and the largest device's
# share over an even one. Each `check` line says whether that sort's result was exact.
#   ./run.sh [SIZES] [DEVICES]      e.g. ./run.sh 24,26 1,2,4
set -uo pipefail
cd "$(dirname "$0")"
SIZES=${1:-24,26}
DEVICES=${2:-1,2,4}
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader || true
for backend in ${BACKENDS:-cuda ash}; do
  BENCH_BACKENDS=$backend BENCH_SIZES=$SIZES BENCH_DEVICES=$DEVICES \
    BENCH_OPS=${OPS:-sort_u32,sort_f32} ./multi_device_sort_bench
done
