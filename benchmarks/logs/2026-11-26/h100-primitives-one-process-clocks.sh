#!/bin/bash
# ash, every op in one process (1 s pause after each (op, size)), each line stamped with the
# time it was printed, while nvidia-smi samples the SM and memory clocks every 50 ms into
# h100-primitives-one-process-clocks.csv.
B=.pack/h100/prim2/primitives_bench
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,utilization.gpu,power.draw,memory.used \
  --format=csv,noheader -lms 50 > $OUT/clocks.csv 2>&1 & S=$!
BENCH_PAUSE_MS=1000 BENCH_BACKENDS=ash BENCH_SIZES=24,26 timeout 200 $B 2>&1 |
  while read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done > $OUT/single_process.log
kill $S
