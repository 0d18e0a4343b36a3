#!/bin/bash
# Here (2 cores, idle): rgpu-primitives' cpu backend beside rayon's own, from the pack's
# binary (benchmarks/primitives_pack.sh). The -scan-reduce-30runs log: the two ops again,
# twice, 30 runs each.
BENCH_BACKENDS=cpu BENCH_SIZES=20,24 BENCH_RUNS=10 ./primitives_bench
for i in 1 2; do BENCH_BACKENDS=cpu BENCH_OPS=exclusive_scan_u32,reduce_sum_u32 BENCH_SIZES=20,22,24 BENCH_RUNS=30 ./primitives_bench; done
