#!/bin/bash
# The reduction with 4 rounds of 16 loads a thread (a tile of 16384: prim3, what main has)
# against 16 rounds (65536: prim4), each (backend, op) in its own process, then per kernel.
for v in prim3 prim4; do for b in cuda ash wgpu; do for op in reduce_sum_u32 reduce_sum_f32 reduce_max_f32; do
  echo "variant=$v $(BENCH_BACKENDS=$b BENCH_OPS=$op BENCH_SIZES=16,20,24,26 timeout 60 .pack/h100/$v/primitives_bench 2>&1 | grep -E '^bench|rror' | tr '\n' '|')"
done; done; done
for v in prim3 prim4; do for b in cuda ash; do
  echo "variant=$v $(BENCH_KERNELS=1 BENCH_BACKENDS=$b BENCH_OPS=reduce_sum_u32 BENCH_SIZES=24,26 timeout 60 .pack/h100/$v/primitives_bench 2>&1 | grep -E '^kernel|rror' | tr '\n' '|')"
done; done
