"""The SPIR-V FIXTURES: GLSL twins of rust-gpu kernels, compiled at test time.

They stand in for rust-gpu's output where a test proves the Vulkan hosts and cannot wait
for rust-gpu (tests/integration/test_rust_gpu.py runs the real thing). A fixture is never
called the kernel: everywhere it goes it is "the fixture". glslangValidator compiles one
entry point per run; spirv-link joins them into one module, the shape cargo-gpu gives by
default (all entry points in one .spv). The template's kernel crate has the kernels of both
sort fixtures, and a `--kernel-artifact` module must hold every kernel of the crate, so
`compile_fixture` links them all by default.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "spirv"
# Each GLSL fixture and the entry points it has (one `-DENTRY_<name>` each).
FIXTURES: dict[str, tuple[str, ...]] = {
    "bitonic": ("bitonic_tile", "bitonic_global"),
    # The radix sort's kernels are rgpu-primitives' (the demo's kernel crate depends on it).
    "radix": ("prim_radix_upsweep", "prim_radix_scan", "prim_radix_downsweep"),
}
# The bitonic fixture alone (older callers).
FIXTURE_GLSL = FIXTURE_DIR / "bitonic_fixture.comp"
ENTRY_POINTS = FIXTURES["bitonic"]
# Every entry point of the template's kernel crate, in one module.
ALL_ENTRY_POINTS = tuple(e for entries in FIXTURES.values() for e in entries)
FIXTURE_NAME = "all.fixture.spv"
SAXPY_GLSL = FIXTURE_DIR / "saxpy_fixture.comp"
TARGET_ENV = "vulkan1.2"


def tools_missing() -> list[str]:
    return [t for t in ("glslangValidator", "spirv-link") if shutil.which(t) is None]


def glsl_path(fixture: str) -> Path:
    return FIXTURE_DIR / f"{fixture}_fixture.comp"


def compile_entry(glsl: Path, entry: str, out: Path, defines: Sequence[str] = ()) -> Path:
    """One GLSL compute shader's `main` as entry point ``entry``, into ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "glslangValidator",
            "-V",
            "--target-env",
            TARGET_ENV,
            *(f"-D{d}" for d in defines),
            "--source-entrypoint",
            "main",
            "-e",
            entry,
            "-o",
            str(out),
            str(glsl),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def link(parts: Sequence[Path], out: Path) -> Path:
    """One module with every part's entry points (spirv-link)."""
    subprocess.run(
        ["spirv-link", "--target-env", TARGET_ENV, *map(str, parts), "-o", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def fixture_parts(out_dir: Path, fixtures: Sequence[str] = tuple(FIXTURES)) -> list[Path]:
    """Every entry point of ``fixtures``, one module each."""
    return [
        compile_entry(glsl_path(f), e, out_dir / f"{e}.fixture.spv", [f"ENTRY_{e}"])
        for f in fixtures
        for e in FIXTURES[f]
    ]


def compile_fixture(
    out_dir: Path, fixtures: tuple[str, ...] = tuple(FIXTURES), name: str | None = None
) -> Path:
    """Compile every entry point of ``fixtures`` (default: all) and link them into
    ``out_dir/<name>`` (default ``all.fixture.spv``, or ``<fixture>.fixture.spv`` for one);
    return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if name is None:
        name = FIXTURE_NAME if len(fixtures) > 1 else f"{fixtures[0]}.fixture.spv"
    return link(fixture_parts(out_dir, fixtures), out_dir / name)


def compile_bitonic_and_saxpy(out_dir: Path) -> Path:
    """The template's fixture entry points plus the SAXPY fixture's `saxpy`, in one module:
    the module the demo workspace with the SAXPY kernel added compiles to."""
    saxpy = compile_entry(SAXPY_GLSL, "saxpy", out_dir / "saxpy.fixture.spv")
    return link([*fixture_parts(out_dir), saxpy], out_dir / "template_saxpy.fixture.spv")


def interface(spv: Path, entry: str) -> dict[str, object]:
    """What a host binds to entry point ``entry`` of a module, from its disassembly and
    independent of how the module names things: the workgroup size, the push constant block
    flattened to (offset, type) pairs (nested structs inlined), the storage buffers by
    (set, binding) with element type and whether they are read only, and the workgroup
    arrays. Equal interfaces mean a host launches either module the same way."""
    dis = subprocess.run(
        ["spirv-dis", "--raw-id", str(spv)], capture_output=True, text=True, check=True
    ).stdout
    defs: dict[str, list[str]] = {}
    decorations: dict[str, list[list[str]]] = {}
    members: dict[tuple[str, int], list[list[str]]] = {}
    entry_vars: list[str] = []
    entry_id = ""
    local_size: tuple[int, ...] = ()
    lines = [ln.split() for ln in dis.splitlines() if ln.strip() and not ln.startswith(";")]
    for words in lines:
        if len(words) > 2 and words[1] == "=":
            defs[words[0]] = words[2:]
        elif words[0] == "OpEntryPoint" and words[3] == f'"{entry}"':
            entry_id, entry_vars = words[2], words[4:]
        elif words[0] == "OpDecorate":
            decorations.setdefault(words[1], []).append(words[2:])
        elif words[0] == "OpMemberDecorate":
            members.setdefault((words[1], int(words[2])), []).append(words[3:])
    for words in lines:
        if words[:3] == ["OpExecutionMode", entry_id, "LocalSize"]:
            local_size = tuple(int(w) for w in words[3:6])
    assert entry_id, f"{spv} has no entry point {entry}"

    def constant(ident: str) -> int:
        op = defs[ident]
        assert op[0] == "OpConstant", op
        return int(op[2])

    def scalar(ident: str) -> str:
        op = defs[ident]
        if op[0] == "OpTypeInt":
            return ("i" if op[2] == "1" else "u") + op[1]
        if op[0] == "OpTypeFloat":
            return "f" + op[1]
        raise AssertionError(f"not a scalar: {op}")

    def flatten(ident: str, base: int) -> list[tuple[int, str]]:
        op = defs[ident]
        if op[0] != "OpTypeStruct":
            return [(base, scalar(ident))]
        out = []
        for i, member in enumerate(op[1:]):
            (offset,) = [int(d[1]) for d in members.get((ident, i), []) if d[0] == "Offset"]
            out += flatten(member, base + offset)
        return out

    push: list[tuple[int, str]] = []
    buffers: dict[tuple[int, int], tuple[str, bool]] = {}
    workgroup: list[tuple[str, int]] = []
    for var in entry_vars:
        op = defs[var]
        assert op[0] == "OpVariable", op
        pointer = defs[op[1]]
        storage, pointee = pointer[1], pointer[2]
        if storage == "PushConstant":
            push = flatten(pointee, 0)
        elif storage == "StorageBuffer":
            decos = {d[0]: d[1:] for d in decorations.get(var, [])}
            block = defs[pointee]  # a Block struct around the runtime array
            member_decos = [d[0] for d in members.get((pointee, 0), [])]
            array = defs[block[1]]
            assert array[0] == "OpTypeRuntimeArray", array
            readonly = "NonWritable" in decos or "NonWritable" in member_decos
            key = (int(decos["DescriptorSet"][0]), int(decos["Binding"][0]))
            buffers[key] = (scalar(array[1]), readonly)
        elif storage == "Workgroup":
            array = defs[pointee]
            assert array[0] == "OpTypeArray", array
            workgroup.append((scalar(array[1]), constant(array[2])))
    return {
        "local_size": local_size,
        "push_constant": push,
        "buffers": dict(sorted(buffers.items())),
        "workgroup": sorted(workgroup),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """`python3 tests/spirv_fixture.py OUT_DIR [FIXTURE...]`: compile the fixtures (all by
    default) into one module in OUT_DIR and print its path."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="tests/spirv_fixture.py",
        description="Compile the SPIR-V FIXTURES (GLSL twins of the template's kernels) into "
        "one module, with glslangValidator and spirv-link.",
    )
    parser.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="where the .spv goes")
    parser.add_argument(
        "fixtures", nargs="*", metavar="FIXTURE",
        help=f"which fixtures ({', '.join(FIXTURES)}; default: all)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    unknown = [f for f in args.fixtures if f not in FIXTURES]
    if unknown:
        parser.error(f"unknown fixture {unknown[0]} (choose from {', '.join(FIXTURES)})")
    print(compile_fixture(args.out_dir, tuple(args.fixtures) or tuple(FIXTURES)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
