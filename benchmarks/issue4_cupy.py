"""Issue 4 benchmark, the CUDA C++ side (run on the GPU machine: python3 issue4_cupy.py).

- naive bitonic sort in CUDA C++ (the same algorithm and launch shape as the Rust PTX:
  one launch per step, one thread per pair, 256 threads per block), built by NVRTC
  through cupy.RawKernel (there is no nvcc on the GPU machine);
- CUB's radix sort through cupy.sort.
Device time with CUDA events, u32 random keys, median of 10 runs after a warm-up.
"""

from __future__ import annotations

import statistics

import sys

import cupy as cp
import numpy as np

SOURCE = r"""
extern "C" __global__ void bitonic_step(unsigned len, unsigned block, unsigned distance,
                                        unsigned* keys) {
    unsigned pair = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned pairs = (len <= 2 ? 2u : (1u << (32 - __clz(len - 1)))) / 2;
    if (pair >= pairs) return;
    unsigned lo = ((pair & ~(distance - 1)) << 1) | (pair & (distance - 1));
    unsigned hi = (distance * 2 == block) ? (lo ^ (block - 1)) : lo + distance;
    if (hi < len) {
        unsigned a = keys[lo], b = keys[hi];
        if (a > b) { keys[lo] = b; keys[hi] = a; }
    }
}
"""
KERNEL = cp.RawKernel(SOURCE, "bitonic_step")  # NVRTC optimizes by default


def steps(n: int) -> list[tuple[int, int]]:
    padded = max(2, 1 << (n - 1).bit_length())
    out, block = [], 2
    while block <= padded:
        distance = block // 2
        while distance >= 1:
            out.append((block, distance))
            distance //= 2
        block *= 2
    return out


def time_ms(fn, setup=lambda: None, runs: int = 10) -> float:
    """Median device time of fn() (CUDA events), setup() run before each, untimed."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    setup()
    fn()
    times = []
    for _ in range(runs):
        setup()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


PARAMS = np.dtype([(f, "<u4") for f in ("len", "block", "distance", "key_order")], align=True)


def rust_ptx_ms(path: str, n: int, source, keys, schedule, grid) -> str:
    """The Rust PTX (bitonic_step) launched from Python like the C++ kernel, for a
    launcher-for-launcher comparison; SortParams passed as a structured numpy scalar."""
    try:
        step = cp.RawModule(path=path).get_function("bitonic_step")

        def run() -> None:
            for block, distance in schedule:
                step(grid, (256,), (np.array((n, block, distance, 0), dtype=PARAMS)[()], keys))

        ms = time_ms(run, lambda: keys.__setitem__(slice(None), source))
        ok = bool((keys == cp.sort(source)).all())
        return f"{ms:.3f}" if ok else "WRONG"
    except Exception as exc:  # a cupy without struct arguments: say so, keep going
        return f"skipped ({type(exc).__name__}: {exc})"


def main() -> None:
    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    for p in (16, 20, 24, 26):
        n = 1 << p
        rng = cp.random.default_rng(p)
        source = rng.integers(0, 2**32, size=n, dtype=cp.uint64).astype(cp.uint32)
        keys = source.copy()
        schedule = steps(n)
        threads = max(2, 1 << (n - 1).bit_length()) // 2
        grid = ((threads + 255) // 256,)

        def naive() -> None:
            for block, distance in schedule:
                KERNEL(grid, (256,), (cp.uint32(n), cp.uint32(block), cp.uint32(distance), keys))

        def reset() -> None:
            keys[:] = source

        naive_ms = time_ms(naive, reset)
        assert bool((keys == cp.sort(source)).all()), f"C++ naive wrong at 2^{p}"
        cub_ms = time_ms(lambda: cp.sort(source))
        rust = rust_ptx_ms(sys.argv[1], n, source, keys, schedule, grid) if sys.argv[1:] else "-"
        print(
            f"n=2^{p} cpp_naive_ms={naive_ms:.3f} cub_sort_ms={cub_ms:.3f} "
            f"rust_ptx_via_cupy_ms={rust} steps={len(schedule)}"
        )


if __name__ == "__main__":
    main()
