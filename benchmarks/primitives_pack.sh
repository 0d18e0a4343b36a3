#!/usr/bin/env bash
# Builds rgpu-primitives' benchmark here and packs what the GPU machine runs (it has no cargo
# and no network): a fresh workspace (`rgpu new --template minimal`) whose kernel crate
# depends on the vendored rgpu-primitives, benchmarks/primitives_bench.rs as its example,
# kernels built for BACKENDS (default cuda,wgpu,ash: rustc's nvptx PTX for ARCH, rust-gpu's
# SPIR-V), then OUT/pack: the example binary, CUB's baseline (primitives_cub.cu, built there
# by nvcc), CuPy's (primitives_cupy.py) and run.sh.
#
#   benchmarks/primitives_pack.sh [OUT]        # default OUT: target/primitives-bench
#   BACKENDS=cpu benchmarks/primitives_pack.sh  # the cpu rows only (no GPU toolchain)
#   EXAMPLE=multi_device_sort_bench BACKENDS=cuda,ash PACK=DIR benchmarks/primitives_pack.sh OUT
#       # the multi-device sort's benchmark instead (benchmarks/multi_device_sort_bench.rs), packed
#       # in DIR (default OUT/pack) with benchmarks/multi_device_sort_run.sh as its run.sh
#
# On the GPU machine: `cd pack && ./run.sh [SIZES]` (SIZES: powers of two, default
# 16,18,20,22,24,26) prints every `bench ...` line: rgpu on cuda, ash, wgpu, then CUB
# (nvcc) and CuPy. OPS="exclusive_scan_u32 ..." ./run.sh picks the rgpu ops (the scans:
# `exclusive_scan_u32` is the backend's choice, the single pass; `..._reduce_then_scan` the
# three-launch scan; the sorts: `sort_u32` is the backend's plan, count-then-scatter (three
# launches a pass); `sort_u32_onesweep` the one-launch-a-pass sort; every sort checked).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${1:-$REPO/target/primitives-bench}" && cd "${1:-$REPO/target/primitives-bench}" && pwd)
BACKENDS=${BACKENDS:-cuda,wgpu,ash}
ARCH=${ARCH:-sm_90}
RGPU=${RGPU:-rgpu}
EXAMPLE=${EXAMPLE:-primitives_bench}
PACK=$(mkdir -p "${PACK:-$OUT/pack}" && cd "${PACK:-$OUT/pack}" && pwd)
WS=$OUT/primbench
VERSION=$(python3 -c "import sys; sys.path.insert(0, '$REPO'); import rgpu; print(rgpu.__version__)")

if [ ! -d "$WS" ]; then
  "$RGPU" new primbench --template minimal --dir "$OUT"
  python3 - "$WS" "$VERSION" <<'EOF'
import sys
from pathlib import Path

ws, version = Path(sys.argv[1]), sys.argv[2]
vendored = f"vendor/rgpu-{version}"
root = ws / "Cargo.toml"
text = root.read_text()
text = text.replace(
    "[workspace.dependencies]\n",
    "[workspace.dependencies]\n"
    f'rgpu-primitives = {{ version = "={version}", path = "{vendored}/rgpu-primitives" }}\n',
)
text = text.replace(
    "rgpu.workspace = true\n",
    'rgpu.workspace = true\nrgpu-primitives.workspace = true\nrayon = "1.10"\n',
)
root.write_text(text)
kernel = ws / "kernel" / "Cargo.toml"
kernel.write_text(
    kernel.read_text().replace(
        "rgpu.workspace = true\n", "rgpu.workspace = true\nrgpu-primitives.workspace = true\n"
    )
)
(ws / ".cargo").mkdir(exist_ok=True)
(ws / ".cargo" / "config.toml").write_text(
    '[env]\nRGPU_WORKSPACE = { value = ".", relative = true }\n'
)
(ws / "examples").mkdir(exist_ok=True)
# rustc links a dependency's kernels into the kernel crate's PTX and SPIR-V only when the
# kernel crate names it (rgpu build says so otherwise).
lib = ws / "kernel" / "src" / "lib.rs"
lib.write_text(lib.read_text() + "\nuse rgpu_primitives as _;\n")
EOF
fi
# The workspace's vendored crates are this checkout's, also when it was made by an earlier run.
"$RGPU" vendor -C "$WS" -q
cp "$REPO/benchmarks/$EXAMPLE.rs" "$WS/examples/$EXAMPLE.rs"
if [ "$BACKENDS" != cpu ]; then
  "$RGPU" build -C "$WS" --backend "$BACKENDS" --arch "$ARCH" --yes
fi
FEATURES=$(echo "$BACKENDS" | tr ',' '\n' | { grep -v '^cpu$' || true; } | paste -sd, -)
TARGET=$(cd "$WS" && cargo metadata --format-version 1 --no-deps | python3 -c "import json, sys; print(json.load(sys.stdin)['target_directory'])")
(cd "$WS" && cargo build --release --example "$EXAMPLE" ${FEATURES:+--features "$FEATURES"})
cp "$TARGET/release/examples/$EXAMPLE" "$PACK/"
if [ "$EXAMPLE" != primitives_bench ]; then
  cp "$REPO/benchmarks/${EXAMPLE%_bench}_run.sh" "$PACK/run.sh"
  chmod +x "$PACK/run.sh"
  echo "packed: $PACK ($(ls "$PACK" | tr '\n' ' '))"
  exit 0
fi
cp "$REPO/benchmarks/primitives_cub.cu" "$REPO/benchmarks/primitives_cupy.py" "$PACK/"
cat > "$PACK/run.sh" <<'EOF'
#!/usr/bin/env bash
# rgpu-primitives against CUB on this GPU: rgpu on each backend, then CUB (nvcc), then CuPy.
set -uo pipefail
cd "$(dirname "$0")"
SIZES=${1:-16,18,20,22,24,26}
OPS=${OPS:-"sort_u32 sort_f32 sort_u64 sort_pairs_u32
  sort_u32_onesweep sort_f32_onesweep sort_u64_onesweep
  sort_pairs_u32_onesweep exclusive_scan_u32 inclusive_scan_u32
  exclusive_scan_u32_reduce_then_scan inclusive_scan_u32_reduce_then_scan reduce_sum_u32 reduce_sum_f32 reduce_max_f32 reduce_min_i32 histogram_256 copy_u32"}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Each (backend, op) in a process of its own: in one long Vulkan process the bench's
# host-side resets (uploads between timed runs) leave the GPU idle long enough for NVIDIA's
# driver to drop the SM clock to 345 MHz, and short Vulkan submissions do not bring it back
# (BENCHMARKS.md, rgpu-primitives: "clocks"); CUDA is not affected.
for backend in cuda ash wgpu; do
  for op in $OPS; do
    BENCH_BACKENDS=$backend BENCH_OPS=$op BENCH_SIZES=$SIZES ./primitives_bench
  done
done
# Each reduction's kernels on their own (BENCH_KERNELS=1: every launch inside its own
# Device::timed), beside the plain copy: the order-free reductions' device bandwidth as a
# fraction of the copy's (`kernel ... name=prim_reduce_unordered`, `bench ... op=copy_u32`).
if [ -z "${SKIP_KERNELS:-}" ]; then
  for backend in cuda ash wgpu; do
    for op in reduce_sum_u32 reduce_min_i32 reduce_max_f32 reduce_sum_f32; do
      BENCH_KERNELS=1 BENCH_BACKENDS=$backend BENCH_OPS=$op BENCH_SIZES=$SIZES ./primitives_bench
    done
  done
fi
if command -v nvcc >/dev/null; then
  nvcc -O3 -std=c++17 -arch=sm_90 -o primitives_cub primitives_cub.cu && ./primitives_cub ${SIZES//,/ }
else
  echo "no nvcc: CUB through CuPy only"
fi
python3 primitives_cupy.py ${SIZES//,/ }
EOF
chmod +x "$PACK/run.sh"
echo "packed: $PACK ($(ls "$PACK" | tr '\n' ' '))"
