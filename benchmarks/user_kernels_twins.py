#!/usr/bin/env python3
"""The CUDA C++ twins of the user-style kernels (benchmarks/user_kernels/kernel/src/):
the same algorithms, launch shapes and inputs (the same hash), compiled by NVRTC through
CuPy's RawKernel with `--fmad=false` (so `a * b + c` rounds twice, as in rgpu, and `fmaf`
is the one fused operation, as rgpu's `mul_add`). Device time with CUDA events: median, min
and max of `--reps` runs after a warm-up. Each result's SHA-256 is compared with the
reference line the rgpu program printed for the same case.

    user-kernels --sizes large > kernels.jsonl
    python3 benchmarks/user_kernels_twins.py --expected kernels.jsonl > twins.jsonl

Needs CuPy (the H100 machine has it). One JSON object per line, `"backend": "cuda-c++"`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# CuPy is imported after the arguments are parsed, so `--help` works without it.
cp: Any = None

THREADS = 256
SCAN_TILE = THREADS * 8
TILE = 16
NBODY_EPS2 = 1e-4
LOOPED_PER_THREAD = 16

SOURCE = r"""
#define THREADS 256
#define SCAN_ROUNDS 8
#define TILE 16

extern "C" __global__ void saxpy(unsigned n, float a, const float* __restrict__ x,
                                 float* __restrict__ y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaf(a, x[i], y[i]);
}

__device__ unsigned warp_sum(unsigned v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The workgroup's sum on thread 0 (each warp's sum through shared memory).
__device__ unsigned block_sum(unsigned v, unsigned* sums) {
    unsigned s = warp_sum(v);
    if ((threadIdx.x & 31) == 0) sums[threadIdx.x / 32] = s;
    __syncthreads();
    unsigned total = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < blockDim.x / 32; w++) total += sums[w];
    return total;
}

extern "C" __global__ void reduce_sum(const unsigned* __restrict__ x, unsigned n,
                                      unsigned* out) {
    __shared__ unsigned sums[THREADS / 32];
    unsigned stride = gridDim.x * blockDim.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    while (i + 3 * stride < n) {
        unsigned a = x[i], b = x[i + stride], c = x[i + 2 * stride], d = x[i + 3 * stride];
        acc += a + b + c + d;
        i += 4 * stride;
    }
    while (i < n) {
        acc += x[i];
        i += stride;
    }
    unsigned total = block_sum(acc, sums);
    if (threadIdx.x == 0) atomicAdd(out, total);
}

extern "C" __global__ void reduce_sum_plain(const unsigned* __restrict__ x, unsigned n,
                                            unsigned* out) {
    __shared__ unsigned sums[THREADS / 32];
    unsigned stride = gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
    unsigned total = block_sum(acc, sums);
    if (threadIdx.x == 0) atomicAdd(out, total);
}

extern "C" __global__ void scan_tile_sums(const unsigned* __restrict__ x, unsigned n,
                                          unsigned* tile_sums) {
    __shared__ unsigned sums[THREADS / 32];
    unsigned base = blockIdx.x * THREADS * SCAN_ROUNDS;
    unsigned acc = 0;
#pragma unroll
    for (unsigned r = 0; r < SCAN_ROUNDS; r++) {
        unsigned i = base + r * THREADS + threadIdx.x;
        if (i < n) acc += x[i];
    }
    unsigned total = block_sum(acc, sums);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// Exclusive prefix of v over the block and the block's total (totals: one per warp + 1).
__device__ void block_exclusive_scan(unsigned v, unsigned* totals, unsigned* prefix,
                                     unsigned* total) {
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    unsigned inclusive = v;
    for (unsigned d = 1; d < 32; d *= 2) {
        unsigned other = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += other;
    }
    if (lane == 31) totals[warp] = inclusive;
    __syncthreads();
    unsigned warps = blockDim.x / 32;
    if (threadIdx.x == 0) {
        unsigned running = 0;
        for (unsigned s = 0; s < warps; s++) {
            unsigned t = totals[s];
            totals[s] = running;
            running += t;
        }
        totals[warps] = running;
    }
    __syncthreads();
    *prefix = inclusive - v + totals[warp];
    *total = totals[warps];
    __syncthreads();
}

extern "C" __global__ void scan_tile_offsets(unsigned* tile_sums, unsigned n) {
    __shared__ unsigned totals[THREADS / 32 + 1];
    unsigned carry = 0;
    for (unsigned base = 0; base < n; base += THREADS) {
        unsigned i = base + threadIdx.x;
        unsigned v = i < n ? tile_sums[i] : 0;
        unsigned prefix, total;
        block_exclusive_scan(v, totals, &prefix, &total);
        if (i < n) tile_sums[i] = carry + prefix;
        carry += total;
    }
}

extern "C" __global__ void scan_tiles(const unsigned* __restrict__ x, unsigned n,
                                      const unsigned* __restrict__ tile_offsets,
                                      unsigned* out) {
    __shared__ unsigned totals[THREADS / 32 + 1];
    unsigned base = blockIdx.x * THREADS * SCAN_ROUNDS;
    unsigned carry = tile_offsets[blockIdx.x];
    for (unsigned r = 0; r < SCAN_ROUNDS; r++) {
        unsigned i = base + r * THREADS + threadIdx.x;
        unsigned v = i < n ? x[i] : 0;
        unsigned prefix, total;
        block_exclusive_scan(v, totals, &prefix, &total);
        if (i < n) out[i] = carry + prefix;
        carry += total;
    }
}

extern "C" __global__ void histogram(const unsigned* __restrict__ words, unsigned n,
                                     unsigned* hist) {
    __shared__ unsigned bins[256];
    bins[threadIdx.x] = 0;
    __syncthreads();
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned w = words[i];
        atomicAdd(&bins[w & 0xff], 1u);
        atomicAdd(&bins[(w >> 8) & 0xff], 1u);
        atomicAdd(&bins[(w >> 16) & 0xff], 1u);
        atomicAdd(&bins[w >> 24], 1u);
    }
    __syncthreads();
    unsigned count = bins[threadIdx.x];
    if (count != 0) atomicAdd(&hist[threadIdx.x], count);
}

extern "C" __global__ void sgemm(unsigned n, unsigned k, const float* __restrict__ a,
                                 const float* __restrict__ b, float* __restrict__ c) {
    __shared__ float tile_a[TILE * TILE], tile_b[TILE * TILE];
    unsigned tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    unsigned row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (unsigned t = 0; t < k; t += TILE) {
        tile_a[ty * TILE + tx] = a[row * k + t + tx];
        tile_b[ty * TILE + tx] = b[(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (unsigned j = 0; j < TILE; j++)
            acc = fmaf(tile_a[ty * TILE + j], tile_b[j * TILE + tx], acc);
        __syncthreads();
    }
    c[row * n + col] = acc;
}

extern "C" __global__ void blur(unsigned width, unsigned height, const float* __restrict__ src,
                                float* __restrict__ dst) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= width * height) return;
    unsigned x = i % width, y = i / width;
    unsigned left = x > 0 ? i - 1 : i, right = x + 1 < width ? i + 1 : i;
    unsigned up = y > 0 ? i - width : i, down = y + 1 < height ? i + width : i;
    float c = src[i], l = src[left], r = src[right], u = src[up], d = src[down];
    dst[i] = 0.5f * c + 0.125f * (((l + r) + u) + d);
}

extern "C" __global__ void gather(unsigned n, const unsigned* __restrict__ index,
                                  const float* __restrict__ src, float* __restrict__ out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = src[index[i]];
}

extern "C" __global__ void scatter(unsigned n, const unsigned* __restrict__ index,
                                   const float* __restrict__ value, float* __restrict__ dst) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[index[i]] = value[i];
}

#define NBODY_EPS2 1e-4f

extern "C" __global__ void nbody(const float* __restrict__ pos, unsigned n,
                                 float* __restrict__ acc) {
    __shared__ float tile[4 * THREADS];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x;
    float px = pos[4 * i], py = pos[4 * i + 1], pz = pos[4 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (unsigned start = 0; start < n; start += THREADS) {
        unsigned j = start + t;
        tile[4 * t] = pos[4 * j];
        tile[4 * t + 1] = pos[4 * j + 1];
        tile[4 * t + 2] = pos[4 * j + 2];
        tile[4 * t + 3] = pos[4 * j + 3];
        __syncthreads();
        for (unsigned k = 0; k < THREADS; k++) {
            float dx = tile[4 * k] - px, dy = tile[4 * k + 1] - py, dz = tile[4 * k + 2] - pz;
            float d2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, NBODY_EPS2)));
            float inv = rsqrtf(d2);
            float s = tile[4 * k + 3] * (inv * inv * inv);
            ax = fmaf(dx, s, ax);
            ay = fmaf(dy, s, ay);
            az = fmaf(dz, s, az);
        }
        __syncthreads();
    }
    acc[4 * i] = ax;
    acc[4 * i + 1] = ay;
    acc[4 * i + 2] = az;
    acc[4 * i + 3] = 0.0f;
}

// The largest (is_max) or the sum of v over the block, on every thread.
__device__ float block_reduce(float v, bool is_max, float* part) {
    for (int o = 16; o > 0; o /= 2) {
        float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = v;
    __syncthreads();
    float all = part[0];
    for (unsigned s = 1; s < blockDim.x / 32; s++)
        all = is_max ? fmaxf(all, part[s]) : all + part[s];
    __syncthreads();
    return all;
}

extern "C" __global__ void softmax(const float* __restrict__ x, unsigned cols,
                                   float* __restrict__ out) {
    __shared__ float part[THREADS / 32];
    unsigned base = blockIdx.x * cols;
    float m = x[base];  // the row's first value, as the Rust kernel
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[base + c]);
    m = block_reduce(m, true, part);
    float sum = 0.0f;
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(x[base + c] - m);
    float scale = 1.0f / block_reduce(sum, false, part);
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x)
        out[base + c] = expf(x[base + c] - m) * scale;
}

extern "C" __global__ void reduce_sum_looped(const unsigned* __restrict__ x, unsigned n,
                                             unsigned per_thread, unsigned* out) {
    __shared__ unsigned sums[THREADS / 32];
    unsigned base = blockIdx.x * blockDim.x * per_thread + threadIdx.x;
    unsigned acc = 0;
    for (unsigned k = 0; k < per_thread; k++) {
        unsigned i = base + k * blockDim.x;
        if (i < n) acc += x[i];
    }
    unsigned total = block_sum(acc, sums);
    if (threadIdx.x == 0) atomicAdd(out, total);
}
"""


def hash_(n: int, seed: int) -> Any:
    """rgpu's `cases::hash` of 0..n (wrapping u32 arithmetic), on the GPU."""
    h = cp.arange(n, dtype=cp.uint32) * cp.uint32(0x9E3779B1)
    h ^= cp.uint32((seed * 0x85EBCA77) & 0xFFFFFFFF)
    h ^= h >> cp.uint32(16)
    h *= cp.uint32(0x7FEB352D)
    h ^= h >> cp.uint32(15)
    h *= cp.uint32(0x846CA68B)
    return h ^ (h >> cp.uint32(16))


def units(n: int, seed: int) -> Any:
    """Exact f32s in [-0.5, 0.5): `cases::unit`."""
    bits = (hash_(n, seed) >> cp.uint32(8)).astype(cp.float32)
    return bits * cp.float32(1.0 / 16_777_216.0) - cp.float32(0.5)


def shown(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n >= 1024 and n & (n - 1) == 0 else str(n)


@dataclass
class Case:
    kernel: str
    size: str
    bytes: float
    # Uploads the inputs and returns (one run, the result after the first run).
    prepare: Callable[[], tuple[Callable[[], None], Callable[[], Any]]]
    # For a kernel whose float functions round as the GPU does (rsqrtf, expf): the f64
    # result and the largest normwise relative error allowed (cases.rs `tolerance`); the
    # check is then against that, not rgpu's reference hash.
    reference: Callable[[], Any] | None = None
    tolerance: float | None = None


def within(got: Any, want: Any, tolerance: float) -> str:
    """The check of a tolerance case, in rgpu's words (src/main.rs `verdict`)."""
    error = float(cp.max(cp.abs(got.astype(cp.float64) - want)) / cp.max(cp.abs(want)))
    if error <= tolerance:
        return f"within {tolerance:.0e} (normwise relative error {error:.1e})"
    return f"differs: normwise relative error {error:.1e} > {tolerance:.0e}"


def blocks(n: int) -> int:
    return max(1, (n + THREADS - 1) // THREADS)


def cases(module: Any, sizes: str) -> list[Case]:
    k = {name: module.get_function(name) for name in KERNELS}

    def saxpy(n: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            x, y = units(n, 1), units(n, 2)

            def run() -> None:
                k["saxpy"]((blocks(n),), (THREADS,), (cp.uint32(n), cp.float32(0.75), x, y))

            return run, lambda: y

        return Case("saxpy", shown(n), 12.0 * n, prepare)

    def reduce_sum(n: int, name: str = "reduce_sum") -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            x, out = hash_(n, 3), cp.zeros(1, dtype=cp.uint32)
            groups = min(max((n + THREADS * 16 - 1) // (THREADS * 16), 1), 65535)

            def run() -> None:
                k[name]((groups,), (THREADS,), (x, cp.uint32(n), out))

            return run, lambda: out

        return Case(name, shown(n), 4.0 * n, prepare)

    def scan(n: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            x = hash_(n, 4)
            tiles = max(1, (n + SCAN_TILE - 1) // SCAN_TILE)
            tile_sums = cp.zeros(tiles, dtype=cp.uint32)
            out = cp.zeros(n, dtype=cp.uint32)

            def run() -> None:
                k["scan_tile_sums"]((tiles,), (THREADS,), (x, cp.uint32(n), tile_sums))
                k["scan_tile_offsets"]((1,), (THREADS,), (tile_sums, cp.uint32(tiles)))
                k["scan_tiles"]((tiles,), (THREADS,), (x, cp.uint32(n), tile_sums, out))

            return run, lambda: out

        return Case("exclusive_scan", shown(n), 12.0 * n, prepare)

    def histogram(n: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            words, hist = hash_(n, 5), cp.zeros(256, dtype=cp.uint32)
            groups = min(max((n + THREADS * 64 - 1) // (THREADS * 64), 1), 2048)

            def run() -> None:
                k["histogram"]((groups,), (THREADS,), (words, cp.uint32(n), hist))

            return run, lambda: hist

        return Case("histogram", shown(n), 4.0 * n, prepare)

    def sgemm(side: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            a, b = units(side * side, 6), units(side * side, 7)
            c = cp.zeros(side * side, dtype=cp.float32)
            grid = (side // TILE, side // TILE)

            def run() -> None:
                k["sgemm"](grid, (THREADS,), (cp.uint32(side), cp.uint32(side), a, b, c))

            return run, lambda: c

        return Case("sgemm", str(side), 12.0 * side * side, prepare)

    def blur(side: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            src = units(side * side, 8)
            dst = cp.zeros(side * side, dtype=cp.float32)

            def run() -> None:
                args = (cp.uint32(side), cp.uint32(side), src, dst)
                k["blur"]((blocks(side * side),), (THREADS,), args)

            return run, lambda: dst

        return Case("blur", f"{side}x{side}", 8.0 * side * side, prepare)

    def gather(n: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            index = hash_(n, 9) % cp.uint32(n)
            src, out = units(n, 10), cp.zeros(n, dtype=cp.float32)

            def run() -> None:
                k["gather"]((blocks(n),), (THREADS,), (cp.uint32(n), index, src, out))

            return run, lambda: out

        return Case("gather", shown(n), 12.0 * n, prepare)

    def scatter(n: int) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            index = (cp.arange(n, dtype=cp.uint32) * cp.uint32(0x9E3779B1)) & cp.uint32(n - 1)
            value, dst = units(n, 11), cp.zeros(n, dtype=cp.float32)

            def run() -> None:
                k["scatter"]((blocks(n),), (THREADS,), (cp.uint32(n), index, value, dst))

            return run, lambda: dst

        return Case("scatter", shown(n), 12.0 * n, prepare)

    def nbody(n: int, name: str = "nbody") -> Case:
        pos = units(4 * n, 12)
        pos[3::4] += cp.float32(0.6)

        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            acc = cp.zeros(4 * n, dtype=cp.float32)

            def run() -> None:
                k["nbody"]((n // THREADS,), (THREADS,), (pos, cp.uint32(n), acc))

            return run, lambda: acc

        def reference() -> Any:
            p = pos.astype(cp.float64).reshape(n, 4)
            out = cp.zeros((n, 4), dtype=cp.float64)
            for lo in range(0, n, 1024):  # 1024 bodies against all at a time
                d = p[None, :, :3] - p[lo : lo + 1024, None, :3]
                d2 = (d * d).sum(axis=2) + NBODY_EPS2
                s = p[None, :, 3] / (d2 * cp.sqrt(d2))
                out[lo : lo + 1024, :3] = (d * s[:, :, None]).sum(axis=1)
            return out.reshape(-1)

        return Case(name, str(n), 32.0 * n, prepare, reference, 1e-4)

    def softmax(rows: int, cols: int) -> Case:
        x = units(rows * cols, 13) * cp.float32(8.0)

        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            out = cp.zeros(rows * cols, dtype=cp.float32)

            def run() -> None:
                k["softmax"]((rows,), (THREADS,), (x, cp.uint32(cols), out))

            return run, lambda: out

        def reference() -> Any:
            r = x.astype(cp.float64).reshape(rows, cols)
            e = cp.exp(r - r.max(axis=1, keepdims=True))
            return (e / e.sum(axis=1, keepdims=True)).reshape(-1)

        return Case("softmax", f"{rows}x{cols}", 8.0 * rows * cols, prepare, reference, 1e-5)

    def reduce_sum_looped(n: int, name: str) -> Case:
        def prepare() -> tuple[Callable[[], None], Callable[[], Any]]:
            x, out = hash_(n, 14), cp.zeros(1, dtype=cp.uint32)
            groups = (n + THREADS * LOOPED_PER_THREAD - 1) // (THREADS * LOOPED_PER_THREAD)

            def run() -> None:
                args = (x, cp.uint32(n), cp.uint32(LOOPED_PER_THREAD), out)
                k["reduce_sum_looped"]((groups,), (THREADS,), args)

            return run, lambda: out

        return Case(name, shown(n), 4.0 * n, prepare)

    if sizes == "small":
        plain = reduce_sum(1_000_003, "reduce_sum_plain")
        small = [saxpy(100_003), reduce_sum(1_000_003), plain, scan(300_007), histogram(100_003)]
        small += [nbody(1024), nbody(1024, "nbody_tuned"), softmax(64, 1024)]
        return small + [reduce_sum_looped(1_000_003, name) for name in LOOPED]
    out: list[Case] = []
    for p in (24, 26):
        out += [saxpy(1 << p), reduce_sum(1 << p), reduce_sum(1 << p, "reduce_sum_plain")]
        out += [scan(1 << p), histogram(1 << p)]
    out += [sgemm(1024), sgemm(4096), blur(4096), blur(8192)]
    for p in (24, 26):
        out += [gather(1 << p), scatter(1 << p)]
    out += [nbody(16_384), nbody(16_384, "nbody_tuned"), softmax(4096, 1024)]
    for p in (24, 26):
        # One C++ twin for both Rust forms (`x[i]` behind `i < n`, and behind `i < x.len()`).
        out += [reduce_sum_looped(1 << p, name) for name in LOOPED]
    return out


LOOPED = ("reduce_sum_looped", "reduce_sum_looped_len")


KERNELS = (
    "saxpy reduce_sum reduce_sum_plain scan_tile_sums scan_tile_offsets scan_tiles histogram "
    "sgemm blur gather scatter nbody softmax reduce_sum_looped".split()
)


def timed(run: Callable[[], None], reps: int) -> list[float]:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    run()  # warm-up
    times = []
    for _ in range(reps):
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(float(cp.cuda.get_elapsed_time(start, end)))
    return times


def expected_hashes(path: str) -> dict[tuple[str, str], str]:
    found = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row.get("backend") == "reference":
                found[(row["kernel"], row["size"])] = row["sha256"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expected", help="the rgpu program's JSON lines (required)")
    parser.add_argument("--sizes", default="large", choices=["small", "large"])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    if args.expected is None:
        parser.error("the following arguments are required: --expected")
    global cp
    import cupy  # type: ignore[import-not-found]

    cp = cupy
    expected = expected_hashes(args.expected)
    module = cp.RawModule(code=SOURCE, options=("--fmad=false", "-std=c++17"))
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    failed = False
    for case in cases(module, args.sizes):
        run, result = case.prepare()
        run()
        cp.cuda.Device().synchronize()
        if case.reference is not None and case.tolerance is not None:
            check = within(result(), case.reference(), case.tolerance)
            failed |= not check.startswith("within")
        else:
            digest = hashlib.sha256(cp.asnumpy(result()).tobytes()).hexdigest()
            want = expected.get((case.kernel, case.size))
            check = "equal" if digest == want else f"differs (sha256 {digest}, rgpu's {want})"
            failed |= check != "equal"
        times = sorted(timed(run, args.reps))
        median = statistics.median(times)
        row = {
            "kernel": case.kernel,
            "size": case.size,
            "backend": "cuda-c++",
            "device": device,
            "check": check,
            "device_ms": {"median": median, "min": times[0], "max": times[-1]},
            "gbps": round(case.bytes / (median * 1e-3) / 1e9, 1),
            "reps": args.reps,
        }
        print(json.dumps(row), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
