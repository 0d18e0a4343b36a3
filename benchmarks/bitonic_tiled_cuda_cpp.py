#!/usr/bin/env python3
"""The template's fast bitonic sort (tiles in shared memory, fused global passes) in CUDA C++
beside the Rust PTX, on the GPU machine. Needs CuPy.

    python3 benchmarks/bitonic_tiled_cuda_cpp.py [--rust-ptx RUST.ptx] [--sizes 16 20 24 26]

Rows per size (u32 random keys, device time with CUDA events, median of 10 runs after a
warm-up; every launch sequence is captured once into a CUDA graph, so Python's launch
overhead is not timed):
- cpp_fast: the template's algorithm (kernel/src/schedule.rs) written again in CUDA C++ and
  built by NVRTC through cupy.RawModule (no nvcc on the GPU machine): the same two kernels,
  the same launch schedule, 256 threads per block, 4096-key tiles in shared memory, up to 4
  global steps fused per launch with 16 keys per thread in registers;
- rust_fast: the Rust PTX (rustc's nvptx64 target) given with --rust-ptx, launched exactly
  like cpp_fast (same graph, same grid), so the two columns compare kernels alone;
- cpp_naive: one launch per network step (the seed's algorithm, main before issue 8);
- cub: CUB's radix sort through cupy.sort.
"""

# The closures in main() are called within their own loop iteration only.
# ruff: noqa: B023
from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

cp: Any = None  # cupy and numpy, imported in main(): --help and a wrong option need no GPU
np: Any = None

TILE_KEYS = 4096
FUSED_STEPS = 4
WORKGROUP = 256

SOURCE = r"""
#define TILE_KEYS 4096u
#define WG 256u
#define FUSED_STEPS 4u
#define PAIRS_PER_THREAD (TILE_KEYS / 2u / WG)

struct SortParams { unsigned len, block, distance, key_order; };

__device__ __forceinline__ unsigned padded_len(unsigned len) {
    return len <= 2u ? 2u : (1u << (32 - __clz(len - 1u)));
}
__device__ __forceinline__ unsigned encode_key(unsigned bits, unsigned kind, unsigned order) {
    unsigned o = bits;
    if (kind == 1u) o = bits ^ 0x80000000u;
    else if (kind == 2u) o = bits ^ ((unsigned)((int)bits >> 31) | 0x80000000u);
    return order == 1u ? ~o : o;
}
__device__ __forceinline__ unsigned decode_key(unsigned e, unsigned kind, unsigned order) {
    unsigned o = order == 1u ? ~e : e;
    if (kind == 1u) return o ^ 0x80000000u;
    if (kind == 2u) return o ^ ((unsigned)((int)~o >> 31) | 0x80000000u);
    return o;
}
__device__ __forceinline__ void compare_exchange(unsigned* tile, unsigned base, unsigned block,
                                                 unsigned d, unsigned pair, unsigned len) {
    unsigned lo = ((pair & ~(d - 1u)) << 1) | (pair & (d - 1u));
    unsigned hi = (d * 2u == block) ? (lo ^ (block - 1u)) : (lo + d);
    if (hi < len) {
        unsigned a = tile[lo - base], b = tile[hi - base];
        if (a > b) { tile[lo - base] = b; tile[hi - base] = a; }
    }
}

extern "C" __global__ void __launch_bounds__(256) bitonic_tile(SortParams p, unsigned* keys) {
    __shared__ unsigned tile[TILE_KEYS];
    unsigned kind = p.key_order & 0xffu, order = p.key_order >> 8, len = p.len;
    unsigned local = threadIdx.x, padded = padded_len(len);
    bool first = p.block == 0u;
    bool last = max(p.block, TILE_KEYS) >= padded;
    unsigned tiles = (len + TILE_KEYS - 1u) / TILE_KEYS;
    for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
        unsigned base = t * TILE_KEYS;
        for (unsigned i = local; i < TILE_KEYS; i += WG)
            if (base + i < len) {
                unsigned bits = keys[base + i];
                tile[i] = first ? encode_key(bits, kind, order) : bits;
            }
        __syncthreads();
        unsigned first_pair = t * (TILE_KEYS / 2u) + local;
        if (first) {
            for (unsigned b = 2u; b <= min(padded, TILE_KEYS); b <<= 1)
                for (unsigned d = b / 2u; d >= 1u; d >>= 1) {
                    for (unsigned k = 0; k < PAIRS_PER_THREAD; k++)
                        compare_exchange(tile, base, b, d, first_pair + k * WG, len);
                    __syncthreads();
                }
        } else {
            for (unsigned d = TILE_KEYS / 2u; d >= 1u; d >>= 1) {
                for (unsigned k = 0; k < PAIRS_PER_THREAD; k++)
                    compare_exchange(tile, base, p.block, d, first_pair + k * WG, len);
                __syncthreads();
            }
        }
        for (unsigned i = local; i < TILE_KEYS; i += WG)
            if (base + i < len) {
                unsigned key = tile[i];
                keys[base + i] = last ? decode_key(key, kind, order) : key;
            }
        __syncthreads();
    }
}

template <unsigned M>
__device__ __forceinline__ void fused(unsigned* keys, unsigned len, unsigned block,
                                      unsigned distance, unsigned t) {
    const unsigned K = 1u << M;
    unsigned low = distance >> (M - 1u);
    unsigned base = ((t & ~(low - 1u)) << M) | (t & (low - 1u));
    bool flip = distance * 2u == block;
    unsigned pos[K], key[K];
#pragma unroll
    for (unsigned j = 0; j < K; j++) {
        pos[j] = (flip && j >= K / 2u) ? ((base + (j - K / 2u) * low) ^ (block - 1u))
                                       : (base + j * low);
        key[j] = pos[j] < len ? keys[pos[j]] : 0xffffffffu;
    }
#pragma unroll
    for (unsigned bit = K / 2u; bit > 0u; bit >>= 1) {
#pragma unroll
        for (unsigned j = 0; j < K; j++) {
            if ((j & bit) == 0u) {
                unsigned a = j, b = j | bit;
                if (flip && j >= K / 2u) { a = j | bit; b = j; }
                if (key[a] > key[b]) { unsigned x = key[a]; key[a] = key[b]; key[b] = x; }
            }
        }
    }
#pragma unroll
    for (unsigned j = 0; j < K; j++)
        if (pos[j] < len) keys[pos[j]] = key[j];
}

extern "C" __global__ void __launch_bounds__(256) bitonic_global(SortParams p, unsigned* keys) {
    unsigned a = 31u - __clz(p.distance), b = 31u - __clz(TILE_KEYS / 2u);
    unsigned m = min(a > b ? a - b : 0u, FUSED_STEPS);
    unsigned threads = padded_len(p.len) >> m;
    for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < threads;
         t += gridDim.x * blockDim.x) {
        switch (m) {
            case 1: fused<1>(keys, p.len, p.block, p.distance, t); break;
            case 2: fused<2>(keys, p.len, p.block, p.distance, t); break;
            case 3: fused<3>(keys, p.len, p.block, p.distance, t); break;
            default: fused<4>(keys, p.len, p.block, p.distance, t); break;
        }
    }
}

extern "C" __global__ void bitonic_step(SortParams p, unsigned* keys) {
    unsigned pair = blockIdx.x * blockDim.x + threadIdx.x;
    if (pair >= padded_len(p.len) / 2u) return;
    unsigned lo = ((pair & ~(p.distance - 1u)) << 1) | (pair & (p.distance - 1u));
    unsigned hi = (p.distance * 2u == p.block) ? (lo ^ (p.block - 1u)) : lo + p.distance;
    if (hi < p.len) {
        unsigned a = keys[lo], b = keys[hi];
        if (a > b) { keys[lo] = b; keys[hi] = a; }
    }
}
"""

FIELDS = ("len", "block", "distance", "key_order")


def padded_len(n: int) -> int:
    return 2 if n <= 2 else 1 << (n - 1).bit_length()


def fused_steps(distance: int) -> int:
    a, b = distance.bit_length() - 1, (TILE_KEYS // 2).bit_length() - 1
    return min(max(a - b, 0), FUSED_STEPS)


def passes(n: int) -> list[tuple[str, int, int, int]]:
    """kernel::schedule::Passes: (kernel, block, distance, threads)."""
    if n < 2:
        return []
    padded = padded_len(n)
    tiles = -(-n // TILE_KEYS)
    out = [("bitonic_tile", 0, 0, tiles * WORKGROUP)]
    block = TILE_KEYS * 2
    while block <= padded:
        d = block // 2
        while d > TILE_KEYS // 2:
            m = fused_steps(d)
            out.append(("bitonic_global", block, d, padded >> m))
            d >>= m
        out.append(("bitonic_tile", block, 0, tiles * WORKGROUP))
        block *= 2
    return out


def naive_steps(n: int) -> list[tuple[str, int, int, int]]:
    padded, out, block = padded_len(n), [], 2
    while block <= padded:
        d = block // 2
        while d >= 1:
            out.append(("bitonic_step", block, d, padded // 2))
            d //= 2
        block *= 2
    return out


def graph_of(module: cp.RawModule, schedule: list, n: int, keys: cp.ndarray, stream) -> object:
    """The launches of one sort, captured into a CUDA graph on `stream`."""
    functions = {name: module.get_function(name) for name, *_ in schedule}
    params_dtype = np.dtype([(f, "<u4") for f in FIELDS], align=True)
    with stream:
        stream.begin_capture()
        for name, block, distance, threads in schedule:
            params = np.array((n, block, distance, 0), dtype=params_dtype)[()]
            functions[name](((threads + 255) // 256,), (256,), (params, keys))
        return stream.end_capture()


def time_ms(run: Callable[[], None], setup: Callable[[], None], stream, runs: int = 10) -> float:
    """Median device time of run() on `stream` (setup() before each, untimed); cupy's own
    work (copies, cp.sort) goes to `stream` too, so nothing races across streams."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    with stream:
        setup()
        run()
        for _ in range(runs):
            setup()
            start.record(stream)
            run()
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def sort_ms(module, schedule, n, source, keys, stream, expected) -> str:
    try:
        graph = graph_of(module, schedule, n, keys, stream)
        ms = time_ms(
            lambda: graph.launch(stream), lambda: keys.__setitem__(slice(None), source), stream
        )
        stream.synchronize()
        with stream:
            ok = bool((keys == expected).all())
        return f"{ms:.3f}" if ok else "WRONG"
    except Exception as exc:  # say what failed, keep the other columns
        return f"failed ({type(exc).__name__}: {exc})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rust-ptx", metavar="FILE", help="the Rust PTX to time beside C++")
    parser.add_argument(
        "--sizes", type=int, nargs="+", metavar="P", default=[16, 20, 24, 26],
        help="powers of two to sort (default: 16 20 24 26)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    global cp, np
    import cupy
    import numpy

    cp, np = cupy, numpy
    measure(args.sizes, args.rust_ptx)
    return 0


def measure(sizes: list[int], rust_ptx: str | None) -> None:
    print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    cpp = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    rust = cp.RawModule(path=rust_ptx) if rust_ptx else None
    stream = cp.cuda.Stream(non_blocking=True)
    assert len(passes(1 << 24)) == 37
    for p in sizes:
        n = 1 << p
        rng = cp.random.default_rng(p)
        # Everything on `stream`: a non-blocking stream does not wait for the legacy one.
        with stream:
            source = rng.integers(0, 2**32, size=n, dtype=cp.uint64).astype(cp.uint32)
            expected = cp.sort(source)
            keys = source.copy()
        stream.synchronize()
        fast = passes(n)
        row = {
            "cpp_fast_ms": sort_ms(cpp, fast, n, source, keys, stream, expected),
            "rust_fast_ms": sort_ms(rust, fast, n, source, keys, stream, expected) if rust else "-",
            "cpp_naive_ms": sort_ms(cpp, naive_steps(n), n, source, keys, stream, expected),
            "cub_sort_ms": f"{time_ms(lambda: cp.sort(source), lambda: None, stream):.3f}",
        }
        cols = " ".join(f"{k}={v}" for k, v in row.items())
        print(f"n=2^{p} launches={len(fast)} naive_launches={len(naive_steps(n))} {cols}")
        breakdown(cpp, rust, fast, n, source, keys, stream)


PEAK_TBPS = 3.35  # H100 SXM HBM3


def breakdown(cpp, rust, fast, n, source, keys, stream) -> None:
    """The tile launches and the global launches timed apart (each subset captured into its
    own graph, on fresh random keys each run). Global passes move 2 x 4n bytes each."""
    globals_ = [x for x in fast if x[0] == "bitonic_global"]
    tiles = [x for x in fast if x[0] == "bitonic_tile"]
    reset = lambda: keys.__setitem__(slice(None), source)  # noqa: E731
    out = []
    for name, module in (("cpp", cpp), ("rust", rust)):
        if module is None:
            continue
        for part, schedule in (("tile", tiles), ("global", globals_)):
            if not schedule:
                continue
            graph = graph_of(module, schedule, n, keys, stream)
            ms = time_ms(lambda: graph.launch(stream), reset, stream)
            extra = ""
            if part == "global":
                tbps = len(schedule) * 8 * n / (ms * 1e-3) / 1e12
                extra = (
                    f"({len(schedule)} launches, {tbps:.2f} TB/s = {tbps / PEAK_TBPS:.0%} of peak)"
                )
            else:
                extra = f"({len(schedule)} launches)"
            out.append(f"{name}_{part}_ms={ms:.3f} {extra}")
    print(f"  n=2^{n.bit_length() - 1} breakdown: " + " ".join(out))


if __name__ == "__main__":
    raise SystemExit(main())
