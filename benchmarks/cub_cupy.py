#!/usr/bin/env python3
"""CUB's radix sort (what `cupy.sort` runs) on the GPU machine: the baseline of the radix
benchmark (BENCHMARKS.md). u32 random keys, and f32 random bit patterns (NaNs included, as
the demo's `--type f32` makes them); device time with CUDA events, median of 20 runs after
a warm-up, per size. Needs CuPy.

    python3 benchmarks/cub_cupy.py [16 20 24 26]
"""

from __future__ import annotations

import statistics
import sys

import cupy as cp
import numpy as np


def time_sort(keys: cp.ndarray, runs: int = 20) -> float:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for run in range(runs + 1):
        start.record()
        out = cp.sort(keys)
        end.record()
        end.synchronize()
        if run:
            times.append(cp.cuda.get_elapsed_time(start, end))
    del out
    return statistics.median(times)


def main() -> None:
    powers = [int(p) for p in sys.argv[1:]] or [16, 20, 24, 26]
    rng = np.random.default_rng(1)
    for p in powers:
        bits = rng.integers(0, 2**32, size=1 << p, dtype=np.uint64).astype(np.uint32)
        u32 = cp.asarray(bits)
        f32 = cp.asarray(bits.view(np.float32))
        print(f"cub n=2^{p} u32_ms={time_sort(u32):.3f} f32_ms={time_sort(f32):.3f}", flush=True)


if __name__ == "__main__":
    main()
