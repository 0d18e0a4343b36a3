"""The SPIR-V FIXTURES: GLSL twins of rust-gpu kernels, compiled at test time.

They stand in for rust-gpu's output where a test proves the Vulkan hosts and cannot wait
for rust-gpu (tests/integration/test_rust_gpu.py runs the real thing). A fixture is never
called the kernel: everywhere it goes it is "the fixture". glslangValidator compiles one
entry point per run; spirv-link joins them into one module, the shape cargo-gpu gives by
default (all entry points in one .spv).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "spirv"
FIXTURE_GLSL = FIXTURE_DIR / "bitonic_fixture.comp"
ENTRY_POINTS = ("bitonic_tile", "bitonic_global")
SAXPY_GLSL = FIXTURE_DIR / "saxpy_fixture.comp"
FIXTURE_NAME = "bitonic.fixture.spv"
TARGET_ENV = "vulkan1.2"


def tools_missing() -> list[str]:
    return [t for t in ("glslangValidator", "spirv-link") if shutil.which(t) is None]


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


def bitonic_parts(out_dir: Path) -> list[Path]:
    return [
        compile_entry(FIXTURE_GLSL, e, out_dir / f"{e}.fixture.spv", [f"ENTRY_{e}"])
        for e in ENTRY_POINTS
    ]


def compile_fixture(out_dir: Path) -> Path:
    """Compile the bitonic fixture into ``out_dir/bitonic.fixture.spv`` and return its path."""
    return link(bitonic_parts(out_dir), out_dir / FIXTURE_NAME)


def compile_bitonic_and_saxpy(out_dir: Path) -> Path:
    """The bitonic fixture's entry points plus the SAXPY fixture's `saxpy`, in one module:
    the module a bitonic workspace with the SAXPY kernel added compiles to."""
    saxpy = compile_entry(SAXPY_GLSL, "saxpy", out_dir / "saxpy.fixture.spv")
    return link([*bitonic_parts(out_dir), saxpy], out_dir / "bitonic_saxpy.fixture.spv")


if __name__ == "__main__":
    import sys

    print(compile_fixture(Path(sys.argv[1])))
