#!/usr/bin/env python3
"""Check that a built rgpu wheel carries its data: every file of templates/ and toolchains/
under rgpu/_data/, byte for byte. Used by .github/workflows/ci.yml and tests/integration.

Usage: python scripts/check-wheel.py dist/rgpu-*.whl
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA_DIRS = ("templates", "toolchains")


def problems(wheel: Path) -> list[str]:
    found: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for data_dir in DATA_DIRS:
            files = [p for p in sorted((REPO / data_dir).rglob("*")) if p.is_file()]
            if not any(n.startswith(f"rgpu/_data/{data_dir}/") for n in names):
                found.append(f"rgpu/_data/{data_dir}/ is missing")
            for path in files:
                if "__pycache__" in path.parts:
                    continue
                inside = f"rgpu/_data/{path.relative_to(REPO).as_posix()}"
                if inside not in names:
                    found.append(f"{inside} is missing")
                elif archive.read(inside) != path.read_bytes():
                    found.append(f"{inside} differs from {path.relative_to(REPO)}")
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
        print(f"{wheel.name}: templates/ and toolchains/ are all in rgpu/_data/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
