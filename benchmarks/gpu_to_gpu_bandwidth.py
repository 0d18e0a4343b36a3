#!/usr/bin/env python3
"""Bandwidth between the GPUs of one machine through rgpu beside the same operations through
CuPy, in one run on one machine: a copy GPU 0 -> GPU 1 (rgpu's `Device::copy_from` and
`Collective::send_recv` against `cudaMemcpyPeerAsync`) and an f32 sum all-reduce over every
GPU (rgpu's `Collective::all_reduce`, which is NCCL's, against NCCL's through
`cupy.cuda.nccl`), for 1 MiB to 1 GiB, reported as NCCL's tests report (algorithm and bus
bandwidth; bus = algorithm x 2 (n - 1) / n for the all-reduce).

Two steps, because the GPU machine has no cargo:

    # here: the runtime's `collectives` example, built for cuda, to .device/gpu_to_gpu/
    python3 benchmarks/gpu_to_gpu_bandwidth.py build

    # there (carry .device/gpu_to_gpu/ and this file): both sides, every size
    python3 benchmarks/gpu_to_gpu_bandwidth.py run --bin .device/gpu_to_gpu/collectives \\
        | tee benchmarks/logs/<YYYY-MM-DD>/gpu_to_gpu_bandwidth.log

Both sides time alike: two warm-up operations, then `--reps` samples, each the mean of
`iters` operations (20 at 1 MiB down to 1 at 1 GiB) between host clock readings, every
device synchronized at the end of a sample; the median counts, best and worst are shown.
rgpu's rows check their results (the copy's bytes, the all-reduce's sums).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CARRY = REPO / ".device" / "gpu_to_gpu"
SIZES_MIB = [1, 16, 64, 256, 1024]


def build(args: argparse.Namespace) -> None:
    """The runtime's `collectives` example, release, for cuda."""
    cargo = shutil.which("cargo") or sys.exit("cargo is not on PATH: install Rust (rustup)")
    out = subprocess.run(
        [
            cargo,
            "build",
            "--release",
            "--example",
            "collectives",
            "--features",
            "cuda",
            "-p",
            "rgpu-runtime",
            "--message-format",
            "json",
        ],
        cwd=REPO / "crates",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exe = ""
    for line in out.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("target", {}).get("name") == "collectives" and msg.get("executable"):
            exe = msg["executable"]
    if not exe:
        sys.exit("cargo built no `collectives` example")
    CARRY.mkdir(parents=True, exist_ok=True)
    shutil.copy2(exe, CARRY / "collectives")
    print(f"built {CARRY / 'collectives'}: carry .device/gpu_to_gpu/ and this file")


def iters_for(mib: int) -> int:
    return max(1, min(20, 256 // mib))


def sample(reps: int, iters: int, op: Any, sync: Any) -> list[float]:
    for _ in range(2):
        op()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(iters):
            op()
        sync()
        times.append((time.perf_counter() - start) * 1e3 / iters)
    return times


def row(op: str, gpus: int, nbytes: int, factor: float, times: list[float]) -> dict[str, Any]:
    mid = statistics.median(times)
    algbw = nbytes / (mid * 1e-3) / 1e9
    return {
        "op": op,
        "gpus": gpus,
        "bytes": nbytes,
        "median_ms": round(mid, 4),
        "best_ms": round(min(times), 4),
        "worst_ms": round(max(times), 4),
        "algbw_gbps": round(algbw, 1),
        "busbw_gbps": round(algbw * factor, 1),
    }


def cupy_rows(reps: int) -> list[dict[str, Any]]:
    """The baseline: cudaMemcpyPeerAsync and NCCL's all-reduce through CuPy."""
    import cupy as cp  # type: ignore[import-not-found]  # the GPU machine's
    from cupy.cuda import nccl  # type: ignore[import-not-found]

    n = cp.cuda.runtime.getDeviceCount()
    rows = []
    streams = []
    for d in range(n):
        with cp.cuda.Device(d):
            streams.append(cp.cuda.Stream(non_blocking=True))

    def sync() -> None:
        for s in streams:
            s.synchronize()

    if n >= 2:
        with cp.cuda.Device(1), contextlib.suppress(cp.cuda.runtime.CUDARuntimeError):
            cp.cuda.runtime.deviceEnablePeerAccess(0)  # (an error: already enabled)
    comms = nccl.NcclCommunicator.initAll(list(range(n)))

    def peer(dst: Any, src: Any, nbytes: int) -> None:
        cp.cuda.runtime.memcpyPeerAsync(dst.data.ptr, 1, src.data.ptr, 0, nbytes, streams[1].ptr)

    def all_reduce(bufs: list[Any]) -> None:
        nccl.groupStart()
        for d in range(n):
            with cp.cuda.Device(d):
                ptr = bufs[d].data.ptr
                comms[d].allReduce(
                    ptr, ptr, bufs[d].size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, streams[d].ptr
                )
        nccl.groupEnd()

    for mib in SIZES_MIB:
        nbytes = mib << 20
        iters = iters_for(mib)
        bufs = []
        for d in range(n):
            with cp.cuda.Device(d):
                bufs.append(cp.arange(nbytes // 4, dtype=cp.float32) % 1024)
        if n >= 2:
            with cp.cuda.Device(1):
                dst = cp.empty(nbytes // 4, dtype=cp.float32)
            times = sample(reps, iters, functools.partial(peer, dst, bufs[0], nbytes), sync)
            rows.append(row("cudaMemcpyPeerAsync 0->1", 2, nbytes, 1.0, times))
        times = sample(reps, iters, functools.partial(all_reduce, bufs), sync)
        rows.append(row("NCCL allReduce f32 sum (CuPy)", n, nbytes, 2 * (n - 1) / n, times))
    return rows


def run(args: argparse.Namespace) -> None:
    proc = subprocess.run(
        [args.bin, str(args.reps)], capture_output=True, text=True, env={**os.environ}, check=False
    )
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"{args.bin} failed ({proc.returncode}): {proc.stdout[-2000:]}")
    ours = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    theirs = cupy_rows(args.reps)
    for r in ours + theirs:
        print(json.dumps(r))
    base = {("copy" if "0->1" in r["op"] else "all_reduce", r["bytes"]): r for r in theirs}
    print(
        "\n| operation | GPUs | MiB | median ms (best-worst) | algbw GB/s | busbw GB/s | "
        "baseline busbw GB/s | rgpu / baseline time |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in ours + theirs:
        kind = "copy" if "0->1" in r["op"] else "all_reduce"
        b = base.get((kind, r["bytes"]))
        ratio = f"{r['median_ms'] / b['median_ms']:.3f}x" if b and b is not r else ""
        print(
            f"| {r['op']} | {r['gpus']} | {r['bytes'] >> 20} | {r['median_ms']} "
            f"({r['best_ms']}-{r['worst_ms']}) | {r['algbw_gbps']} | {r['busbw_gbps']} | "
            f"{b['busbw_gbps'] if b else ''} | {ratio} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    # One parser for both steps (not subparsers), so that an unknown option is reported as
    # such whatever comes with it.
    parser.add_argument("step", help="build (here) or run (on the GPU machine)")
    parser.add_argument("--bin", default=str(CARRY / "collectives"), help="run: the example")
    parser.add_argument("--reps", type=int, default=20, help="run: samples per size")
    args = parser.parse_args()
    if args.step not in ("build", "run"):
        parser.error(f"argument step: invalid choice: {args.step!r} (choose from 'build', 'run')")
    {"build": build, "run": run}[args.step](args)


if __name__ == "__main__":
    main()
