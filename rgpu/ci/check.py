"""`rgpu ci check-ptx`: every PTX in the manifest verified and assembled by ptxas.

CI has no GPU, so ptxas is the strongest check a CUDA job can make: it rejects PTX that a
driver's JIT would reject (bad ISA version, unknown target, malformed code). ptxas comes
from NVIDIA's ``nvidia-cuda-nvcc`` wheel on PyPI, no CUDA install needed; rgpu finds it the
way builds do (toolchains.tools.find_ptxas).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rgpu.artifacts import manifest
from rgpu.errors import ArtifactError, ToolMissingError
from rgpu.toolchains.tools import PTXAS_HINT, find_ptxas
from rgpu.util import cmd
from rgpu.workspace import Workspace


@dataclass(frozen=True)
class PtxCheck:
    path: Path
    arch: str
    ok: bool
    detail: str


def sm_arch(target: str) -> str:
    """ptxas wants sm_XX; an artifact may record compute_XX."""
    return "sm_" + target.removeprefix("compute_") if target.startswith("compute_") else target


def ptx_artifacts(ws: Workspace) -> list[manifest.Artifact]:
    found = [a for a in manifest.read_manifest(ws.kernels_dir) if a.kind == "ptx"]
    if not found:
        raise ArtifactError(
            f"no PTX listed in {ws.kernels_dir / manifest.MANIFEST_NAME}",
            "build the CUDA kernels first: `rgpu build --backend cuda`",
        )
    return found


def check_ptx(ws: Workspace) -> list[PtxCheck]:
    ptxas = find_ptxas(os.environ)
    if ptxas is None:
        raise ToolMissingError("`ptxas` was not found", PTXAS_HINT)
    checks = []
    with tempfile.TemporaryDirectory(prefix="rgpu-ptxas-") as tmp:
        for artifact in ptx_artifacts(ws):
            manifest.verify(ws.kernels_dir, artifact)
            path = ws.kernels_dir / artifact.path
            arch = sm_arch(artifact.target)
            out = Path(tmp) / f"{path.stem}.{arch}.cubin"
            result = cmd.run([ptxas, f"-arch={arch}", str(path), "-o", str(out)],
                             capture=True, check=False)  # fmt: skip
            detail = (result.stderr or result.stdout).strip()
            checks.append(PtxCheck(path, arch, result.returncode == 0, detail))
    return checks
