#!/bin/bash
# Call E of the lead's H100 lease: the pack of benchmarks/narrow_memory_words.sh (built here
# from main at f0e53ee, the corpus of 42 kernels before the corpus-fill merge), carried as
# .pack/h100/narrow with .gl (the Vulkan loader), run as its run.sh says.
R=$(pwd); for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/nm && cd /tmp/nm && tar -xJf $R/.pack/h100/narrow/pack.tar.xz
timeout 400 bash run.sh "$OUT" > "$OUT/narrow_memory_words.log" 2>&1; echo "exit $?" >> "$OUT/narrow_memory_words.log"
