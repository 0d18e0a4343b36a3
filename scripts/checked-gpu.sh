#!/bin/bash
# Checked launches on the GPU machine (no cargo there), from programs built here.
#
#   here:  FAULT_BIN=<ws>/target/release/checked_fault bash scripts/checked-gpu.sh --pack
#          (optional, for --cost: UK_BIN=... UK_CHECKED_BIN=... with the same --pack: the
#          user-kernels benchmark built `--backend cuda,wgpu,ash --arch sm_90` without and
#          with --checked)
#   there: bash scripts/checked-gpu.sh            # the fault test on cuda, ash, wgpu, naga
#          BACKENDS="cuda ash" [KERNELS=a,b] bash scripts/checked-gpu.sh --cost
#                                                 # what a checked build costs (user kernels)
#
# The fault test runs `checked_fault` (tests/integration/test_checked.py's workspace, built
# `rgpu build --backend cuda --backend wgpu --backend ash --arch sm_90 --checked`) on each
# path in BACKENDS (default: cuda ash wgpu naga, naga being wgpu through naga): its kernel
# `read_past_end` reads `x[item.index() + 1]` (one past the end on the last of 64 items), `count_past_end` adds
# to `Global` element `item.index() + 1`, then `saxpy` runs. It passes when each path's
# run prints (the cuda one's here; the others name their backend)
#   read_past_end: error: kernel `read_past_end` failed on cuda at kernel/src/lib.rs:LINE:COL:
#   index out of bounds: the len is 64 but the index is 64 of parameter `x` (checked launch): ...
#   count_past_end: error: kernel `count_past_end` failed on cuda at kernel/src/lib.rs:LINE:COL:
#   Global: index 64 is past the 64 elements of the buffer of parameter `counts` (checked launch): ...
#   saxpy after: right
# and exits 0: the fault is an Error and the device is usable after it (a release build
# traps on cuda, and every later call fails; on Vulkan it returns in silence). compute-sanitizer's memcheck, when the machine
# has it, then runs the same program: its ERROR SUMMARY is printed (no access leaves a
# buffer: the bounds check stops the read before it happens).
#
# --cost runs both user-kernels programs (--sizes large, on each backend in BACKENDS,
# default cuda) and prints, per
# kernel and size, the median device time (CUDA events) and wall time (launches + the wait,
# which in a checked build also reads the fault record) of each, and checked / release.
set -u
R=$(cd "$(dirname "$0")/.." && pwd)
DIR=$R/.device/checked
if [ "${1:-}" = "--pack" ]; then
  mkdir -p "$DIR"
  cp "${FAULT_BIN:?set FAULT_BIN to the built checked_fault}" "$DIR/checked_fault"
  echo "packed $FAULT_BIN"
  if [ -n "${UK_BIN:-}" ] && [ -n "${UK_CHECKED_BIN:-}" ]; then
    for pair in "$UK_BIN:user-kernels" "$UK_CHECKED_BIN:user-kernels-checked"; do
      [ "${pair%%:*}" -ef "$DIR/${pair##*:}" ] || cp "${pair%%:*}" "$DIR/${pair##*:}"
    done
    echo "packed $UK_BIN and $UK_CHECKED_BIN"
  fi
  exit 0
fi
if [ "${1:-}" = "--cost" ]; then
  for b in ${BACKENDS:-cuda}; do
  [ "$b" = naga ] && continue
  for p in user-kernels user-kernels-checked; do
    # shellcheck disable=SC2086 # KERNELS: an optional --kernels list
    RGPU_BACKEND=$b timeout 600 "$DIR/$p" --sizes large --backends "$b" ${KERNELS:+--kernels $KERNELS} \
      > "$DIR/$p.$b.jsonl"
    echo "$p on $b exited $?"
  done
  python3 - "$DIR/user-kernels.$b.jsonl" "$DIR/user-kernels-checked.$b.jsonl" "$b" <<'PY'
import json, sys
def medians(path):
    rows = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("backend") == sys.argv[3] and isinstance(r.get("device_ms"), dict):
            wall = r.get("wall_ms") if isinstance(r.get("wall_ms"), dict) else {}
            rows[(r["kernel"], r["size"])] = (
                r["device_ms"]["median"], wall.get("median", float("nan")), r.get("check")
            )
    return rows
release, checked = medians(sys.argv[1]), medians(sys.argv[2])
print(f"{'kernel':24} {'size':>10} {'device ms':>10} {'checked':>10} {'ratio':>6} "
      f"{'wall ms':>10} {'checked':>10} {'ratio':>6}  check (checked)")
for key in sorted(release):
    if key in checked:
        (r, rw, _), (c, cw, check) = release[key], checked[key]
        print(f"{key[0]:24} {key[1]:>10} {r:10.4f} {c:10.4f} {c / r:6.2f} "
              f"{rw:10.4f} {cw:10.4f} {cw / rw:6.2f}  {check}")
PY
  done
  exit 0
fi
# The fault test on each path the program was built for (BACKENDS: cuda, ash, wgpu, naga:
# wgpu through naga), each line as the cpu's but for the backend's name.
ok=1
for path in ${BACKENDS:-cuda ash wgpu naga}; do
  backend=$path
  env=(RGPU_BACKEND="$path")
  if [ "$path" = naga ]; then backend=wgpu; env=(RGPU_BACKEND=wgpu RGPU_WGPU_SHADER=naga); fi
  out=$(env "${env[@]}" timeout 120 "$DIR/checked_fault" 2>&1); rc=$?
  echo "-- $path (exit $rc)"
  echo "$out"
  pass=1
  echo "$out" | grep -q "^read_past_end: error: kernel \`read_past_end\` failed on $backend at kernel/src/lib.rs:[0-9]*:[0-9]*: index out of bounds: the len is 64 but the index is 64 of parameter \`x\`" || pass=0
  echo "$out" | grep -q "^count_past_end: error: kernel \`count_past_end\` failed on $backend at kernel/src/lib.rs:[0-9]*:[0-9]*: Global: index 64 is past the 64 elements of the buffer of parameter \`counts\`" || pass=0
  echo "$out" | grep -qx "saxpy after: right" || pass=0
  [ "$rc" = 0 ] || pass=0
  echo "checked-gpu $path: $([ $pass = 1 ] && echo PASS || echo FAIL)"
  [ $pass = 1 ] || ok=0
done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$SAN" ]; then
  RGPU_BACKEND=cuda timeout 300 "$SAN" --tool memcheck "$DIR/checked_fault" 2>&1 | grep -E "ERROR SUMMARY|^read_past_end|^count_past_end|^saxpy"
fi
if [ "$ok" = 1 ]; then echo "checked-gpu: PASS"; else echo "checked-gpu: FAIL"; exit 1; fi
