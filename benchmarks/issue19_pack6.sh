#!/bin/bash
# Builds what benchmarks/logs/2026-11-25-h100-issue19-run6.sh (and run 8) run on the H100, here
# (rust-gpu's nightly and cargo-gpu installed, rustc-web + llvm-22 for nvptx), and packs it:
#   RGPU=/work/main/.venv/bin/rgpu bash benchmarks/issue19_pack6.sh WORK   # WORK must not exist
# -> WORK/pack.tar.xz with cur/ (main's demo: rust-gpu's SPIR-V; sortdemo, bench, parity, the
# kernels) and glsl/ (the same host and PTX, the GLSL twin tests/fixtures/spirv as SPIR-V).
set -eux
W=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
RGPU=${RGPU:-rgpu}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir "$W"
P=$W/pack
mkdir -p "$P/cur" "$P/glsl"
B="--backend cuda,wgpu,ash --arch sm_90"
cd "$W"
"$RGPU" new sortdemo
python3 "$HERE/../tests/spirv_fixture.py" "$W/fixture"
cd sortdemo
"$RGPU" build $B --yes
cp target/release/sortdemo target/release/examples/bench "$P/cur/"
cp "$(ls -t target/release/deps/parity-* | grep -v '\.d$' | head -1)" "$P/cur/parity"
cp target/rgpu/kernels/*.spv target/rgpu/kernels/*.ptx "$P/cur/"
"$RGPU" build $B --kernel-artifact "$W/fixture/all.fixture.spv"
cp target/release/sortdemo target/release/examples/bench "$W/fixture/all.fixture.spv" "$P/glsl/"
"$RGPU" build $B --recompile  # leave the workspace on rust-gpu's kernels
strip "$P"/*/sortdemo "$P"/*/bench "$P"/cur/parity
(cd "$P" && tar -cJf "$W/pack.tar.xz" .)
ls -la "$W/pack.tar.xz"
