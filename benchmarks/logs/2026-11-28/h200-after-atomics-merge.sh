#!/bin/bash
# GPU call 3 (2026-11-28, after the atomics merge): the user kernels (n-body, softmax, looped sums among them) beside
# their CUDA C++ twins, then the GPU tier (corpus on every path, the sort demo, math precision,
# the user kernels' checks). Everything lands in results.tgz.
set -u
FINAL=${OUT:-/tmp/out}
export OUT=/tmp/results
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p benchmarks/user_kernels/target/release
cp .device/gpu-tier/user-kernels benchmarks/user_kernels/target/release/user-kernels
bash benchmarks/user_kernels.sh 2>&1 | tee "$OUT/user_kernels_run.log" | tail -70
bash scripts/gpu-tier.sh "$OUT" 2>&1 | tail -40
tar -czf "$FINAL/results.tgz" -C "$OUT" .
