#!/bin/bash
# Builds what benchmarks/logs/2026-11-25-h100-issue19-run4{,b}.sh run on the H100 (issue 19,
# "Each lever" 5: the demo kernels' control flow), here, and packs it:
#   RGPU_MAIN=/work/main/.venv/bin/rgpu RGPU=.venv/bin/rgpu bash benchmarks/issue19_pack4.sh WORK
# RGPU_MAIN: an rgpu whose templates are main's before this change (2950f35); RGPU: this
# branch's. WORK must not exist. -> WORK/pack.tar.xz with base/ (main's kernels), v0/, v1/
# (what is committed), v1i/, v2/ (sortdemo, bench; v1, v1i, v2 also parity). The variants are
# the patches beside the run logs, applied to a workspace's kernel crate:
#   v0  = main + run4-v0.patch  (the ranking's 8 ballots unrolled, branch-free)
#   v1i = v1 + run4-v1i.patch   (an identity KeyMap instead of Option<KeyMap>)
#   v2  = v1 + run4-v2.patch    (v1i + clamped loads and selects instead of conditional
#                                array writes; run 4's first call calls it "new")
# Every variant has its own nvptx PTX for cuda (only base, v1, v1i, v2 are timed on cuda).
set -eux
W=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
RGPU=${RGPU:-rgpu}
RGPU_MAIN=${RGPU_MAIN:?an rgpu with main\'s templates before this change}
LOGS=$(cd "$(dirname "$0")" && pwd)/logs
mkdir "$W"
P=$W/pack
mkdir -p "$P"
B="--backend cuda,wgpu,ash --arch sm_90 --yes"
put() { # variant workspace-dir binary-name [parity]
  mkdir -p "$P/$1"
  cp "$2/target/release/$3" "$P/$1/sortdemo"
  cp "$2/target/release/examples/bench" "$P/$1/"
  if [ "${4:-}" = parity ]; then
    cp "$(ls -t "$2"/target/release/deps/parity-* | grep -v '\.d$' | head -1)" "$P/$1/parity"
  fi
  cp "$2"/target/rgpu/kernels/*.spv "$W/$1.spv"
}
cd "$W"
$RGPU_MAIN new base && (cd base && $RGPU_MAIN build $B)
put base "$W/base" base
patch -d base -p1 < "$LOGS/2026-11-25-issue19-run4-v0.patch"
(cd base && $RGPU_MAIN build $B)
put v0 "$W/base" base
$RGPU new v1 && (cd v1 && $RGPU build $B)
put v1 "$W/v1" v1 parity
patch -d v1 -p1 < "$LOGS/2026-11-25-issue19-run4-v1i.patch"
(cd v1 && $RGPU build $B)
put v1i "$W/v1" v1 parity
patch -d v1 -R -p1 < "$LOGS/2026-11-25-issue19-run4-v1i.patch"
patch -d v1 -p1 < "$LOGS/2026-11-25-issue19-run4-v2.patch"
(cd v1 && $RGPU build $B)
put v2 "$W/v1" v1 parity
strip "$P"/*/* 2>/dev/null || true
(cd "$P" && tar -cJf "$W/pack.tar.xz" .)
ls -la "$W/pack.tar.xz"
