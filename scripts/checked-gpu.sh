#!/bin/bash
# Checked launches on the GPU machine (no cargo there): runs the program built here with
#   rgpu build --backend cuda --arch sm_90 --checked
# in a workspace whose kernel `shift` reads `x[item.index() + 1]` (one past the end on the
# last item), followed by a correct `saxpy` launch (tests/integration/test_checked.py builds
# it; `--pack` copies it into .device/checked/).
#
#   here:  FAULT_BIN=<workspace>/target/release/fault bash scripts/checked-gpu.sh --pack
#   there: bash scripts/checked-gpu.sh
#
# Passes when the cuda run prints
#   shift: error: kernel `shift` failed on cuda at kernel/src/lib.rs:LINE:COL: index out of
#   bounds: the len is 64 but the index is 64 (checked launch): ...
#   saxpy after: right
# (the fault is an Error, the CUDA context is usable after it), and compute-sanitizer, when
# the machine has it, finds no error in the saxpy launch.
set -u
R=$(cd "$(dirname "$0")/.." && pwd)
DIR=$R/.device/checked
if [ "${1:-}" = "--pack" ]; then
  mkdir -p "$DIR" && cp "${FAULT_BIN:?set FAULT_BIN to the built program}" "$DIR/fault"
  echo "packed $FAULT_BIN"; exit 0
fi
out=$(RGPU_BACKEND=cuda timeout 120 "$DIR/fault" 2>&1); rc=$?
echo "$out"
ok=1
echo "$out" | grep -q "^shift: error: kernel \`shift\` failed on cuda at kernel/src/lib.rs:[0-9]*:[0-9]*: index out of bounds: the len is 64 but the index is 64" || ok=0
echo "$out" | grep -qx "saxpy after: right" || ok=0
[ "$rc" = 0 ] || ok=0
if [ "$ok" = 1 ]; then echo "checked-gpu: PASS"; else echo "checked-gpu: FAIL (exit $rc)"; exit 1; fi
