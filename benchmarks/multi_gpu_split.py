#!/usr/bin/env python3
"""How an item kernel's work scales over several GPUs: the minimal template's `split` example
(SAXPY on chunks of the items, one thread per device taking chunks from a shared queue,
results read back into place) on 1 GPU and on 2 GPUs, wall time, on cuda and on ash.

Two steps, because the GPU machine has no cargo:

    # here (needs rgpu, cargo, the nvptx and rust-gpu toolchains): a fresh minimal workspace
    # built for cuda (sm_90) and ash, its `split` example copied to .device/multi_gpu_split/
    python3 benchmarks/multi_gpu_split.py build

    # there (carry .device/multi_gpu_split/ and this file): every backend, 1 and 2 GPUs
    python3 benchmarks/multi_gpu_split.py run --bin .device/multi_gpu_split/split \\
        | tee benchmarks/logs/<YYYY-MM-DD>/multi_gpu_split.log

`run` asks the binary which devices each backend has (`split --list`, the runtime's own list:
CUDA ordinals, Vulkan's device order) and runs every device count from 1 to what it has, up
to `--max-devices`, `--runs` times each (the median counts), alternating the counts so drift
hits them alike; on a 1-GPU machine it says the 2-GPU rows cannot run and runs the 1-GPU
ones. Each run checks its result exactly (y + R * a * x), so the rows are also a check that
the split gives what one device gives. Prints one JSON line per run and a Markdown table:
backend, devices, median ms (min-max), speed-up over 1 device.

Size: n = 2^27 items in chunks of 2^22 (32 chunks), 1000 launches per chunk: about 1 s on
one H100, with the chunk's transfers (3 x 16 MiB over PCIe) about a tenth of its compute.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CARRY = REPO / ".device" / "multi_gpu_split"
SIZE = {"n": 1 << 27, "chunk": 1 << 22, "repeat": 1000}


def build(args: argparse.Namespace) -> None:
    """A fresh minimal workspace of this checkout's rgpu, built for cuda and ash."""
    rgpu = shutil.which("rgpu") or sys.exit("rgpu is not on PATH: pip install . (or the .venv)")
    work = Path(tempfile.mkdtemp(prefix="multi-gpu-split-"))
    subprocess.run(
        [rgpu, "new", "splitbench", "--template", "minimal", "--dir", str(work)], check=True
    )
    ws = work / "splitbench"
    target = ws / "target"
    subprocess.run(
        [rgpu, "build", "--backend", "cuda,ash", "--arch", args.arch, "--yes"],
        cwd=ws,
        env={**os.environ, "CARGO_TARGET_DIR": str(target)},
        check=True,
    )
    CARRY.mkdir(parents=True, exist_ok=True)
    binary = CARRY / "split"
    shutil.copy2(target / "release" / "examples" / "split", binary)
    shutil.copy2(Path(__file__), CARRY / Path(__file__).name)
    subprocess.run(["strip", str(binary)], check=False)
    print(f"built {binary} ({binary.stat().st_size >> 20} MiB); carry {CARRY}")


def devices(binary: Path, backend: str) -> list[str]:
    proc = subprocess.run(
        [str(binary), "--list"],
        env={**os.environ, "RGPU_BACKEND": backend},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        print(f"# {backend}: no devices: {proc.stderr.strip()}")
        return []
    return proc.stdout.splitlines()


def once(binary: Path, backend: str, count: int, size: dict[str, int]) -> dict[str, object]:
    argv = [str(binary), "--devices", str(count), "--json"]
    for key, value in size.items():
        argv += [f"--{key}", str(value)]
    proc = subprocess.run(
        argv,
        env={**os.environ, "RGPU_BACKEND": backend},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} (RGPU_BACKEND={backend}) failed:\n{proc.stderr}")
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    print(json.dumps(result), flush=True)
    if result["exact"] is not True:
        sys.exit(f"{backend} on {count} devices: the result is not exact")
    return result


def run(args: argparse.Namespace) -> None:
    binary = Path(args.bin)
    size = {key: getattr(args, key) or value for key, value in SIZE.items()}
    rows = []
    for backend in args.backend:
        listed = devices(binary, backend)
        for line in listed:
            print(f"# {backend} device {line}")
        counts = list(range(1, min(len(listed), args.max_devices) + 1))
        if listed and len(listed) < args.max_devices:
            most = args.max_devices
            print(f"# {backend}: {len(listed)} device(s) here: the {most}-device row cannot run")
        times: dict[int, list[float]] = {c: [] for c in counts}
        for _ in range(args.runs):
            for count in counts:
                ms = once(binary, backend, count, size)["ms"]
                assert isinstance(ms, float)
                times[count].append(ms)
        for count in counts:
            rows.append((backend, count, times[count], statistics.median(times[1])))
    print(f"\nn = {size['n']}, chunk = {size['chunk']}, repeat = {size['repeat']}, ", end="")
    print(f"median of {args.runs}\n")
    print("| backend | devices | wall ms, median (min-max) | speed-up over 1 device |")
    print("|---|---|---|---|")
    for backend, count, ms, one in rows:
        median = statistics.median(ms)
        spread = f"{min(ms):.1f}-{max(ms):.1f}"
        print(f"| {backend} | {count} | {median:.1f} ({spread}) | {one / median:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    # One parser for both steps (not subparsers), so that an unknown option is reported as
    # such whatever comes with it.
    parser.add_argument("step", help="build (here) or run (on the GPU machine)")
    parser.add_argument("--arch", default="sm_90", help="build: the CUDA arch")
    there = parser
    there.add_argument("--bin", default=str(CARRY / "split"))
    there.add_argument("--backend", action="append", default=None)
    there.add_argument("--max-devices", type=int, default=2)
    there.add_argument("--runs", type=int, default=3)
    for key in SIZE:  # smaller sizes for a smoke run (the defaults are the measured ones)
        there.add_argument(f"--{key}", type=int, default=None)
    args = parser.parse_args()
    if args.step not in ("build", "run"):
        parser.error(f"argument step: invalid choice: {args.step!r} (choose from 'build', 'run')")
    if args.step == "build":
        build(args)
    else:
        args.backend = args.backend or ["cuda", "ash"]
        run(args)


if __name__ == "__main__":
    main()
