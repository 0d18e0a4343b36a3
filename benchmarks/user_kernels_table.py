#!/usr/bin/env python3
"""The table of the user-style kernels' run: for each kernel, size and backend, the device
time per run (median), the wall time per run, the CUDA C++ twin's device time and the ratio
(backend / twin), and the check against the reference.

    python3 benchmarks/user_kernels_table.py kernels.jsonl twins.jsonl

(benchmarks/user_kernels.sh writes both files and calls this.)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def rows(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.startswith("{")]


def median(row: dict[str, Any], key: str) -> float | None:
    value = row.get(key)
    return float(value["median"]) if isinstance(value, dict) else None


def cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(kernels: list[dict[str, Any]], twins: list[dict[str, Any]]) -> str:
    twin = {(r["kernel"], r["size"]): r for r in twins if "kernel" in r}
    head = ("kernel", "size", "backend", "device ms", "wall ms", "twin ms", "ratio", "GB/s",
            "check")  # fmt: skip
    lines = [head]
    for r in kernels:
        if r.get("backend") == "reference":
            continue
        if "kernel" not in r:
            lines.append(("-", "-", r.get("backend", "?"), "-", "-", "-", "-", "-",
                          f"error: {r.get('error')}"))  # fmt: skip
            continue
        t = twin.get((r["kernel"], r["size"]))
        device, twin_ms = median(r, "device_ms"), median(t, "device_ms") if t else None
        ratio = device / twin_ms if device is not None and twin_ms else None
        check = r.get("check") or f"error: {r.get('error')}"
        if t is not None and t.get("check") != "equal":
            check += f"; twin {t.get('check')}"
        wall = cell(median(r, "wall_ms"))
        lines.append((r["kernel"], r["size"], r["backend"], cell(device), wall, cell(twin_ms),
                      cell(ratio, 2), str(r.get("gbps", "-")), check))  # fmt: skip
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(str(v).ljust(w) for v, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rgpu", help="the rgpu program's JSON lines (user_kernels.jsonl)")
    parser.add_argument("twins", help="the twins' JSON lines (user_kernels_twins.jsonl)")
    args = parser.parse_args()
    print(table(rows(args.rgpu), rows(args.twins)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
