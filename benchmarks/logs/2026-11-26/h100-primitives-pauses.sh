#!/bin/bash
# One process each: F ash in the usual order with a 3 s pause after each (op, size); G wgpu at
# 2^26 with the pause; H ash at 2^26, no pause, 30 runs. (The GPU machine's Vulkan loader set
# up as in h100-primitives-order.sh.)
B=.pack/h100/prim2/primitives_bench
date -u +%T; echo "== F: ash, usual order, 3 s pause after each (op, size)"
BENCH_PAUSE_MS=3000 BENCH_BACKENDS=ash BENCH_SIZES=24,26 timeout 200 $B 2>&1 | grep -E "^bench|rror"
date -u +%T; echo "== G: wgpu, 2^26 only, 3 s pause"
BENCH_PAUSE_MS=3000 BENCH_BACKENDS=wgpu BENCH_SIZES=26 timeout 200 $B 2>&1 | grep -E "^bench|rror"
date -u +%T; echo "== H: ash, 2^26 only, no pause, 30 runs"
BENCH_RUNS=30 BENCH_BACKENDS=ash BENCH_SIZES=26 BENCH_OPS=sort_u32,sort_pairs_u32,reduce_sum_u32,sort_f32 timeout 200 $B 2>&1 | grep -E "^bench|rror"
date -u +%T
