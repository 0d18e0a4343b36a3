#!/bin/bash
# H100 call A: the user kernels beside their CUDA C++ twins, then the runtime's CUDA tests.
set -u
R=$(pwd); P=$R/.pack/h100
if ! ldconfig -p | grep -q libvulkan.so.1; then for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
mkdir -p benchmarks/user_kernels/target/release
cp "$P/uk/user-kernels" benchmarks/user_kernels/target/release/
sed -i 's/timeout 420 /timeout 330 /; s/timeout 150 /timeout 140 /' benchmarks/user_kernels.sh
bash benchmarks/user_kernels.sh > "$OUT/user_kernels.log" 2>&1
echo "== runtime cuda tests" > "$OUT/runtime_cuda.log"
RGPU_REQUIRE_CUDA=1 timeout 90 "$P/tests/cuda" --test-threads=1 >> "$OUT/runtime_cuda.log" 2>&1
echo "exit $?" >> "$OUT/runtime_cuda.log"
tail -40 "$OUT/user_kernels.log"; tail -5 "$OUT/runtime_cuda.log"
