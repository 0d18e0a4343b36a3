#!/bin/bash
# GPU call 4 (2026-11-29, final tree of the session): the user kernels (with nbody_tuned:
# registers = 64 + unroll!) beside their CUDA C++ twins, then the whole GPU tier. Everything
# is packed into results.tgz after at most 540 s.
set -u
FINAL=$OUT; export OUT=/tmp/res; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p benchmarks/user_kernels/target/release
cp .device/gpu-tier/user-kernels benchmarks/user_kernels/target/release/user-kernels
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt"
timeout 540 bash -c 'bash benchmarks/user_kernels.sh 2>&1 | tee "$OUT/user_kernels_run.log" | grep -E "nbody|softmax|looped|exited|^20"; bash scripts/gpu-tier.sh "$OUT/tier" 2>&1 | tail -30'
tar -czf "$FINAL/results.tgz" -C "$OUT" .
