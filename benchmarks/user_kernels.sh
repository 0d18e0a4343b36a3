#!/bin/bash
# The user-style kernels on the GPU machine, beside their CUDA C++ twins, as one command from
# the repository root:
#   bash benchmarks/user_kernels.sh [ARGS for user-kernels, e.g. --kernels reduce_sum]
# Needs the program built here first (rgpu's machines: cargo, rust-gpu, the nvptx toolchain):
#   (cd benchmarks/user_kernels && rgpu build --backend cuda,wgpu,ash --arch sm_90)
# and carried: benchmarks/user_kernels/target/release/user-kernels. On the GPU machine it
# needs CuPy (the twins) and an NVIDIA Vulkan driver for wgpu and ash (the Vulkan loader from
# .gl/*.deb when the machine has none, as the earlier runs did).
# Writes user_kernels.jsonl (rgpu: cuda, wgpu, ash), user_kernels_twins.jsonl and
# user_kernels_table.txt to $OUT (the device's output folder) or benchmarks/logs/<date>/, and
# prints the table: kernel, size, backend, device ms, wall ms, twin ms, ratio, GB/s, check.
set -u
R=$(cd "$(dirname "$0")/.." && pwd)
DIR=${OUT:-$R/benchmarks/logs/$(date -u +%F)}
mkdir -p "$DIR"
BIN=$R/benchmarks/user_kernels/target/release/user-kernels
if [ ! -x "$BIN" ]; then
  echo "error: $BIN is missing: build it with (cd benchmarks/user_kernels && rgpu build --backend cuda,wgpu,ash --arch sm_90) and carry it" >&2
  exit 1
fi
# shellcheck source=scripts/gpu-machine-vulkan.sh
. "$R/scripts/gpu-machine-vulkan.sh"
date -u +%FT%TZ
# cuda in one process; each Vulkan kernel in a process of its own: in one long process
# NVIDIA's Vulkan driver let the clock drop between kernels (blur, gather, scatter and
# histogram ran 2.4-4.9x their fresh-process times: BENCHMARKS.md, "The Vulkan growth was
# the clock"), which a fresh process does not show.
timeout 420 "$BIN" --sizes large "$@" --backends cuda > "$DIR/user_kernels.jsonl"
echo "user-kernels on cuda exited $?"
for kernel in $("$BIN" --sizes large --list "$@"); do
  for backend in ash wgpu; do
    # (The last --backends and --kernels win over the ones in ARGS.)
    timeout 120 "$BIN" --sizes large "$@" --backends "$backend" --kernels "$kernel" \
      >> "$DIR/user_kernels.jsonl" || echo "user-kernels $kernel on $backend exited $?"
  done
done
timeout 150 python3 "$R/benchmarks/user_kernels_twins.py" --expected "$DIR/user_kernels.jsonl" \
  > "$DIR/user_kernels_twins.jsonl"
echo "twins exited $?"
python3 "$R/benchmarks/user_kernels_table.py" "$DIR/user_kernels.jsonl" \
  "$DIR/user_kernels_twins.jsonl" | tee "$DIR/user_kernels_table.txt"
date -u +%FT%TZ
