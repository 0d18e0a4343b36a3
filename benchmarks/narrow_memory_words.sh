#!/bin/bash
# Builds, here, what benchmarks/narrow_memory_words_h100.sh runs on the H100, and packs it:
#   RGPU=/work/main/.venv/bin/rgpu bash benchmarks/narrow_memory_words.sh WORK  # WORK must not exist
# -> WORK/pack.tar.xz with
#   words/   the portability corpus workspace (tests/corpus_table.py, whose kernels include
#            the benchmark's bytes_map, words_map, bytes_sum16) built as rgpu builds it
#            (8/16-bit memory as 32-bit words): `corpus`, `narrow_bench`, the .spv/.ptx;
#   native/  `narrow_bench` with the same module except spirv.narrow_memory (the Vulkan
#            passthrough keeping native 8-bit storage), embedded with --kernel-artifact;
#   run.sh   a copy of narrow_memory_words_h100.sh.
# Needs rust-gpu's nightly and cargo-gpu (rgpu build --yes installs them) and the nvptx
# toolchain (CUDA PTX for sm_90).
set -eux
W=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
RGPU=${RGPU:-rgpu}
PY=$(dirname "$(command -v "$RGPU")")/python
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
mkdir "$W"
P=$W/pack
mkdir -p "$P/words" "$P/native"
B=(--backend "cuda,wgpu,ash" --arch sm_90)
cd "$W"
"$RGPU" new portcorpus
PYTHONPATH=$REPO "$PY" -c "import sys; from pathlib import Path; from tests.corpus_table import make_workspace; make_workspace(Path(sys.argv[1]))" "$W/portcorpus"
cd portcorpus
cp "$HERE/narrow_memory_words_main.rs" src/bin/narrow_bench.rs
"$RGPU" build "${B[@]}" --yes
cp target/release/corpus target/release/narrow_bench target/rgpu/kernels/*.spv \
  target/rgpu/kernels/*.ptx "$P/words/"
# The module as rgpu makes it, but without moving 8-bit memory into words.
PYTHONPATH=$REPO "$PY" - "$W" <<'PYEOF'
import sys
from pathlib import Path
from rgpu.spirv import naga_scopes, narrow_ints, pointer_values
from rgpu.codegens import spirv_post
work = Path(sys.argv[1])
raw = work / "portcorpus/target/rgpu/spirv/out/portcorpus_kernel.spv"
data, _ = spirv_post.process(raw, work / "o.spv", "spirv-unknown-vulkan1.2", opt=True, contraction=False)
data = pointer_values.drop_dead_pointer_values(data).data
data = narrow_ints.promote_narrow_ints(data).data
(work / "native.spv").write_bytes(naga_scopes.rescope_for_naga(data).data)
PYEOF
spirv-val --target-env vulkan1.2 "$W/native.spv"
"$RGPU" build "${B[@]}" --kernel-artifact "$W/native.spv"
cp target/release/narrow_bench "$W/native.spv" "$P/native/"
"$RGPU" build "${B[@]}" --recompile  # leave the workspace on rgpu's own module
cp "$HERE/narrow_memory_words_h100.sh" "$P/run.sh"
strip "$P"/words/corpus "$P"/words/narrow_bench "$P"/native/narrow_bench
(cd "$P" && tar -cJf "$W/pack.tar.xz" .)
ls -la "$W/pack.tar.xz"
