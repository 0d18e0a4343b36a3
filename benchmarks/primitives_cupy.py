#!/usr/bin/env python3
"""CUB through CuPy on the GPU machine: the second baseline of rgpu-primitives' benchmark
(benchmarks/primitives_cub.cu calls CUB directly; this needs only CuPy). `cupy.sort` is
CUB's radix sort, `cupy.cumsum` CUB's scan, `cupy.sum`/`cupy.max` CUB's reductions (CuPy's
CUB routines are on by default). Device time with CUDA events, median of 20 runs after a
warm-up; a reduction is timed on the host's clock with its result read back, as rgpu's.

    python3 benchmarks/primitives_cupy.py [16 18 20 22 24 26]

Prints `bench backend=cupy op=OP n=2^P ms=MEDIAN min=MIN max=MAX gbs=G`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

# CuPy and NumPy are imported after the arguments are parsed (main), so --help works on a
# machine without them.
cp: Any = None
np: Any = None

RUNS = 20


def stats(times: list[float]) -> tuple[float, float, float]:
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def device_time(work: Callable[[], object]) -> tuple[float, float, float]:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for run in range(RUNS + 1):
        cp.cuda.Device().synchronize()
        start.record()
        work()
        end.record()
        end.synchronize()
        if run:
            times.append(cp.cuda.get_elapsed_time(start, end))
    return stats(times)


def host_time(work: Callable[[], object]) -> tuple[float, float, float]:
    times = []
    for run in range(RUNS + 1):
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        work()
        if run:
            times.append((time.perf_counter() - start) * 1e3)
    return stats(times)


def report(op: str, p: int, item_bytes: int, s: tuple[float, float, float]) -> None:
    median, low, high = s
    gbs = (item_bytes << p) / (median * 1e-3) / 1e9
    print(
        f"bench backend=cupy op={op} n=2^{p} ms={median:.3f} min={low:.3f} max={high:.3f} "
        f"gbs={gbs:.1f}",
        flush=True,
    )


def bench_size(p: int, rng: np.random.Generator) -> None:
    n = 1 << p
    words = cp.asarray(rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32))
    wide = cp.asarray(rng.integers(0, 2**63, size=n, dtype=np.uint64))
    floats = words.view(cp.float32)
    finite = (words % 2001).astype(cp.float32) / 7.0 - 100.0
    report("sort_u32", p, 4, device_time(lambda: cp.sort(words)))
    report("sort_f32", p, 4, device_time(lambda: cp.sort(floats)))
    report("sort_u64", p, 8, device_time(lambda: cp.sort(wide)))
    report("inclusive_scan_u32", p, 4, device_time(lambda: cp.cumsum(words, dtype=cp.uint32)))
    report("reduce_sum_u32", p, 4, host_time(lambda: int(cp.sum(words, dtype=cp.uint32))))
    report("reduce_sum_f32", p, 4, host_time(lambda: float(cp.sum(finite))))
    report("reduce_max_f32", p, 4, host_time(lambda: float(cp.max(finite))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("powers", nargs="*", help="sizes, 2^P (default 16 18 20 22 24 26)")
    given = parser.parse_args().powers
    if not all(p.isdigit() for p in given):
        parser.error(f"sizes are powers of two given as integers, not {given}")
    powers = [int(p) for p in given] or [16, 18, 20, 22, 24, 26]
    global cp, np
    import cupy
    import numpy

    cp, np = cupy, numpy
    rng = np.random.default_rng(1)
    for p in powers:
        bench_size(p, rng)


if __name__ == "__main__":
    main()
