#!/bin/bash
# The GPU tier in one command, on the GPU machine (no cargo there): runs the programs built
# here on every backend and prints one summary line per (program, path).
#
#   here:  CORPUS_BIN=... SORTDEMO_BIN=... bash scripts/gpu-tier.sh --pack
#          # builds nothing; copies the built programs into .device/gpu-tier/
#   there: bash scripts/gpu-tier.sh [OUT]     # OUT: where the logs go ($OUT on the device machine)
#
# What it runs, each under a timeout (a hang is reported as such, never waited out):
# - the portability corpus (tests/corpus, built by tests/integration/test_corpus.py or by hand
#   as that test does) on cpu, cuda, ash, wgpu (SPIR-V passthrough) and wgpu through naga
#   (the path Metal and DX12 take): every kernel's line must equal the cpu's (on the GPUs
#   `grid_cover` launches 2^31 + 5 workgroups, more than a CUDA grid row holds);
# - the sort demo (`rgpu new`'s bitonic template with rgpu-primitives' radix sort; the corpus
#   workspace's own binary) with --verify: both algorithms, u32/i32/f32 keys, an odd length
#   (a partial last warp and tile), on cuda, ash and wgpu;
# - benchmarks/math_precision: each float function's largest error in ulp per backend;
# - benchmarks/user_kernels (--sizes large --check-only) when it was built;
# - rgpu-primitives' checks (the program of tests/fixtures/primitives, PRIMITIVES_BIN) on
#   cuda, ash, wgpu and wgpu through naga;
# - the runtime's conformance suite (crates/rgpu-runtime/tests/conformance.rs,
#   RUNTIME_CONFORMANCE_TESTS: `cargo test -p rgpu-runtime --features cuda,wgpu,ash --test
#   conformance --no-run`; its GLSL fixtures as below) on cuda, wgpu (also through naga) and
#   ash, each required;
# - the runtime's cuda tests (crates/rgpu-runtime/tests/cuda.rs, RUNTIME_CUDA_TESTS: the
#   binary `cargo test -p rgpu-runtime --features cuda --no-run` prints) with a GPU required;
# - the runtime's reliability tests (crates/rgpu-runtime/tests/reliability.rs,
#   RUNTIME_RELIABILITY_TESTS: `cargo test -p rgpu-runtime --features cuda,wgpu,ash --test
#   reliability --no-run`; its GLSL fixtures compiled here, RUNTIME_FIXTURES: the directory
#   of `*.fixture.spv` a run of those tests here left, e.g. crates/target/tmp/rgpu-runtime-fixtures):
#   an endless kernel on cuda, ash and wgpu is a timeout naming it and its process exits;
#   8 threads of mixed launches on one device, each checked; the GPUs filled until they refuse;
# - checked launches on cuda, ash, wgpu and naga (scripts/checked-gpu.sh, when its program is packed in
#   .device/checked: `scripts/checked-gpu.sh --pack`);
# - the sort demo's parity tests (its tests/parity.rs, PARITY_TESTS: special values, odd
#   lengths, both algorithms, against Rust's sort) on every backend built in, each required,
#   then on wgpu through naga.
# A corpus run that hangs is run again kernel by kernel (the ones it had not reported), each
# under its own timeout, so the summary names the kernel that hangs.
# The Vulkan loader comes from .gl/*.deb when the machine has none (docs/reference.md).
set -u
R=$(cd "$(dirname "$0")/.." && pwd)
DIR=$R/.device/gpu-tier
if [ "${1:-}" = "--pack" ]; then
  mkdir -p "$DIR"
  if [ -n "${SORTDEMO_BIN:-}" ] && [ -x "$SORTDEMO_BIN" ]; then
    cp "$SORTDEMO_BIN" "$DIR/sortdemo"; echo "packed $SORTDEMO_BIN as sortdemo"
  fi
  for bin in "${CORPUS_BIN:-}" "$R/benchmarks/math_precision/target/release/math-precision" \
    "$R/benchmarks/user_kernels/target/release/user-kernels"; do
    if [ -n "$bin" ] && [ -x "$bin" ]; then cp "$bin" "$DIR/"; echo "packed $bin"; fi
  done
  if [ -n "${PRIMITIVES_BIN:-}" ] && [ -x "$PRIMITIVES_BIN" ]; then
    cp "$PRIMITIVES_BIN" "$DIR/primitives"; echo "packed $PRIMITIVES_BIN as primitives"
  fi
  if [ -n "${PARITY_TESTS:-}" ] && [ -x "$PARITY_TESTS" ]; then
    cp "$PARITY_TESTS" "$DIR/parity-tests"; echo "packed $PARITY_TESTS as parity-tests"
  fi
  if [ -n "${RUNTIME_CUDA_TESTS:-}" ] && [ -x "$RUNTIME_CUDA_TESTS" ]; then
    cp "$RUNTIME_CUDA_TESTS" "$DIR/runtime-cuda-tests"; echo "packed $RUNTIME_CUDA_TESTS as runtime-cuda-tests"
  fi
  if [ -n "${RUNTIME_RELIABILITY_TESTS:-}" ] && [ -x "$RUNTIME_RELIABILITY_TESTS" ] \
    && [ -f "${RUNTIME_FIXTURES:-}/spin.fixture.spv" ]; then
    cp "$RUNTIME_RELIABILITY_TESTS" "$DIR/runtime-reliability-tests"
    echo "packed $RUNTIME_RELIABILITY_TESTS as runtime-reliability-tests"
  fi
  if [ -n "${RUNTIME_CONFORMANCE_TESTS:-}" ] && [ -x "$RUNTIME_CONFORMANCE_TESTS" ] \
    && [ -f "${RUNTIME_FIXTURES:-}/kernels.fixture.spv" ]; then
    cp "$RUNTIME_CONFORMANCE_TESTS" "$DIR/runtime-conformance-tests"
    echo "packed $RUNTIME_CONFORMANCE_TESTS as runtime-conformance-tests"
  fi
  if [ -n "${RUNTIME_FIXTURES:-}" ] && ls "$RUNTIME_FIXTURES"/*.fixture.spv > /dev/null 2>&1; then
    mkdir -p "$DIR/runtime-fixtures" && cp "$RUNTIME_FIXTURES"/*.fixture.spv "$DIR/runtime-fixtures/"
    echo "packed the runtime's fixtures from $RUNTIME_FIXTURES"
  fi
  exit 0
fi
OUT=${1:-${OUT:-$R/.device/gpu-tier-out}}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu-machine-vulkan.sh
. "$R/scripts/gpu-machine-vulkan.sh"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
# The environment of a path in `env`: its backend; on the GPUs, the corpus's grid_cover
# launch past a CUDA grid row (2^31 - 1 workgroups).
path_env() {
  env=(RGPU_BACKEND="$1")
  if [ "$1" = naga ]; then env=(RGPU_BACKEND=wgpu RGPU_WGPU_SHADER=naga); fi
  if [ "$1" != cpu ]; then env+=(RGPU_CORPUS_GROUPS=2147483653); fi
}
run_path() { # name, path, command...
  local name=$1 path=$2; shift 2
  local env
  path_env "$path"
  env "${env[@]}" timeout 300 "$@" > "$OUT/$name.$path" 2>&1
  local rc=$?
  if [ $rc = 124 ]; then say "$name on $path: HANG (killed after 300 s)"; fi
  return $rc
}
# The corpus on one path; after a hang, each kernel it had not reported alone (60 s each).
corpus_path() {
  local path=$1
  run_path corpus "$path" "$DIR/corpus"
  [ $? = 124 ] || return 0
  local kernel
  for kernel in $(tail -n +2 "$OUT/corpus.cpu" | cut -d: -f1); do
    grep -q "^$kernel:" "$OUT/corpus.$path" && continue
    local env
    path_env "$path"
    if ! env "${env[@]}" timeout 60 "$DIR/corpus" "$kernel" 2>&1 | grep "^$kernel:" >> "$OUT/corpus.$path"; then
      echo "$kernel: HANG (no answer in 60 s, alone)" >> "$OUT/corpus.$path"
    fi
  done
}
# A path's kernel lines in the cpu run's order (the reruns after a hang come last).
sort_like_cpu() {
  local kernel
  for kernel in $(tail -n +2 "$OUT/corpus.cpu" | cut -d: -f1); do
    grep -m1 "^$kernel:" "$1" || echo "$kernel: no answer"
  done
}
if [ -x "$DIR/corpus" ]; then
  for path in cpu cuda ash wgpu naga; do corpus_path "$path"; done
  for path in cuda ash wgpu naga; do
    total=$(sort_like_cpu "$OUT/corpus.$path" | wc -l)
    differ=$(diff <(tail -n +2 "$OUT/corpus.cpu") <(sort_like_cpu "$OUT/corpus.$path") | grep -c '^>')
    errors=$(grep -c ': error:' "$OUT/corpus.$path")
    say "corpus on $path: $((total - differ)) of $total kernels equal the cpu's; $differ differ ($errors errors)"
    diff <(tail -n +2 "$OUT/corpus.cpu") <(sort_like_cpu "$OUT/corpus.$path") | grep '^>' | sed 's/^/    /' | tee -a "$SUMMARY"
  done
fi
if [ -x "$DIR/sortdemo" ]; then
  for backend in cuda ash wgpu; do
    bad=0; runs=0
    for algorithm in bitonic radix; do
      for type in u32 i32 f32; do
        runs=$((runs + 1))
        if ! timeout 120 "$DIR/sortdemo" --backend "$backend" --algorithm "$algorithm" --type "$type" \
          --len 1000003 --verify >> "$OUT/sortdemo.$backend" 2>&1; then
          bad=$((bad + 1)); echo "    FAILED: $algorithm $type" >> "$OUT/sortdemo.$backend"
        fi
      done
    done
    say "sort demo on $backend: $((runs - bad)) of $runs sorts verified"
  done
fi
if [ -x "$DIR/math-precision" ]; then
  timeout 300 "$DIR/math-precision" --backends cpu,cuda,ash,wgpu > "$OUT/math_precision.txt" 2>&1
  say "math-precision exited $? ($(wc -l < "$OUT/math_precision.txt") lines in math_precision.txt)"
fi
if [ -x "$DIR/user-kernels" ]; then
  timeout 420 "$DIR/user-kernels" --sizes large --check-only --backends cuda,ash,wgpu \
    > "$OUT/user_kernels_checks.jsonl" 2>&1
  rc=$?
  passed=$(grep -c '"check": "equal"\|"check": "within\|"check": "unfused' "$OUT/user_kernels_checks.jsonl")
  total=$(grep -c '"backend": "\(cuda\|ash\|wgpu\)"' "$OUT/user_kernels_checks.jsonl")
  say "user-kernels (large, checks only) exited $rc: $passed of $total checks pass"
fi
if [ -x "$DIR/primitives" ]; then
  for path in cuda ash wgpu naga; do
    run_path primitives "$path" "$DIR/primitives"
    rc=$?
    if grep -q "all checks passed" "$OUT/primitives.$path"; then
      say "primitives on $path: all checks passed"
    else
      say "primitives on $path: FAILED (exit $rc; primitives.$path)"
      grep -i "differ\|error\|panick" "$OUT/primitives.$path" | head -5 | sed 's/^/    /' | tee -a "$SUMMARY"
    fi
  done
fi
if [ -x "$DIR/parity-tests" ]; then
  RGPU_REQUIRE_BACKENDS=cuda,ash,wgpu timeout 600 "$DIR/parity-tests" --test-threads=1 > "$OUT/parity_tests.txt" 2>&1
  say "parity tests (cuda, ash, wgpu required) exited $?: $(grep '^test result' "$OUT/parity_tests.txt" | tail -1)"
  RGPU_REQUIRE_BACKENDS=wgpu RGPU_WGPU_SHADER=naga timeout 600 "$DIR/parity-tests" --test-threads=1 > "$OUT/parity_tests.naga.txt" 2>&1
  say "parity tests again, wgpu through naga, exited $?: $(grep '^test result' "$OUT/parity_tests.naga.txt" | tail -1)"
fi
if [ -x "$DIR/runtime-conformance-tests" ]; then
  # One process for every backend: each backend's devices made and dropped in turn (on
  # NVIDIA's driver wgpu once found no adapter there after ash's tests: BENCHMARKS.md, the
  # eighth session's GPU tier).
  RGPU_FIXTURE_DIR=$DIR/runtime-fixtures RGPU_REQUIRE_CUDA=1 RGPU_REQUIRE_VULKAN=1 \
    timeout 600 "$DIR/runtime-conformance-tests" --test-threads=1 > "$OUT/runtime_conformance_tests.txt" 2>&1
  say "runtime conformance tests (cuda, wgpu, ash required) exited $?: $(grep '^test result' "$OUT/runtime_conformance_tests.txt" | tail -1)"
fi
if [ -x "$DIR/runtime-cuda-tests" ]; then
  RGPU_REQUIRE_CUDA=1 timeout 300 "$DIR/runtime-cuda-tests" --test-threads=1 > "$OUT/runtime_cuda_tests.txt" 2>&1
  say "runtime cuda tests exited $?: $(grep '^test result' "$OUT/runtime_cuda_tests.txt" | tail -1)"
fi
if [ -x "$DIR/runtime-reliability-tests" ]; then
  RGPU_FIXTURE_DIR=$DIR/runtime-fixtures RGPU_REQUIRE_VULKAN=1 RGPU_LOAD_LAUNCHES=${RGPU_LOAD_LAUNCHES:-10000} RGPU_LOAD_FILL=1 \
    timeout 600 "$DIR/runtime-reliability-tests" --test-threads=1 --nocapture > "$OUT/runtime_reliability_tests.txt" 2>&1
  say "runtime reliability tests exited $?: $(grep '^test result' "$OUT/runtime_reliability_tests.txt" | tail -1)"
  grep -E 'exited 0 after|did not exit|launches in|full after' "$OUT/runtime_reliability_tests.txt" | sed 's/^/    /' | tee -a "$SUMMARY"
fi
if [ -x "$R/.device/checked/checked_fault" ]; then
  bash "$R/scripts/checked-gpu.sh" > "$OUT/checked_gpu.txt" 2>&1
  say "checked launches (scripts/checked-gpu.sh) exited $?: $(tail -1 "$OUT/checked_gpu.txt")"
fi
