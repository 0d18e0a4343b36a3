"""The SPIR-V FIXTURES: GLSL twins of the template's rust-gpu kernels, compiled at test time.

rust-gpu cannot run on rgpu's machines, so the Vulkan hosts are proven with these modules
instead. They are never called the kernels: everywhere they go they are "the fixture".
glslangValidator compiles one entry point per run; spirv-link joins them into one
module, the shape cargo-gpu gives by default (all entry points in one .spv). The template's
kernel crate has the kernels of both fixtures, and a `--kernel-artifact` module must hold
every kernel of the crate, so `compile_fixture` links them all by default.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "spirv"
# Each GLSL fixture and the entry points it has (one `-DENTRY_<name>` each).
FIXTURES: dict[str, tuple[str, ...]] = {
    "bitonic": ("bitonic_tile", "bitonic_global"),
    "radix": ("radix_upsweep", "radix_scan", "radix_downsweep"),
}
# The bitonic fixture alone (older callers).
FIXTURE_GLSL = FIXTURE_DIR / "bitonic_fixture.comp"
ENTRY_POINTS = FIXTURES["bitonic"]
# Every entry point of the template's kernel crate, in one module.
ALL_ENTRY_POINTS = tuple(e for entries in FIXTURES.values() for e in entries)
FIXTURE_NAME = "all.fixture.spv"
TARGET_ENV = "vulkan1.2"


def tools_missing() -> list[str]:
    return [t for t in ("glslangValidator", "spirv-link") if shutil.which(t) is None]


def glsl_path(fixture: str) -> Path:
    return FIXTURE_DIR / f"{fixture}_fixture.comp"


def compile_fixture(
    out_dir: Path, fixtures: tuple[str, ...] = tuple(FIXTURES), name: str | None = None
) -> Path:
    """Compile every entry point of ``fixtures`` (default: all) and link them into
    ``out_dir/<name>`` (default ``all.fixture.spv``, or ``<fixture>.fixture.spv`` for one);
    return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for fixture in fixtures:
        for entry in FIXTURES[fixture]:
            part = out_dir / f"{entry}.fixture.spv"
            subprocess.run(
                [
                    "glslangValidator",
                    "-V",
                    "--target-env",
                    TARGET_ENV,
                    f"-DENTRY_{entry}",
                    "--source-entrypoint",
                    "main",
                    "-e",
                    entry,
                    "-o",
                    str(part),
                    str(glsl_path(fixture)),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            parts.append(str(part))
    if name is None:
        name = FIXTURE_NAME if len(fixtures) > 1 else f"{fixtures[0]}.fixture.spv"
    out = out_dir / name
    subprocess.run(
        ["spirv-link", "--target-env", TARGET_ENV, *parts, "-o", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


if __name__ == "__main__":
    import sys

    # python3 tests/spirv_fixture.py OUT_DIR [FIXTURE...]: all fixtures by default.
    chosen = tuple(sys.argv[2:]) or tuple(FIXTURES)
    print(compile_fixture(Path(sys.argv[1]), chosen))
