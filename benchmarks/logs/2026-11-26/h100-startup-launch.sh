#!/bin/sh
# Start-up (process start to first result) and launch overhead (launch+sync, wall minus
# device time) on cuda, ash and wgpu beside CuPy's context creation, before and after the
# changes of BENCHMARKS.md "Start-up, launch overhead and the edit loop". Run on the GPU
# machine from the repository root; writes h100-startup-launch.log (tee).
#
# Built here first (the GPU machine has no cargo), into paths `run` carries:
#   git archive <branch point> | tar -x -C /tmp/rgpu-base      # the rgpu before
#   .venv/bin/python benchmarks/startup_and_launch_overhead.py .device/startup --build \
#       --variant base=/tmp/rgpu-base --variant new --backends cuda,wgpu,ash --arch sm_90
#   (cd crates && cargo test --release -p rgpu-runtime --features cuda --test cuda --no-run)
#   mkdir -p .device/runtime-tests && cp crates/target/release/deps/cuda-<hash> \
#       .device/runtime-tests/cuda          # the newest cuda-* executable there
# carry: .device/startup .device/runtime-tests
set -eu
log=benchmarks/logs/2026-11-26/h100-startup-launch.log
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  echo "== every variant and backend; cuda with and without the driver's JIT cache"
  python3 benchmarks/startup_and_launch_overhead.py .device/startup \
    --backends cuda,ash,wgpu --runs 5 --launches 2000 --rounds 7
  echo "== the Vulkan backends with waits that block at once (the kept bindings alone)"
  RGPU_SPIN_WAIT_US=0 python3 benchmarks/startup_and_launch_overhead.py .device/startup \
    --backends ash,wgpu --runs 1 --launches 2000 --rounds 7
  echo "== the runtime's CUDA tests (the SASS one included), CUDA required"
  RGPU_REQUIRE_CUDA=1 .device/runtime-tests/cuda --test-threads=1
} 2>&1 | tee "$log"
