"""The SPIR-V FIXTURE: a GLSL twin of the rust-gpu kernel, compiled at test time.

rust-gpu cannot run on rgpu's machines, so the Vulkan hosts are proven with this module
instead. It is never called the kernel: everywhere it goes it is "the fixture".
glslangValidator compiles one entry point per run; spirv-link joins them into one
module, the shape cargo-gpu gives by default (all entry points in one .spv).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "spirv"
FIXTURE_GLSL = FIXTURE_DIR / "bitonic_fixture.comp"
ENTRY_POINTS = ("bitonic_tile", "bitonic_global")
FIXTURE_NAME = "bitonic.fixture.spv"
TARGET_ENV = "vulkan1.2"


def tools_missing() -> list[str]:
    return [t for t in ("glslangValidator", "spirv-link") if shutil.which(t) is None]


def compile_fixture(out_dir: Path) -> Path:
    """Compile the fixture into ``out_dir/bitonic.fixture.spv`` and return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for entry in ENTRY_POINTS:
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
                str(FIXTURE_GLSL),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        parts.append(str(part))
    out = out_dir / FIXTURE_NAME
    subprocess.run(
        ["spirv-link", "--target-env", TARGET_ENV, *parts, "-o", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


if __name__ == "__main__":
    import sys

    print(compile_fixture(Path(sys.argv[1])))
