#!/usr/bin/env python3
"""Check that a built rgpu wheel carries its data: every file of templates/, toolchains/ and
crates/ under rgpu/_data/, byte for byte, and nothing else there (no build output such as a
target/ directory). Used by .github/workflows/ci.yml and tests/integration.

Usage: python scripts/check-wheel.py dist/rgpu-*.whl
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA_DIRS = ("templates", "toolchains", "crates")
# Build output and caches that may sit in those directories and must not ship.
SKIP_PARTS = {"target", "__pycache__"}


def problems(wheel: Path) -> list[str]:
    found: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for data_dir in DATA_DIRS:
            files = [p for p in sorted((REPO / data_dir).rglob("*")) if p.is_file()]
            if not any(n.startswith(f"rgpu/_data/{data_dir}/") for n in names):
                found.append(f"rgpu/_data/{data_dir}/ is missing")
            expected = set()
            for path in files:
                rel = path.relative_to(REPO)
                if SKIP_PARTS & set(rel.parts):
                    continue
                inside = f"rgpu/_data/{rel.as_posix()}"
                expected.add(inside)
                if inside not in names:
                    found.append(f"{inside} is missing")
                elif archive.read(inside) != path.read_bytes():
                    found.append(f"{inside} differs from {rel}")
            extra = sorted(
                n for n in names if n.startswith(f"rgpu/_data/{data_dir}/") and n not in expected
            )
            found += [f"{n} is not in {data_dir}/ (build output?)" for n in extra]
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
        print(f"{wheel.name}: {', '.join(d + '/' for d in DATA_DIRS)} are all in rgpu/_data/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
