"""`rgpu build --kernel-artifact PATH`: kernels built elsewhere (a CI job, a container),
checked like our own and recorded in the manifest with where they came from."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from rgpu import ptx
from rgpu.artifacts import Artifact
from rgpu.errors import ArtifactError, UsageError

EXTERNAL_DIR = "external"


def kind_of(path: Path) -> str:
    """The artifact kind a file name says; only PTX is accepted for now."""
    if path.suffix == ".ptx":
        return "ptx"
    raise UsageError(
        f"--kernel-artifact {path}: only .ptx files can be embedded for now",
        "pass a PTX file, e.g. --kernel-artifact build/kernel-sm_80.ptx",
    )


def import_artifacts(
    paths: Sequence[Path], out_dir: Path, env: Mapping[str, str] | None = None
) -> list[Artifact]:
    """Copy each file under out_dir/external/, check it, and describe it."""
    from rgpu.codegens.nvptx import check_and_describe

    env = os.environ if env is None else env
    ptxas = ptx.find_ptxas(env)
    imported = []
    for path in paths:
        kind_of(path)
        if not path.is_file():
            raise UsageError(f"--kernel-artifact {path}: no such file", "check the path")
        dest = out_dir / EXTERNAL_DIR / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        artifact = check_and_describe(
            dest, out_dir, ptxas, env, codegen="external", source=str(path.resolve())
        )
        missing = [e for e in ptx.REQUIRED_ENTRY_POINTS if e not in artifact.entry_points]
        if missing:
            raise ArtifactError(
                f"--kernel-artifact {path} lacks the entry points {', '.join(missing)} "
                f"(it has: {', '.join(artifact.entry_points)})",
                "build it from this workspace's kernel crate",
            )
        imported.append(artifact)
    return imported
