#!/bin/bash
# GPU call 3 (2026-11-29): ptxas register budget (.maxnreg none/64/128 on every entry) on cuda,
# short: user kernels without sgemm (its CPU reference is minutes), then four primitives.
set -u
V=.device/var
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt"
K=nbody,nbody_unroll4,softmax,exclusive_scan,reduce_sum,reduce_sum_looped,histogram,blur
for r in none 64 128; do
  timeout 90 $V/uk_$r --sizes large --backends cuda --reps 20 --kernels $K > "$OUT/uk_$r.jsonl" 2> "$OUT/uk_$r.err"
  echo "uk $r: $? $(date +%T)"
done
for op in sort_u32 sort_pairs_u32 exclusive_scan_u32 reduce_sum_u32; do
  for r in none 64 128; do
    echo "variant=$r" >> "$OUT/prim.txt"
    BENCH_BACKENDS=cuda BENCH_OPS=$op BENCH_SIZES=24,26 timeout 40 $V/prim_$r >> "$OUT/prim.txt" 2>&1
  done
  echo "prim $op $(date +%T)"
done
python3 - "$OUT" <<'PY'
import json,sys,glob,os
out=sys.argv[1]; rows={}
for r in ['none','64','128']:
    for line in open(f'{out}/uk_{r}.jsonl'):
        d=json.loads(line)
        if d.get('backend')!='cuda' or not d.get('device_ms'): continue
        rows.setdefault((d['kernel'],d['size']),{})[r]=d['device_ms']['median']
for (k,s),v in rows.items():
    print(f"{k:24s} {s:10s}", '  '.join(f"{r}={v[r]:.4f}" for r in ['none','64','128'] if r in v))
PY
grep -E '^variant|^bench' "$OUT/prim.txt"
