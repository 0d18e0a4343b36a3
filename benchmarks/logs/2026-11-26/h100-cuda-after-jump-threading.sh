#!/bin/bash
# After turning MIR's jump threading off for nvptx (and NVVM intrinsics for the warp ops):
# the corpus on cuda (scan_tile_offsets and scan_tiles hung before), then the user kernels
# on cuda against their twins (the scan, sum and SGEMM unchanged?).
R=$(pwd); P=$R/.pack/h100
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
RGPU_BACKEND=cpu timeout 60 $P/corpus_cuda/corpus > $OUT/corpus.cpu 2>&1
RGPU_BACKEND=cuda timeout 60 $P/corpus_cuda/corpus > $OUT/corpus.cuda 2>&1; echo "cuda corpus exit $?"
echo "== cuda differs from the cpu in:"; diff $OUT/corpus.cpu $OUT/corpus.cuda | grep '^>'
mkdir -p benchmarks/user_kernels/target/release && cp $P/uk/user-kernels benchmarks/user_kernels/target/release/
timeout 200 benchmarks/user_kernels/target/release/user-kernels --sizes large --backends cuda > $OUT/uk_cuda.jsonl 2>$OUT/uk_cuda.err; echo "uk exit $?"
timeout 150 python3 benchmarks/user_kernels_twins.py --expected $OUT/uk_cuda.jsonl > $OUT/uk_twins.jsonl 2>$OUT/uk_twins.err; echo "twins exit $?"
python3 benchmarks/user_kernels_table.py $OUT/uk_cuda.jsonl $OUT/uk_twins.jsonl | tee $OUT/uk_table.txt
