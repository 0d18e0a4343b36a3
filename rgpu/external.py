"""Kernel artifacts made outside rgpu (`rgpu build --kernel-artifact FILE`).

They stand in for a codegen's output: checked (format, entry points, spirv-val / ptxas), copied
under target/rgpu/external/ so the manifest only lists files it owns, and recorded with
codegen "external" and their source path.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from rgpu import artifacts, ptx, spirv_module
from rgpu.errors import ArtifactError, UsageError

EXTERNAL_DIR = "external"
# File suffix -> artifact kind; each kind has a checker below.
KINDS = {".spv": "spirv", ".ptx": "ptx"}
SPIRV_TARGET = "spirv-unknown-vulkan1.2"


def kind_of(path: Path) -> str:
    try:
        return KINDS[path.suffix]
    except KeyError:
        raise UsageError(
            f"--kernel-artifact {path}: unknown kind of kernel artifact",
            f"pass a file ending in {', '.join(sorted(KINDS))}",
        ) from None


def kinds(paths: Sequence[Path]) -> set[str]:
    return {kind_of(p) for p in paths}


def _spirv(path: Path, copy: Path, base: Path) -> artifacts.Artifact:
    info = spirv_module.inspect(copy)
    if not info.compute_entry_points:
        raise ArtifactError(
            f"{path} has no compute entry point", "pass the module the kernel compiles to"
        )
    validated = spirv_module.validate(copy, SPIRV_TARGET)
    return artifacts.describe(
        copy,
        base,
        kind="spirv",
        codegen="external",
        target=SPIRV_TARGET,
        entry_points=info.compute_entry_points,
        source=str(path.resolve()),
        extra={"spirv_val": validated, "spirv_version": "{}.{}".format(*info.version)},
    )


def _ptx(path: Path, copy: Path, base: Path) -> artifacts.Artifact:
    """ptxas-checked for its own `.target`; the entry points the CUDA runner launches."""
    from rgpu.codegens.nvptx import check_and_describe

    ptxas = ptx.find_ptxas(os.environ)
    artifact = check_and_describe(
        copy, base, ptxas, os.environ, codegen="external", source=str(path.resolve())
    )
    missing = [e for e in ptx.REQUIRED_ENTRY_POINTS if e not in artifact.entry_points]
    if missing:
        raise ArtifactError(
            f"--kernel-artifact {path} lacks the entry points {', '.join(missing)} "
            f"(it has: {', '.join(artifact.entry_points)})",
            "build it from this workspace's kernel crate",
        )
    return artifact


def collect(paths: Sequence[Path], out_dir: Path) -> list[artifacts.Artifact]:
    found: list[artifacts.Artifact] = []
    for path in paths:
        if not path.is_file():
            raise UsageError(f"--kernel-artifact {path}: no such file", "check the path")
        kind = kind_of(path)
        copy = out_dir / EXTERNAL_DIR / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        if kind == "spirv":
            found.append(_spirv(path, copy, out_dir))
        elif kind == "ptx":
            found.append(_ptx(path, copy, out_dir))
    return found
