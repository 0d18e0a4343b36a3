#!/bin/bash
# GPU call 1 (2026-11-29): the user kernels with three n-body variants (scratch build, /tmp/ukx:
# nbody_div = 1/sqrt, nbody_unchecked = load_unchecked, nbody_unroll4 = inner loop written 4x)
# beside the twins, ncu of the n-body kernels on cuda, then the GPU tier. -> results.tgz
set -u
FINAL=${OUT:-/tmp/out}
export OUT=/tmp/results
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p benchmarks/user_kernels/target/release
cp .device/gpu-tier/user-kernels benchmarks/user_kernels/target/release/user-kernels
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
bash benchmarks/user_kernels.sh 2>&1 | tee "$OUT/user_kernels_run.log" | tail -80
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 120 "$NCU" -k regex:nbody --launch-count 16 --section SpeedOfLight --section WarpStateStats --section InstructionStats \
  benchmarks/user_kernels/target/release/user-kernels --kernels nbody,nbody_div,nbody_unchecked,nbody_unroll4 --backends cuda --sizes large --reps 1 > "$OUT/ncu_nbody.txt" 2>&1
echo "ncu exited $?"; grep -E "nbody|Duration|Compute \(SM\) Throughput|Stall|Executed Instructions  " "$OUT/ncu_nbody.txt" | head -40
bash scripts/gpu-tier.sh "$OUT" 2>&1 | tail -40
tar -czf "$FINAL/results.tgz" -C "$OUT" .
