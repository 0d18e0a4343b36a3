#!/bin/bash
# Issue 19, run 7: ash's staging chunk (ash/transfer.rs CHUNK, 8 MiB on main) vs end to end.
set -u
exec > >(tee "$OUT/issue19-run7-chunk.log") 2>&1
R=$PWD
rm -rf /tmp/pk; mkdir -p /tmp/pk; (cd /tmp/pk && tar -xJf "$R/.bench22/pack.tar.xz") || exit 1
for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%T
for n in 24 26; do for round in 1 2 3 4 5; do
  for v in c4 c8 c16 c32; do
    echo "$v ash radix 2^$n r$round: $(timeout 60 /tmp/pk/$v/sortdemo --backend ash --algorithm radix --len $((1 << n)) --bench --json 2>&1 | tail -1)"
  done
  echo "c8 cuda radix 2^$n r$round: $(timeout 60 /tmp/pk/c8/sortdemo --backend cuda --algorithm radix --len $((1 << n)) --bench --json 2>&1 | tail -1)"
done; done
date -u +%T
