#!/bin/bash
# A/B: LLVM's runtime unrolling of multi-exit loops (the looped sum), and libm in glam on cuda.
set -u
D=$(dirname "$0")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
RGPU_BACKEND=cuda timeout 60 "$D/glam" > "$OUT/glam.txt" 2>&1; echo "glam exited $?" >> "$OUT/glam.txt"
K=reduce_sum_looped,reduce_sum_looped_len,reduce_sum
for round in 1 2 3; do
  for v in base multiexit; do
    timeout 120 "$D/uk_$v" --sizes large --backends cuda --kernels $K --reps 20 > "$OUT/uk_${v}_$round.jsonl" 2> "$OUT/uk_${v}_$round.err"
    echo "uk_$v round $round exited $?"
  done
done
timeout 200 python3 benchmarks/user_kernels_twins.py --expected "$OUT/uk_base_1.jsonl" > "$OUT/twins.jsonl" 2> "$OUT/twins.err"
echo "twins exited $?"
for f in "$OUT"/uk_*_1.jsonl; do python3 benchmarks/user_kernels_table.py "$f" "$OUT/twins.jsonl" > "$f.table" 2>&1; done
