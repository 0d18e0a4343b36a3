#!/usr/bin/env python3
"""Check that a built rgpu wheel carries its data: every file of templates/, toolchains/ and
crates/ (rgpu's Rust crates, which `rgpu new` vendors) that git tracks, under rgpu/_data/, byte
for byte, and nothing else there (no build output such as crates' target/). Used by
.github/workflows/ci.yml and tests/integration.

Usage: python scripts/check-wheel.py dist/rgpu-*.whl
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA_DIRS = ("templates", "toolchains", "crates")


def tracked(data_dir: str) -> list[Path]:
    """The files git tracks under data_dir (all files, less caches and target/, without git)."""
    proc = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--", data_dir],
        capture_output=True,
        check=False,
    )
    if proc.returncode == 0 and proc.stdout:
        return [REPO / name for name in proc.stdout.decode().split("\0") if name]
    return [
        p
        for p in sorted((REPO / data_dir).rglob("*"))
        if p.is_file() and not {"__pycache__", "target"} & set(p.parts)
    ]


def problems(wheel: Path) -> list[str]:
    found: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for data_dir in DATA_DIRS:
            if not any(n.startswith(f"rgpu/_data/{data_dir}/") for n in names):
                found.append(f"rgpu/_data/{data_dir}/ is missing")
            expected = set()
            for path in tracked(data_dir):
                inside = f"rgpu/_data/{path.relative_to(REPO).as_posix()}"
                expected.add(inside)
                if inside not in names:
                    found.append(f"{inside} is missing")
                elif archive.read(inside) != path.read_bytes():
                    found.append(f"{inside} differs from {path.relative_to(REPO)}")
            extra = sorted(
                n for n in names if n.startswith(f"rgpu/_data/{data_dir}/") and n not in expected
            )
            found += [f"{n} is not a tracked file of {data_dir}/ (build output?)" for n in extra]
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(argv[0])
    found = problems(wheel)
    for problem in found:
        print(f"error: {wheel.name}: {problem}", file=sys.stderr)
    if not found:
        print(f"{wheel.name}: templates/, toolchains/ and crates/ are all in rgpu/_data/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
