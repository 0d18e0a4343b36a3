#!/bin/bash
# Builds what benchmarks/logs/2026-11-25-h100-issue19.sh runs on the H100, here (rust-gpu's
# nightly and cargo-gpu installed, rustc-web + llvm-22 for nvptx), and packs it:
#   bash benchmarks/issue19_pack.sh WORK   # WORK holds sortdemo/ (rgpu new sortdemo),
#                                          # saxpy/ (rgpu new saxpy --template minimal, plus
#                                          # tests/saxpy.py's add_mad_chain) and fixture/
#                                          # (python3 tests/spirv_fixture.py WORK/fixture)
# -> WORK/pack.tar.xz with glsl/, raw/, noopt/, opt/ (sortdemo, bench; opt/ also parity), saxpy/
# (saxpy, parity, mad_chain), fused/ (mad_chain built with float-contraction = true) and
# cub_cupy.py. Every variant has the same nvptx PTX for cuda.
set -eux
W=$(cd "$1" && pwd)
RGPU=${RGPU:-rgpu}
RGPU_BEFORE=${RGPU_BEFORE:?the rgpu of main before issue 19, e.g. /work/main/.venv/bin/rgpu}
HERE=$(cd "$(dirname "$0")" && pwd)
P=$W/pack
rm -rf "$P"; mkdir -p "$P"
newest() { ls -t target/release/deps/"$1"-* | grep -v '\.d$' | head -1; }
put() { mkdir -p "$P/$1"; cp "${@:2}" "$P/$1/"; }
B="--backend cuda,wgpu,ash --arch sm_90"
cd "$W/sortdemo"
$RGPU build $B --kernel-artifact "$W/fixture/all.fixture.spv"
put glsl target/release/sortdemo target/release/examples/bench
# raw: rust-gpu's module as rgpu before issue 19 embedded it (rust-gpu's own spirv-opt -O
# inside its linker, no NoContraction): built with that rgpu ($RGPU_BEFORE).
$RGPU_BEFORE build $B --recompile --yes
cp target/rgpu/kernels/manifest.json "$W/manifest-raw.json"
cp target/rgpu/kernels/*.spv "$W/raw.spv"
put raw target/release/sortdemo target/release/examples/bench
# noopt: rust-gpu without any spirv-opt (--no-spirv-opt), NoContraction only.
RGPU_SPIRV_OPT=0 $RGPU build $B --recompile --yes
cp target/rgpu/kernels/*.spv "$W/noopt.spv"
put noopt target/release/sortdemo target/release/examples/bench
$RGPU build $B --recompile --yes
cp target/rgpu/kernels/manifest.json "$W/manifest-opt.json"
cp target/rgpu/kernels/*.spv "$W/opt.spv"
put opt target/release/sortdemo target/release/examples/bench
cp "$(newest parity)" "$P/opt/parity"
cd "$W/saxpy"
$RGPU build $B --yes
cp target/rgpu/kernels/manifest.json "$W/manifest-saxpy.json"
put saxpy target/release/saxpy
cp "$(newest parity)" "$P/saxpy/parity"; cp "$(newest mad_chain)" "$P/saxpy/mad_chain"
RGPU_FLOAT_CONTRACTION=1 $RGPU build $B --yes
put fused "$(newest mad_chain)"; mv "$P"/fused/mad_chain-* "$P/fused/mad_chain"
RGPU_FLOAT_CONTRACTION=0 $RGPU build $B --yes  # leave the workspace as the default builds it
cp "$HERE/cub_cupy.py" "$P/"
strip "$P"/*/* 2>/dev/null || true
(cd "$P" && tar -cJf "$W/pack.tar.xz" .)
ls -la "$W/pack.tar.xz"
