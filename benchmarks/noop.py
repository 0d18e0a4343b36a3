#!/usr/bin/env python3
"""Issue 11 benchmark: `rgpu build` with nothing to do, the way users meet it.

For each backend (cpu, cuda) in a fresh `rgpu new` workspace: build once, then time in
turn `rgpu build --backend B` and the exact `cargo build` that rgpu's plan wraps
(`rgpu build --backend B --dry-run --json`, last step), ROUNDS times each, interleaved, so
that cargo's own rewrites of its dep-info files between rgpu runs are part of what rgpu
sees (as when a user or rust-analyzer runs cargo in between). Prints a Markdown table of
medians and the ratio rgpu / cargo.

Needs rgpu on PATH (installed as users install it: `pip install .`), cargo, and for cuda
the nvptx toolchain and ptxas (`scripts/setup-test-env.sh`).

    python3 benchmarks/noop.py [--rounds 30] [--backend cpu --backend cuda]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--backend", action="append", choices=("cpu", "cuda"))
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure rgpu as installed: bytecode cached
    env.pop("CARGO_TARGET_DIR", None)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            (b, measure(Path(tmp), b, args.rounds, env)) for b in args.backend or ["cpu", "cuda"]
        ]
    print("| backend | `rgpu build` no-op (median, min) | the `cargo build` it wraps (median, min) "
          "| rgpu / cargo |")  # fmt: skip
    print("|---|---|---|---|")
    for backend, r in rows:
        print(
            f"| {backend} | {r['rgpu']:.1f} ms ({r['rgpu_min']:.1f}) "
            f"| {r['cargo']:.1f} ms ({r['cargo_min']:.1f}) | **{r['rgpu'] / r['cargo']:.2f}** |"
        )


if __name__ == "__main__":
    main()
