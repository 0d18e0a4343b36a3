#!/usr/bin/env python3
"""What the looped sum's bounds check costs in CUDA C++: the user kernels' two-level sum
(`reduce_sum_looped`: each thread adds `per_thread` elements strided by the workgroup size,
`x[i]` behind `if (i < n)`) written three ways in CUDA C++ and timed on one GPU:

- `unchecked`: the twin of benchmarks/user_kernels_twins.py (no bounds check: C++ has none);
- `rust_check`: the same loop with the check Rust's `x[i]` carries (`if (i >= len) __trap();`
  before the load), as rgpu's PTX has it (a branch to a block that ends the kernel);
- `len_guard`: the loop guarded by `i < len` (the shape docs/kernel-api.md, "Loops", teaches:
  the guard is the check).

So the gap of rgpu's `reduce_sum_looped` to its twin can be read against C++ with the same
semantics. NVRTC through CuPy (`--fmad=false`), 256 threads, 16 items a thread; device time
with CUDA events, median, min and max of `--reps` runs after a warm-up; every sum checked
against CuPy's. One JSON object per line.

    python3 benchmarks/looped_sum_bounds_check_cuda_cpp.py [--reps 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any

THREADS = 256
PER_THREAD = 16
SIZES = (1 << 24, 1 << 26)

SOURCE = r"""
__device__ unsigned block_sum(unsigned v, unsigned* sums) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) sums[threadIdx.x / 32] = v;
    __syncthreads();
    unsigned total = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < blockDim.x / 32; w++) total += sums[w];
    return total;
}

template <int SHAPE>
__device__ void looped(const unsigned* __restrict__ x, unsigned len, unsigned n,
                       unsigned per_thread, unsigned* out) {
    __shared__ unsigned sums[32];
    unsigned base = blockIdx.x * blockDim.x * per_thread + threadIdx.x;
    unsigned acc = 0;
    for (unsigned k = 0; k < per_thread; k++) {
        unsigned i = base + k * blockDim.x;
        if (SHAPE == 0) {
            if (i < n) acc += x[i];
        } else if (SHAPE == 1) {
            if (i < n) {
                if (i >= len) __trap();
                acc += x[i];
            }
        } else {
            if (i < len) acc += x[i];
        }
    }
    unsigned total = block_sum(acc, sums);
    if (threadIdx.x == 0) atomicAdd(out, total);
}

extern "C" __global__ void unchecked(const unsigned* x, unsigned len, unsigned n,
                                     unsigned per_thread, unsigned* out) {
    looped<0>(x, len, n, per_thread, out);
}
extern "C" __global__ void rust_check(const unsigned* x, unsigned len, unsigned n,
                                      unsigned per_thread, unsigned* out) {
    looped<1>(x, len, n, per_thread, out);
}
extern "C" __global__ void len_guard(const unsigned* x, unsigned len, unsigned n,
                                     unsigned per_thread, unsigned* out) {
    looped<2>(x, len, n, per_thread, out);
}
"""

SHAPES = ("unchecked", "rust_check", "len_guard")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    import cupy as cp  # type: ignore[import-not-found]

    module = cp.RawModule(code=SOURCE, options=("--fmad=false", "-std=c++17"))
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    failed = False
    for n in SIZES:
        x = (cp.arange(n, dtype=cp.uint32) * cp.uint32(0x9E3779B1)) >> cp.uint32(7)
        want = int(x.sum(dtype=cp.uint64)) & 0xFFFFFFFF
        groups = (n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD)
        for shape in SHAPES:
            kernel = module.get_function(shape)
            out = cp.zeros(1, dtype=cp.uint32)
            launch_args: Any = (x, cp.uint32(n), cp.uint32(n), cp.uint32(PER_THREAD), out)

            def run(kernel: Any = kernel, g: int = groups, a: Any = launch_args) -> None:
                kernel((g,), (THREADS,), a)

            run()  # the check's run (`out` was zeros), then a warm-up
            got = int(out.get()[0])
            check = "equal" if got == want else f"differs ({got} for {want})"
            failed |= check != "equal"
            run()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            times = []
            for _ in range(args.reps):
                start.record()
                run()
                end.record()
                end.synchronize()
                times.append(float(cp.cuda.get_elapsed_time(start, end)))
            times.sort()
            row = {
                "kernel": f"reduce_sum_looped/{shape}",
                "size": f"2^{n.bit_length() - 1}",
                "backend": "cuda-c++",
                "device": device,
                "check": check,
                "device_ms": {
                    "median": statistics.median(times),
                    "min": times[0],
                    "max": times[-1],
                },
                "reps": args.reps,
            }
            print(json.dumps(row), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
