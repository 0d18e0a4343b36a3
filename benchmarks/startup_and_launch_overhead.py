#!/usr/bin/env python3
"""Start-up time (process start to the first result) and launch overhead (one launch plus
sync, wall minus device time) per backend, beside CuPy's context creation.

Two halves, because the GPU machine has no cargo:

    python3 benchmarks/startup_and_launch_overhead.py WORK --build [--variant NAME[=SRC]]...
        [--backends cuda,wgpu,ash] [--arch sm_90]
builds here, per variant, a fresh `rgpu new` minimal workspace with the Mandelbrot kernel
and the program below added, with that variant's rgpu (`new`: this checkout; `NAME=SRC`: the
rgpu of the checkout SRC, e.g. `git archive` of the commit before a change), and copies the
stripped program to WORK/<variant>/startup_launch with its kernels' manifest;

    python3 benchmarks/startup_and_launch_overhead.py WORK [--backends cuda,ash,wgpu]
        [--runs 5] [--launches 2000] [--rounds 7]
runs them (on the GPU machine, or here on lavapipe): for each variant and backend, `--runs`
whole processes of `startup_launch startup` (open the device, one 64x64 Mandelbrot launch,
the image read back; the wall time of the process, measured from here), twice for cuda:
with the driver's JIT cache (~/.nv/ComputeCache) and with `CUDA_CACHE_DISABLE=1` (every PTX
compiled again, as on a first run); then `startup_launch launch` (a one-item SAXPY on
device buffers: the median over `--rounds` of the wall time per launch+sync over
`--launches`, the device time per launch from `Device::timed`, and launches queued
without a sync). Where CuPy is installed, also CuPy's context creation (in a fresh
process: `cupy.zeros(1)` after import, the way the issue measured it) and a CuPy RawKernel's
launch+sync (an empty kernel, the CUDA C++ reference), the host CPU time per launch+sync
(`startup_launch loop`, two lengths, the difference) and the main thread's CPU per launch
queued without a sync (`startup_launch queue`: rgpu's own launch path). Prints a Markdown
table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROGRAM = "startup_launch"

# The Mandelbrot kernel: a real file, which the portability corpus includes too
# (tests/corpus_table.py).
KERNEL = REPO / "benchmarks" / "startup_and_launch_overhead_kernel.rs"

SOURCE = r"""//! Start-up and launch overhead (benchmarks/startup_and_launch_overhead.py wrote it).
//!
//!   startup_launch startup         open the backend `RGPU_BACKEND` names, one 64x64
//!                                  Mandelbrot launch, read back; JSON with the times
//!   startup_launch launch N R      a one-item SAXPY on device buffers: R rounds of N
//!                                  launches, each followed by a sync; JSON
//!   startup_launch loop N          N launch+sync pairs (after 100 to warm up); JSON with
//!                                  the main thread's CPU time of the loop
//!   startup_launch queue N         N launches queued without a sync (after 100 launch+sync
//!                                  pairs), then one sync; JSON with the main thread's CPU
//!                                  time of the N launches alone: the host's own launch path

use std::process::ExitCode;
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn startup() -> Result<String, rgpu::Error> {
    let started = Instant::now();
    let (device, _) = rgpu::Device::select()?;
    let opened = ms(started);
    let width = 64u32;
    let mut image = vec![0u32; (width * width) as usize];
    kernel::mandelbrot(&device, width * width, width, &mut image)?;
    let first = ms(started);
    let sum: u64 = image.iter().map(|&v| u64::from(v)).sum();
    Ok(format!(
        "{{\"backend\": \"{}\", \"description\": {:?}, \"open_ms\": {opened:.3}, \
         \"first_result_ms\": {first:.3}, \"checksum\": {sum}}}",
        device.backend(),
        device.description()
    ))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn launch(n: u32, rounds: u32) -> Result<String, rgpu::Error> {
    let (device, _) = rgpu::Device::select()?;
    let x = device.upload(&[1.0f32])?;
    let mut y = device.zeros::<f32>(1)?;
    for _ in 0..200 {
        kernel::saxpy(&device, 1, 1.0, &x, &mut y)?;
        device.sync()?;
    }
    let mut walls = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..n {
            kernel::saxpy(&device, 1, 1.0, &x, &mut y)?;
            device.sync()?;
        }
        walls.push(ms(t) * 1e3 / f64::from(n));
    }
    let mut devices = Vec::new();
    for _ in 0..rounds {
        let (_, timed) = device.timed(|| {
            for _ in 0..n {
                kernel::saxpy(&device, 1, 1.0, &x, &mut y)?;
                device.sync()?;
            }
            Ok(())
        })?;
        devices.push(timed.map_or(f64::NAN, |t| t * 1e3 / f64::from(n)));
    }
    let mut queued = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..n {
            kernel::saxpy(&device, 1, 1.0, &x, &mut y)?;
        }
        device.sync()?;
        queued.push(ms(t) * 1e3 / f64::from(n));
    }
    let expected = 200.0 + 3.0 * f64::from(rounds) * f64::from(n);
    let got = f64::from(y.read()?[0]);
    let (wall, dev) = (median(&mut walls), median(&mut devices));
    Ok(format!(
        "{{\"backend\": \"{}\", \"description\": {:?}, \"launches\": {n}, \"rounds\": {rounds}, \
         \"launch_sync_us\": {wall:.2}, \"device_us\": {dev:.2}, \"overhead_us\": {:.2}, \
         \"queued_launch_us\": {:.2}, \"rounds_us\": {walls:?}, \"correct\": {}}}",
        device.backend(),
        device.description(),
        wall - dev,
        median(&mut queued),
        got == expected
    ))
}

/// This thread's time on a CPU so far, in ns (Linux: /proc/thread-self/schedstat), else 0.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn pairs(n: u32, sync_each: bool) -> Result<String, rgpu::Error> {
    let (device, _) = rgpu::Device::select()?;
    let x = device.upload(&[1.0f32])?;
    let mut y = device.zeros::<f32>(1)?;
    for _ in 0..100 {
        kernel::saxpy(&device, 1, 1.0, &x, &mut y)?;
        device.sync()?;
    }
    let started = thread_cpu_ns();
    for _ in 0..n {
        kernel::saxpy(&device, 1, 1.0, &x, &mut y)?;
        if sync_each {
            device.sync()?;
        }
    }
    let cpu = thread_cpu_ns() - started;
    device.sync()?;
    Ok(format!(
        "{{\"launches\": {n}, \"sync_each\": {sync_each}, \"main_thread_cpu_ns\": {cpu}, \
         \"y\": {}}}",
        y.read()?[0]
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let number = |i: usize, or: u32| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(or);
    let result = match args.get(1).map(String::as_str) {
        Some("startup") => startup(),
        Some("launch") => launch(number(2, 2000), number(3, 7)),
        Some("loop") => pairs(number(2, 1000), true),
        Some("queue") => pairs(number(2, 1000), false),
        _ => {
            eprintln!("usage: startup_launch startup | launch [N] [ROUNDS] | loop [N] | queue [N]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
"""


def sh(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(argv), f"(in {cwd})", flush=True)
    subprocess.run(argv, cwd=cwd, env=env, check=True)


def add_program(ws: Path) -> None:
    """The Mandelbrot kernel and the program, added to a minimal workspace."""
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n\n" + KERNEL.read_text(encoding="utf-8"))
    (ws / "examples").mkdir(exist_ok=True)
    (ws / "examples" / f"{PROGRAM}.rs").write_text(SOURCE)


def build(work: Path, name: str, source: Path, args: argparse.Namespace) -> None:
    home = work / f"{name}-workspace"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    # Each variant its own target dir (under CARGO_TARGET_DIR when set): the variants vendor
    # rgpu's crates at the same path with the same version, and cargo, which keys path
    # crates by that path, would take one variant's build for the other's.
    env = {**os.environ, "PYTHONPATH": str(source)}
    shared = env.get("CARGO_TARGET_DIR")
    target = Path(shared) / name if shared else home / "ws" / "target"
    env["CARGO_TARGET_DIR"] = str(target)
    rgpu = [sys.executable, "-m", "rgpu"]
    sh([*rgpu, "new", "ws", "--template", "minimal"], home, env)
    ws = home / "ws"
    add_program(ws)
    sh([*rgpu, "build", "--backend", args.backends, "--arch", args.arch], ws, env)
    out = work / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    shutil.copy2(target / "release" / "examples" / PROGRAM, out / PROGRAM)
    subprocess.run(["strip", str(out / PROGRAM)], check=False)
    shutil.copy2(ws / "target" / "rgpu" / "kernels" / "manifest.json", out / "manifest.json")


def program_json(argv: list[str], env: dict[str, str]) -> tuple[dict[str, object], float]:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - started) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def per_pair(program: str, env: dict[str, str], pairs: int) -> tuple[float, float, float]:
    """Per launch+sync, in us: the host CPU of the process (user + system, every thread: a
    driver's too), of its main thread alone (rgpu's launch path and the driver calls it
    makes; a CPU device's work runs on other threads), and the wall time: `loop` with
    `pairs` more pairs than a short run, the difference divided by them (start-up and exit
    cancel out). CPU time stretches less than wall time on a machine others share."""
    costs = []
    for n in (100, 100 + pairs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result, wall = program_json([program, "loop", str(n)], env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        main = float(str(result.get("main_thread_cpu_ns", "nan"))) / 1e3
        costs.append((cpu * 1e6, main, wall * 1e3))
    return (
        (costs[1][0] - costs[0][0]) / pairs,
        (costs[1][1] - costs[0][1]) / pairs,
        (costs[1][2] - costs[0][2]) / pairs,
    )


CUPY_CONTEXT = """
import time
t = time.perf_counter()
import cupy
imported = time.perf_counter()
cupy.zeros(1)
cupy.cuda.Stream.null.synchronize()
print((time.perf_counter() - imported) * 1e3, (imported - t) * 1e3)
"""

CUPY_LAUNCH = """
import time, statistics, cupy
SOURCE = r'extern "C" __global__ void k(float* y) { if (threadIdx.x == 0) y[0] += 1.0f; }'
k = cupy.RawKernel(SOURCE, 'k')
y = cupy.zeros(1, dtype=cupy.float32)
s = cupy.cuda.Stream.null
for _ in range(200):
    k((1,), (32,), (y,)); s.synchronize()
walls = []
for _ in range(ROUNDS):
    t = time.perf_counter()
    for _ in range(N):
        k((1,), (32,), (y,)); s.synchronize()
    walls.append((time.perf_counter() - t) * 1e6 / N)
print(statistics.median(walls))
"""


def cupy_rows(args: argparse.Namespace) -> list[str]:
    if subprocess.run([sys.executable, "-c", "import cupy"], capture_output=True).returncode:
        return ["| CuPy | (not installed here) | | |"]
    contexts, imports = [], []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", CUPY_CONTEXT], capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
        contexts.append(float(out[0]))
        imports.append(float(out[1]))
    code = f"N, ROUNDS = {args.launches}, {args.rounds}\n" + CUPY_LAUNCH
    launch = float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, check=True).stdout.split()[0])  # fmt: skip
    imported = statistics.median(imports)
    return [
        f"| CuPy context creation (`cupy.zeros(1)` after import; import {imported:.0f} ms) "
        f"| {min(contexts):.0f} / {statistics.median(contexts):.0f} / {max(contexts):.0f} ms | | |",
        f"| CuPy RawKernel launch+sync (python) | | {launch:.1f} us | |",
    ]


def run(work: Path, args: argparse.Namespace) -> None:
    variants = sorted(p.parent for p in work.glob(f"*/{PROGRAM}"))
    if not variants:
        sys.exit(f"no {work}/<variant>/{PROGRAM}: build first (--build, see --help)")
    rows = [
        "| variant / backend | start to first result, whole process (min / median / max) "
        "| launch+sync wall; device; overhead | queued launch |",
        "|---|---|---|---|",
    ]
    for variant in variants:
        program = str(variant / PROGRAM)
        for backend in args.backends.split(","):
            env = {**os.environ, "RGPU_BACKEND": backend}
            modes = [("", env)]
            if backend == "cuda":
                cold = {**env, "CUDA_CACHE_DISABLE": "1"}
                modes = [(" (JIT cache)", env), (" (no JIT cache)", cold)]
            try:
                for label, mode_env in modes:
                    walls = []
                    for _ in range(args.runs):
                        result, wall = program_json([program, "startup"], mode_env)
                        walls.append(wall)
                    inner = (
                        f"in-process {result['first_result_ms']:.0f} ms, "
                        f"open {result['open_ms']:.0f} ms"
                    )
                    rows.append(
                        f"| {variant.name} / {backend}{label} | {min(walls):.0f} / "
                        f"{statistics.median(walls):.0f} / {max(walls):.0f} ms ({inner}) | | |"
                    )
                print(f"{variant.name}/{backend}: {result['description']}", flush=True)
                counts = [str(args.launches), str(args.rounds)]
                launch, _ = program_json([program, "launch", *counts], env)
            except RuntimeError as error:
                rows.append(f"| {variant.name} / {backend} | {error} | | |")
                continue
            if not launch["correct"]:
                rows.append(f"| {variant.name} / {backend} | WRONG RESULT | | |")
            cpu, main, wall = per_pair(program, env, args.launches * 2)
            queued, _ = program_json([program, "queue", str(args.launches * 5)], env)
            record = float(str(queued["main_thread_cpu_ns"])) / 1e3 / (args.launches * 5)
            rows.append(
                f"| {variant.name} / {backend} | | {launch['launch_sync_us']:.1f}; "
                f"{launch['device_us']:.1f}; {launch['overhead_us']:.1f} us (per pair in "
                f"`loop`: host CPU {cpu:.1f} us, main thread {main:.1f} us, wall {wall:.1f} us) "
                f"| {launch['queued_launch_us']:.1f} us (main thread CPU {record:.2f} us) |"
            )
    rows += cupy_rows(args)
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("work", type=Path, metavar="WORK")
    parser.add_argument("--build", action="store_true", help="build the programs here")
    parser.add_argument(
        "--variant",
        action="append",
        metavar="NAME[=SRC]",
        help="with --build: a variant and its rgpu checkout (default: new)",
    )
    parser.add_argument("--backends", default="cuda,ash,wgpu")
    parser.add_argument("--arch", default="sm_90", help="with --build: the CUDA arch")
    parser.add_argument("--runs", type=int, default=5, help="processes per start-up row")
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    work = args.work.resolve()
    if not args.build:
        run(work, args)
        return
    for spec in args.variant or ["new"]:
        name, _, source = spec.partition("=")
        build(work, name, Path(source).resolve() if source else REPO, args)


if __name__ == "__main__":
    main()
