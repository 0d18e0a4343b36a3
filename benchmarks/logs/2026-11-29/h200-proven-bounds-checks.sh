#!/bin/bash
# GPU call 5 (2026-11-29): proven bounds checks folded on SPIR-V (artifacts/spirv_range_checks.py).
# The user kernels but the SGEMM (its CPU reference takes minutes) on cuda, ash, wgpu beside
# the twins; the corpus on cpu, ash, wgpu and naga; the sort demo on ash and wgpu. -> results.tgz
set -u
FINAL=$OUT; export OUT=/tmp/res; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
. scripts/gpu-machine-vulkan.sh
G=.device/gpu-tier
K=saxpy,reduce_sum,reduce_sum_plain,exclusive_scan,histogram,blur,gather,scatter,nbody,nbody_tuned,softmax,reduce_sum_looped,reduce_sum_looped_len
timeout 150 $G/user-kernels --sizes large --backends cuda,ash,wgpu --kernels $K > $OUT/user_kernels.jsonl 2> $OUT/user_kernels.err; echo "user-kernels $?"
timeout 60 python3 benchmarks/user_kernels_twins.py --expected $OUT/user_kernels.jsonl > $OUT/user_kernels_twins.jsonl 2>/dev/null; echo "twins $?"
python3 benchmarks/user_kernels_table.py $OUT/user_kernels.jsonl $OUT/user_kernels_twins.jsonl > $OUT/user_kernels_table.txt 2>&1
grep -E "ash|wgpu" $OUT/user_kernels_table.txt | grep -v sgemm
for p in cpu ash wgpu naga; do
  e=(RGPU_BACKEND=$p); [ $p = naga ] && e=(RGPU_BACKEND=wgpu RGPU_WGPU_SHADER=naga)
  env "${e[@]}" timeout 60 $G/corpus > $OUT/corpus.$p 2>&1
  [ $p != cpu ] && echo "corpus $p: $(diff <(tail -n +2 $OUT/corpus.cpu) <(tail -n +2 $OUT/corpus.$p) | grep -c '^>') differ: $(diff <(tail -n +2 $OUT/corpus.cpu) <(tail -n +2 $OUT/corpus.$p) | grep '^>' | cut -d: -f1 | tr '\n' ' ')"
done
for b in ash wgpu; do bad=0; for a in bitonic radix; do for t in u32 i32 f32; do
  timeout 60 $G/sortdemo --backend $b --algorithm $a --type $t --len 1000003 --verify >> $OUT/sortdemo.$b 2>&1 || bad=$((bad+1)); done; done
  echo "sortdemo $b: $bad of 6 failed"; done
tar -czf "$FINAL/results.tgz" -C "$OUT" .
