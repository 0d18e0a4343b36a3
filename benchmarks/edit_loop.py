#!/usr/bin/env python3
"""The edit loop: one changed line in a kernel, rebuilt for cuda, wgpu and ash.

In WORK/x (a `rgpu new x --template minimal` workspace, built once for the backends first
when it is missing), each round changes one line of `kernel/src/lib.rs` (SAXPY's body,
alternating between `*y += a * *x;` and `*y += a * *x * 2.0;`, so every codegen makes
different code), times `rgpu build` (wall and the CPU time of rgpu and everything it ran),
reads each step's time from the build's step summary (what rgpu writes for GitHub Actions
when GITHUB_STEP_SUMMARY is set), then times a second `rgpu build`, which must compile
nothing (no cargo `Compiling` line; the host build not started; cargo-gpu always runs and
decides itself). Prints one line per round and the medians, plus the load average: on a
shared machine wall time stretches with the other work, CPU time does not.

    .venv/bin/python benchmarks/edit_loop.py WORK [--rounds 5] [--backends cuda,wgpu,ash]
        [--rgpu-source DIR] [--check-full]

--rgpu-source DIR runs the rgpu of another checkout (PYTHONPATH=DIR; e.g. `git archive` of
the commit before a change) with this interpreter; default: this checkout's.
--check-full then builds a fresh copy of the edited workspace from nothing (WORK/x-full)
and compares every kernel artifact's sha256 with the edited one's: the edit loop must
leave exactly what a full build makes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
LINES = ("*y += a * *x;", "*y += a * *x * 2.0;")


class Build(NamedTuple):
    wall: float
    cpu: float
    steps: dict[str, float]
    output: str


def rgpu(args: list[str], cwd: Path, source: Path, summary: Path | None = None) -> Build:
    env = {**os.environ, "PYTHONPATH": str(source), "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    if summary is not None:
        summary.write_text("")
        env["GITHUB_STEP_SUMMARY"] = str(summary)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rgpu", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"rgpu {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steps = {}
    if summary is not None:
        rows = re.findall(r"^\| (.+?) \| ([\d.]+) s \| ok \|$", summary.read_text(), re.M)
        steps = {title: float(seconds) for title, seconds in rows}
    return Build(wall, cpu, steps, proc.stderr)


def phase(title: str) -> str:
    """A step's short name: `sm_75`, `spirv`, `host`, ..."""
    if title.startswith("at the same time:") and "PTX" in title:
        return "ptx"  # every arch's at once (Step.together)
    if match := re.search(r"PTX for (sm_\w+)", title):
        return match.group(1)
    if "SPIR-V" in title:
        return "spirv"
    if title.startswith("host build"):
        return "host"
    return title.split()[0]


def edit(ws: Path) -> None:
    """One line of the kernel changes: SAXPY's body, to the other of LINES."""
    lib = ws / "kernel" / "src" / "lib.rs"
    text = lib.read_text()
    old, new = LINES if LINES[0] in text else LINES[::-1]
    if old not in text:
        sys.exit(f"{lib} has neither {LINES[0]!r} nor {LINES[1]!r}: not the minimal template")
    lib.write_text(text.replace(old, new, 1))


def kernels(ws: Path) -> dict[str, str]:
    data = json.loads((ws / "target" / "rgpu" / "kernels" / "manifest.json").read_text())
    return {a["path"]: a["sha256"] for a in data["artifacts"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backends", default="cuda,wgpu,ash")
    parser.add_argument("--rgpu-source", type=Path, default=REPO)
    parser.add_argument("--check-full", action="store_true")
    args = parser.parse_args()
    source = args.rgpu_source.resolve()
    work = args.work.resolve()
    ws = work / "x"
    build_args = ["build", *(f"--backend={b}" for b in args.backends.split(","))]
    if not ws.is_dir():
        work.mkdir(parents=True, exist_ok=True)
        rgpu(["new", "x", "--template", "minimal", "--dir", str(work)], work, source)
        first = rgpu(build_args, ws, source)
        print(f"first build: {first.wall:.1f} s wall, {first.cpu:.1f} s CPU")
    rgpu(build_args, ws, source)  # settle: whatever an earlier rgpu left to do
    print(f"rgpu from {source}; backends {args.backends}; {os.cpu_count()} CPUs")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.md"
        for n in range(args.rounds):
            load = os.getloadavg()[0]
            edit(ws)
            built = rgpu(build_args, ws, source, summary)
            again = rgpu(build_args, ws, source)
            if re.search(r"^\s+Compiling \S+ v\d", again.output, re.M) or (
                "cargo not started" not in again.output
            ):
                sys.exit(f"the build after the edit's was not a no-op:\n{again.output}")
            phases = {phase(t): s for t, s in built.steps.items()}
            rows.append((built.wall, built.cpu, again.wall, phases))
            shown = " ".join(f"{k} {v:.1f}" for k, v in phases.items())
            print(
                f"round {n + 1}: {built.wall:5.2f} s wall, {built.cpu:5.2f} s CPU; "
                f"no-op {again.wall:.2f} s; load {load:.1f}; steps (wall s): {shown}"
            )
    wall = statistics.median(r[0] for r in rows)
    cpu = statistics.median(r[1] for r in rows)
    noop = statistics.median(r[2] for r in rows)
    names = dict.fromkeys(k for r in rows for k in r[3])
    medians = {k: statistics.median(r[3].get(k, 0.0) for r in rows) for k in names}
    shown = " ".join(f"{k} {v:.1f}" for k, v in medians.items())
    print(
        f"median of {len(rows)}: {wall:.2f} s wall, {cpu:.2f} s CPU, no-op {noop:.2f} s; "
        f"steps (wall s): {shown}"
    )
    if args.check_full:
        full = work / "x-full"
        shutil.rmtree(full, ignore_errors=True)
        shutil.copytree(ws, full, ignore=shutil.ignore_patterns("target"))
        rgpu(build_args, full, source)
        edited, fresh = kernels(ws), kernels(full)
        differ = sorted(p for p in edited.keys() | fresh.keys() if edited.get(p) != fresh.get(p))
        print("full build: " + ("identical kernels" if not differ else f"DIFFERENT {differ}"))
        if differ:
            sys.exit(1)


if __name__ == "__main__":
    main()
