"""Same-lease CUDA reference for the issue-6 benchmark: the same naive bitonic network
(encode, one launch per step with one thread per compare pair, decode) as CUDA C++ through
cupy. Times the GPU work only (CUDA events), like the Vulkan runners' RGPU_GPU_TIMING."""

import sys

import cupy as cp
import numpy as np

SRC = r"""
extern "C" __global__ void encode(unsigned* k, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) k[i] = k[i]; }
extern "C" __global__ void step(unsigned* k, unsigned n, unsigned block, unsigned d) {
    unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned pairs = n / 2; if (p >= pairs) return;
    unsigned lo = ((p & ~(d - 1)) << 1) | (p & (d - 1));
    unsigned hi = (d * 2 == block) ? (lo ^ (block - 1)) : (lo + d);
    if (hi < n) { unsigned a = k[lo], b = k[hi]; if (a > b) { k[lo] = b; k[hi] = a; } } }
"""
mod = cp.RawModule(code=SRC)
enc, step = mod.get_function("encode"), mod.get_function("step")
for e in map(int, sys.argv[1:]):
    n = 1 << e
    host = np.random.default_rng(1).integers(0, 2**32, n, dtype=np.uint32)
    steps = []
    b = 2
    while b <= n:
        d = b // 2
        while d >= 1:
            steps.append((b, d))
            d //= 2
        b *= 2
    times = []
    for run in range(11):
        k = cp.asarray(host)
        s, t = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        enc(((n + 255) // 256,), (256,), (k, np.uint32(n)))
        for b, d in steps:
            step(((n // 2 + 255) // 256,), (256,), (k, np.uint32(n), np.uint32(b), np.uint32(d)))
        enc(((n + 255) // 256,), (256,), (k, np.uint32(n)))
        t.record()
        t.synchronize()
        if run:
            times.append(cp.cuda.get_elapsed_time(s, t))
    ok = bool((cp.diff(k.astype(cp.int64)) >= 0).all())
    print(f"cuda-cupy 2^{e}: {sorted(times)[len(times) // 2]:.3f} ms (median of 10) sorted={ok}")
