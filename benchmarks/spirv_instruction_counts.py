#!/usr/bin/env python3
"""Instruction counts of each compute entry point of SPIR-V modules, counting every function it
reaches through OpFunctionCall: what BENCHMARKS.md (issue 19) compares between rust-gpu's
module before and after spirv-opt and the GLSL twin. Needs spirv-dis (SPIRV-Tools).

    python3 benchmarks/spirv_instruction_counts.py ENTRY[,ENTRY...] A.spv B.spv ...
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter

SHOWN = (
    "total",
    "OpFunctionCall",
    "OpVariable(Function)",
    "OpLoad",
    "OpStore",
    "OpAccessChain",
    "OpInBoundsAccessChain",
    "OpPtrAccessChain",
    "OpPhi",
    "OpBranchConditional",
    "OpSwitch",
    "OpLoopMerge",
    "OpSelect",
    "OpGroupNonUniformBallot",
    "OpAtomicIAdd",
    "OpControlBarrier",
    "OpReturn",
    "OpUnreachable",
    "OpBitcast",
    "OpUConvert",
    "64-bit",
)


def functions(dis: str) -> tuple[dict[str, str], dict[str, list[str]], set[str]]:
    """Entry name -> function id, function id -> its lines, and the 64-bit integer types."""
    entries = {
        m.group(2): m.group(1) for m in re.finditer(r'OpEntryPoint GLCompute (%\w+) "(\w+)"', dis)
    }
    wide = set(re.findall(r"(%\w+) = OpTypeInt 64", dis))
    bodies: dict[str, list[str]] = {}
    current: str | None = None
    for line in dis.splitlines():
        m = re.match(r"\s*(%\w+) = OpFunction ", line)
        if m:
            current = m.group(1)
            bodies[current] = []
        elif current is not None:
            if "OpFunctionEnd" in line:
                current = None
            else:
                bodies[current].append(line)
    return entries, bodies, wide


def count(entry: str, dis: str) -> Counter[str]:
    entries, bodies, wide = functions(dis)
    seen, todo = set(), [entries[entry]]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for line in bodies.get(f, []):
            m = re.search(r"OpFunctionCall %\w+ (%\w+)", line)
            if m:
                todo.append(m.group(1))
    counts: Counter[str] = Counter()
    for f in seen:
        for line in bodies[f]:
            m = re.search(r"\b(Op\w+)", line)
            if not m or m.group(1) in ("OpLabel", "OpFunctionParameter"):
                continue
            op = m.group(1)
            counts["total"] += 1
            if op == "OpVariable":
                op = "OpVariable(Function)"
            counts[op] += 1
            typed = re.match(r"\s*%\w+ = Op\w+ (%\w+)", line)
            if typed and typed.group(1) in wide:
                counts["64-bit"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("entries", metavar="ENTRY[,ENTRY...]", help="entry points to count")
    parser.add_argument("files", nargs="+", metavar="MODULE.spv", help="SPIR-V modules")
    args = parser.parse_args(argv)
    names, files = args.entries.split(","), args.files
    dis = {
        f: subprocess.run(["spirv-dis", f], capture_output=True, text=True, check=True).stdout
        for f in files
    }
    for name in names:
        print(f"## {name}")
        print("| instruction | " + " | ".join(files) + " |")
        print("|---|" + "---|" * len(files))
        table = {f: count(name, d) for f, d in dis.items()}
        for key in SHOWN:
            print(f"| {key} | " + " | ".join(str(table[f][key]) for f in files) + " |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
