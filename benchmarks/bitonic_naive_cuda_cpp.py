#!/usr/bin/env python3
"""The naive bitonic sort in CUDA C++ on the GPU machine: one launch per network step, one
thread per compare pair, 256 threads per block (the algorithm of the template before its
fast kernels), built by NVRTC through CuPy (no nvcc there). Device time with CUDA events,
u32 random keys, median of 10 runs after a warm-up. Needs CuPy.

Two measurements (each has been a BENCHMARKS.md comparison):
- default: the C++ kernel, CUB's radix sort (cupy.sort), and with --rust-ptx the Rust PTX's
  `bitonic_step` launched from Python exactly like the C++ kernel (launcher for launcher);
- --encode-decode: the same network with an encode and a decode launch around it, the shape
  of the Vulkan runners' sort, the CUDA reference of the wgpu/ash comparison.

    python3 benchmarks/bitonic_naive_cuda_cpp.py [--sizes 16 20 24 26] [--rust-ptx FILE.ptx]
    python3 benchmarks/bitonic_naive_cuda_cpp.py --encode-decode --sizes 20 24
"""

# The closures in measure() are called within their own loop iteration only.
# ruff: noqa: B023
from __future__ import annotations

import argparse
import statistics
from typing import Any

cp: Any = None  # cupy, imported in main(): --help and a wrong option need no GPU
np: Any = None

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


def rust_ptx_ms(path: str, n: int, source, keys, schedule, grid) -> str:
    """The Rust PTX (bitonic_step) launched from Python like the C++ kernel, for a
    launcher-for-launcher comparison; SortParams passed as a structured numpy scalar."""
    fields = ("len", "block", "distance", "key_order")
    params = np.dtype([(f, "<u4") for f in fields], align=True)
    try:
        step = cp.RawModule(path=path).get_function("bitonic_step")

        def run() -> None:
            for block, distance in schedule:
                step(grid, (256,), (np.array((n, block, distance, 0), dtype=params)[()], keys))

        ms = time_ms(run, lambda: keys.__setitem__(slice(None), source))
        ok = bool((keys == cp.sort(source)).all())
        return f"{ms:.3f}" if ok else "WRONG"
    except Exception as exc:  # a cupy without struct arguments: say so, keep going
        return f"skipped ({type(exc).__name__}: {exc})"


NETWORK_SOURCE = r"""
extern "C" __global__ void encode(unsigned* k, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) k[i] = k[i]; }
extern "C" __global__ void step(unsigned* k, unsigned n, unsigned block, unsigned d) {
    unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned pairs = n / 2; if (p >= pairs) return;
    unsigned lo = ((p & ~(d - 1)) << 1) | (p & (d - 1));
    unsigned hi = (d * 2 == block) ? (lo ^ (block - 1)) : (lo + d);
    if (hi < n) { unsigned a = k[lo], b = k[hi]; if (a > b) { k[lo] = b; k[hi] = a; } } }
"""


def measure(sizes: list[int], rust_ptx: str | None) -> None:
    kernel = cp.RawKernel(SOURCE, "bitonic_step")  # NVRTC optimizes by default
    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    for p in sizes:
        n = 1 << p
        rng = cp.random.default_rng(p)
        source = rng.integers(0, 2**32, size=n, dtype=cp.uint64).astype(cp.uint32)
        keys = source.copy()
        schedule = steps(n)
        threads = max(2, 1 << (n - 1).bit_length()) // 2
        grid = ((threads + 255) // 256,)

        def naive() -> None:
            for block, distance in schedule:
                kernel(grid, (256,), (cp.uint32(n), cp.uint32(block), cp.uint32(distance), keys))

        def reset() -> None:
            keys[:] = source

        naive_ms = time_ms(naive, reset)
        assert bool((keys == cp.sort(source)).all()), f"C++ naive wrong at 2^{p}"
        cub_ms = time_ms(lambda: cp.sort(source))
        rust = rust_ptx_ms(rust_ptx, n, source, keys, schedule, grid) if rust_ptx else "-"
        print(
            f"n=2^{p} cpp_naive_ms={naive_ms:.3f} cub_sort_ms={cub_ms:.3f} "
            f"rust_ptx_via_cupy_ms={rust} steps={len(schedule)}"
        )


def measure_encode_decode(sizes: list[int]) -> None:
    """Encode, every network step, decode; the GPU work only (CUDA events), like the Vulkan
    runners' RGPU_GPU_TIMING."""
    module = cp.RawModule(code=NETWORK_SOURCE)
    enc, step = module.get_function("encode"), module.get_function("step")
    for e in sizes:
        n = 1 << e
        host = np.random.default_rng(1).integers(0, 2**32, n, dtype=np.uint32)
        schedule = steps(n)
        times = []
        for run in range(11):
            k = cp.asarray(host)
            s, t = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            enc(((n + 255) // 256,), (256,), (k, np.uint32(n)))
            for b, d in schedule:
                step(
                    ((n // 2 + 255) // 256,), (256,), (k, np.uint32(n), np.uint32(b), np.uint32(d))
                )
            enc(((n + 255) // 256,), (256,), (k, np.uint32(n)))  # the decode launch
            t.record()
            t.synchronize()
            if run:
                times.append(cp.cuda.get_elapsed_time(s, t))
        ok = bool((cp.diff(k.astype(cp.int64)) >= 0).all())
        print(
            f"cuda-cupy 2^{e}: {sorted(times)[len(times) // 2]:.3f} ms (median of 10) sorted={ok}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", metavar="P", default=[16, 20, 24, 26],
        help="powers of two to sort (default: 16 20 24 26)",
    )  # fmt: skip
    parser.add_argument("--rust-ptx", metavar="FILE", help="also time this PTX's bitonic_step")
    parser.add_argument(
        "--encode-decode", action="store_true",
        help="the network with an encode and a decode launch around it (the Vulkan runners' shape)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.encode_decode and args.rust_ptx:
        parser.error("--rust-ptx is timed by the default measurement, not with --encode-decode")
    global cp, np
    import cupy
    import numpy

    cp, np = cupy, numpy
    if args.encode_decode:
        measure_encode_decode(args.sizes)
    else:
        measure(args.sizes, args.rust_ptx)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
