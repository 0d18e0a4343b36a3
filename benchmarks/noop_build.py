#!/usr/bin/env python3
"""rgpu's own overhead: `rgpu build` with nothing to do, the way users meet it (and, with
--new, the time of `rgpu new`).

For each backend (cpu, cuda) in a fresh `rgpu new` workspace: build once, then time in
turn `rgpu build --backend B` and the exact `cargo build` that rgpu's plan wraps
(`rgpu build --backend B --dry-run --json`, last step), ROUNDS times each, interleaved, so
that cargo's own rewrites of its dep-info files between rgpu runs are part of what rgpu
sees (as when a user or rust-analyzer runs cargo in between). Prints a Markdown table of
medians and the ratio rgpu / cargo.

Needs rgpu on PATH (installed as users install it: `pip install .`), cargo, and for cuda
the nvptx toolchain and ptxas (`scripts/setup-test-env.sh`).

    python3 benchmarks/noop_build.py [--rounds 30] [--backend cpu --backend cuda] [--new]

--new also times `rgpu new` of the sort demo into an empty directory (median and min of
--rounds), what the first benchmark of rgpu measured with hyperfine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    if "Compiling" in proc.stderr:
        sys.exit(f"{' '.join(argv)} compiled something: not a no-op\n{proc.stderr}")
    return elapsed * 1000


def host_cargo(ws: Path, backend: str, env: dict[str, str]) -> tuple[list[str], Path]:
    out = subprocess.run(
        ["rgpu", "build", "--backend", backend, "--dry-run", "--json"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    step = json.loads(out)["plan"]["steps"][-1]
    return list(step["argv"]), Path(step["cwd"])


def measure(parent: Path, backend: str, rounds: int, env: dict[str, str]) -> dict[str, float]:
    name = f"noop{backend}"
    subprocess.run(["rgpu", "new", name, "--dir", str(parent)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    ws = parent / name
    subprocess.run(["rgpu", "build", "--backend", backend], cwd=ws, env=env, check=True,
                   capture_output=True)  # fmt: skip
    cargo, cwd = host_cargo(ws, backend, env)
    rgpu = ["rgpu", "build", "--backend", backend]
    run(cargo, cwd, env)  # warm both once
    run(rgpu, ws, env)
    times: dict[str, list[float]] = {"rgpu": [], "cargo": []}
    for _ in range(rounds):
        times["rgpu"].append(run(rgpu, ws, env))
        times["cargo"].append(run(cargo, cwd, env))
    result = {k: statistics.median(v) for k, v in times.items()}
    result["rgpu_min"] = min(times["rgpu"])
    result["cargo_min"] = min(times["cargo"])
    print(f"# {backend}: `{' '.join(cargo)}`", file=sys.stderr)
    return result


def time_new(parent: Path, rounds: int, env: dict[str, str]) -> list[float]:
    """`rgpu new` of the sort demo into a directory that does not exist yet, ROUNDS times."""
    import shutil

    times = []
    for i in range(rounds + 1):
        target = parent / "fresh"
        shutil.rmtree(target, ignore_errors=True)
        elapsed = run(["rgpu", "new", "fresh", "--dir", str(parent)], parent, env)
        if i:  # the first run warms the file cache
            times.append(elapsed)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="timed runs of each (default 30)")
    parser.add_argument("--backend", action="append", choices=("cpu", "cuda"))
    parser.add_argument("--new", action="store_true", help="also time `rgpu new`")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure rgpu as installed: bytecode cached
    env.pop("CARGO_TARGET_DIR", None)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            (b, measure(Path(tmp), b, args.rounds, env)) for b in args.backend or ["cpu", "cuda"]
        ]
        new = time_new(Path(tmp), args.rounds, env) if args.new else []
    print("| backend | `rgpu build` no-op (median, min) | the `cargo build` it wraps (median, min) "
          "| rgpu / cargo |")  # fmt: skip
    print("|---|---|---|---|")
    for backend, r in rows:
        print(
            f"| {backend} | {r['rgpu']:.1f} ms ({r['rgpu_min']:.1f}) "
            f"| {r['cargo']:.1f} ms ({r['cargo_min']:.1f}) | **{r['rgpu'] / r['cargo']:.2f}** |"
        )
    if new:
        print(f"\n`rgpu new`: {statistics.median(new):.1f} ms median, {min(new):.1f} ms min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
