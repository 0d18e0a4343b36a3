"""`rgpu ci check-ptx`: every PTX in the manifest verified and assembled by ptxas.

CI has no GPU, so ptxas is the strongest check a CUDA job can make: it rejects PTX that a
driver's JIT would reject (bad ISA version, unknown target, malformed code). ptxas comes
from NVIDIA's ``nvidia-cuda-nvcc`` wheel on PyPI, no CUDA install needed.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rgpu import artifacts
from rgpu.errors import ArtifactError, ToolMissingError
from rgpu.project import Project
from rgpu.util import cmd

PTXAS_HINT = (
    "install ptxas from PyPI: `python -m pip install nvidia-cuda-nvcc` (rgpu finds it in "
    "that wheel, on PATH, or under CUDA_PATH)"
)


@dataclass(frozen=True)
class PtxCheck:
    path: Path
    arch: str
    ok: bool
    detail: str


def sm_arch(target: str) -> str:
    """ptxas wants sm_XX; nvvm artifacts record compute_XX, nvptx ones sm_XX."""
    return "sm_" + target.removeprefix("compute_") if target.startswith("compute_") else target


def ptx_artifacts(project: Project) -> list[artifacts.Artifact]:
    found = [a for a in artifacts.read_manifest(project.rgpu_dir) if a.kind == "ptx"]
    if not found:
        raise ArtifactError(
            f"no PTX listed in {project.rgpu_dir / artifacts.MANIFEST_NAME}",
            "build the CUDA kernels first: `rgpu build --backend cuda`",
        )
    return found


def check_ptx(project: Project) -> list[PtxCheck]:
    from rgpu.ptx import find_ptxas

    ptxas = find_ptxas(os.environ)
    if ptxas is None:
        raise ToolMissingError("`ptxas` was not found", PTXAS_HINT)
    checks = []
    with tempfile.TemporaryDirectory(prefix="rgpu-ptxas-") as tmp:
        for artifact in ptx_artifacts(project):
            artifacts.verify(project.rgpu_dir, artifact)
            path = project.rgpu_dir / artifact.path
            arch = sm_arch(artifact.target)
            out = Path(tmp) / f"{path.stem}.{arch}.cubin"
            argv = [ptxas, f"-arch={arch}", str(path), "-o", str(out)]
            result = cmd.run(argv, capture=True, check=False)
            detail = (result.stderr or result.stdout).strip()
            checks.append(PtxCheck(path, arch, result.returncode == 0, detail))
    return checks
