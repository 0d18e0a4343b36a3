"""`rgpu ci check-ptx`: every PTX in the manifest verified and assembled by ptxas, and every
cubin beside a PTX (its SASS) intact and made from that PTX.

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

from rgpu.artifacts import manifest, sass
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
    kind: str = "ptx"  # or "cubin": its SASS, checked against the PTX


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


def sass_checks(ws: Workspace, listed: list[manifest.Artifact]) -> list[PtxCheck]:
    """Each cubin (a PTX's SASS, artifacts/sass.py) is intact and was made from the PTX the
    manifest lists beside it: a runtime loads one or the other, and they must agree."""
    ptx_hashes = {a.path: a.sha256 for a in listed if a.kind == "ptx"}
    checks = []
    for artifact in (a for a in listed if a.kind == sass.KIND):
        manifest.verify(ws.kernels_dir, artifact)
        source = str(artifact.extra.get("ptx", ""))
        ok = ptx_hashes.get(source) == artifact.extra.get("ptx_sha256")
        detail = "" if ok else f"{artifact.path} was not made from the listed {source or 'PTX'}"
        path = ws.kernels_dir / artifact.path
        checks.append(PtxCheck(path, f"{artifact.target} SASS", ok, detail, sass.KIND))
    return checks


def check_ptx(ws: Workspace) -> list[PtxCheck]:
    ptxas = find_ptxas(os.environ)
    if ptxas is None:
        raise ToolMissingError("`ptxas` was not found", PTXAS_HINT)
    checks = sass_checks(ws, manifest.read_manifest(ws.kernels_dir))
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
