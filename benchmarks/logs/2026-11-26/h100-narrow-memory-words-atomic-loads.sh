#!/bin/bash
# The narrow-memory pack rebuilt from main with narrow words read by atomic loads in written
# buffers (rgpu/artifacts/spirv_narrow_memory.py), the corpus of 53 kernels: run.sh as in
# h100-narrow-memory-words.sh. The corpus's cuda run hung at scan_tile_offsets (MIR jump
# threading, fixed after: h100-cuda-after-jump-threading.*), so run.sh timed out before the
# Vulkan paths; h100-corpus-after-fixes.* ran them kernel by kernel.
R=$(pwd); for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/nm && cd /tmp/nm && tar -xJf $R/.pack/h100/narrow2/pack.tar.xz
timeout 400 bash run.sh "$OUT" > "$OUT/narrow_memory_words.log" 2>&1; echo "exit $?" >> "$OUT/narrow_memory_words.log"
