#!/bin/bash
# rgpu's webgpu programs in Dawn (Chrome's WebGPU engine) under Node, on the GPU machine's
# Vulkan (issue 38): the page files `rgpu run --backend webgpu --engine dawn` runs here, run
# there with no cargo, no rgpu and no network.
#
#   here:  SAXPY_PAGE=<ws>/target/rgpu/web/<bin> SORT_PAGE=... PRIMITIVES_PAGE=... \
#            bash scripts/webgpu-dawn-bundle.sh --pack
#          # rgpu's node and dawn.node (web/dawn.py: downloaded from npm if missing) and the
#          # pages given (each built by `rgpu build --backend webgpu`) into
#          # .device/webgpu-dawn.tar.xz (about 40 MB; refused over 64 MiB)
#   there: bash scripts/webgpu-dawn-bundle.sh [OUT]   # OUT: where the logs go
#
# What it runs there, each under a timeout, each checked by what the program prints:
# - the adapter Dawn picks (vendor, architecture, device, description);
# - SAXPY (`rgpu new --template minimal`) with --check: identical to plain Rust;
# - the sort demo (`rgpu new`'s template) with --verify --bench: bitonic and radix, u32/i32/f32
#   keys, 1,000,003 keys; its own median time of 10 runs; beside it the native program on
#   wgpu when scripts/gpu-tier.sh --pack left one (.device/gpu-tier/sortdemo);
# - rgpu-primitives' checks (tests/fixtures/primitives' program, built as
#   tests/integration/test_primitives.py builds it) at every size: "all checks passed".
# Each line of the summary ($OUT/summary.txt) also gives the run's wall time (node's start,
# Dawn's device and the pipelines' compiles included).
set -u
R=$(cd "$(dirname "$0")/.." && pwd)
TAR=$R/.device/webgpu-dawn.tar.xz
if [ "${1:-}" = "--pack" ]; then
  found=$(PYTHONPATH=$R ${PYTHON:-python3} -c '
import os
from rgpu.web import dawn
found = dawn.ensure(os.environ, True, None)
print(found.node, found.dawn_node)') || exit 1
  read -r node dawn_node <<< "$found"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  D=$stage/webgpu-dawn
  mkdir -p "$D/pages"
  cp "$node" "$dawn_node" "$D/"
  cp "$(dirname "$node")/../LICENSE" "$D/LICENSE.node"
  cp "$(dirname "$dawn_node")/../LICENSE" "$D/LICENSE.webgpu"
  for pair in saxpy:SAXPY_PAGE sort:SORT_PAGE primitives:PRIMITIVES_PAGE; do
    name=${pair%%:*} var=${pair#*:}
    page=${!var:-}
    if [ -n "$page" ] && [ -f "$page/rgpu-node.mjs" ]; then
      cp -r "$page" "$D/pages/$name"; echo "packed $page as pages/$name"
    elif [ -n "$page" ]; then
      echo "error: $var=$page has no rgpu-node.mjs (build it with \`rgpu build --backend webgpu\`)" >&2
      exit 1
    fi
  done
  mkdir -p "$(dirname "$TAR")"
  tar -C "$stage" -cf - webgpu-dawn | xz -T0 -6 > "$TAR"
  size=$(stat -c %s "$TAR")
  echo "wrote $TAR ($((size / 1048576)) MiB)"
  if [ "$size" -gt $((64 * 1048576)) ]; then echo "error: over 64 MiB" >&2; exit 1; fi
  exit 0
fi
OUT=${1:-${OUT:-$R/.device/webgpu-dawn-out}}
mkdir -p "$OUT"
# shellcheck source=scripts/gpu-machine-vulkan.sh
. "$R/scripts/gpu-machine-vulkan.sh"
D=$R/.device/webgpu-dawn
if [ ! -x "$D/node" ]; then tar -C "$R/.device" -xJf "$TAR" || exit 1; fi
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
failed=0
# name, log, the lines its output must contain (separated by ';'), the program's
# arguments...: runs the page's program in Node with Dawn under a timeout; one summary line
# with the wall time. Each program says the device it ran on: a Dawn without an adapter would
# leave the program on its next backend (the cpu's, in wasm), which is no pass.
run_page() {
  local name=$1 log=$2 want=$3; shift 3
  local start end rc line ok=1
  start=$(date +%s%N)
  timeout 300 "$D/node" "$D/pages/$name/rgpu-node.mjs" "$D/dawn.node" "$@" > "$OUT/$log" 2>&1
  rc=$?
  end=$(date +%s%N)
  local wall=$(((end - start) / 1000000))
  IFS=';' read -ra lines <<< "$want"
  for line in "${lines[@]}"; do grep -qF -- "$line" "$OUT/$log" || ok=0; done
  if [ $rc = 0 ] && [ $ok = 1 ]; then
    say "$name${*:+ $*}: ok (${wall} ms wall)"
  else
    failed=$((failed + 1))
    if [ $rc = 124 ]; then say "$name${*:+ $*}: HANG (killed after 300 s)"; else
      say "$name${*:+ $*}: FAILED (exit $rc; $log)"; fi
    grep -iv "^Warning: maxDynamic" "$OUT/$log" | tail -5 | sed 's/^/    /' | tee -a "$SUMMARY"
  fi
}
say "node $("$D/node" --version), Dawn from npm's webgpu 0.6.2"
say "adapter: $("$D/node" --input-type=module -e "
import { createRequire } from 'node:module';
const { create } = createRequire(import.meta.url)('$D/dawn.node');
const a = await create([]).requestAdapter({ powerPreference: 'high-performance' });
const i = a && a.info;
console.log(i ? [i.vendor, i.architecture, i.device, i.description].join(' | ') : 'none');
process.exit(0);" 2>&1 | grep -v '^Warning: maxDynamic')"
if [ -d "$D/pages/saxpy" ]; then
  for n in 100000 16777216; do run_page saxpy "saxpy.$n" "saxpy on webgpu;check: identical to plain Rust" \
    --n $n --check; done
fi
if [ -d "$D/pages/sort" ]; then
  for algorithm in bitonic radix; do
    for type in u32 i32 f32; do
      args=(--algorithm "$algorithm" --type "$type" --len 1000003 --verify --bench)
      run_page sort "sort.$algorithm.$type" "on webgpu;verified: identical to Rust's sort" "${args[@]}"
      grep "^sorted" "$OUT/sort.$algorithm.$type" | sed 's/^/    dawn: /' | tee -a "$SUMMARY"
      if [ -x "$R/.device/gpu-tier/sortdemo" ]; then
        timeout 120 "$R/.device/gpu-tier/sortdemo" --backend wgpu "${args[@]}" \
          > "$OUT/sort.$algorithm.$type.wgpu" 2>&1
        grep "^sorted" "$OUT/sort.$algorithm.$type.wgpu" | sed 's/^/    wgpu: /' | tee -a "$SUMMARY"
      fi
    done
  done
fi
if [ -d "$D/pages/primitives" ]; then
  run_page primitives primitives "device: webgpu;all checks passed"
fi
say "$failed failed"
[ $failed = 0 ]
