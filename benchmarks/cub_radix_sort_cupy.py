#!/usr/bin/env python3
"""CUB's radix sort (what `cupy.sort` runs) on the GPU machine: the baseline of the radix
benchmark (BENCHMARKS.md). u32 random keys, and f32 random bit patterns (NaNs included, as
the demo's `--type f32` makes them); device time with CUDA events, median of 20 runs after
a warm-up, per size. Needs CuPy.

    python3 benchmarks/cub_radix_sort_cupy.py [--sizes 16 20 24 26]

The same sort called from C++ is benchmarks/cub_radix_sort_cxx.cu (CUB without CuPy).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

cp: Any = None  # cupy and numpy, imported in main(): --help and a wrong option need no GPU
np: Any = None


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", metavar="P", default=[16, 20, 24, 26],
        help="powers of two to sort (default: 16 20 24 26)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    global cp, np
    import cupy
    import numpy

    cp, np = cupy, numpy
    rng = np.random.default_rng(1)
    for p in args.sizes:
        bits = rng.integers(0, 2**32, size=1 << p, dtype=np.uint64).astype(np.uint32)
        u32 = cp.asarray(bits)
        f32 = cp.asarray(bits.view(np.float32))
        print(f"cub n=2^{p} u32_ms={time_sort(u32):.3f} f32_ms={time_sort(f32):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
