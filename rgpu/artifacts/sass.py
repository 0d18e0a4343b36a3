"""SASS beside every PTX: the cubin ptxas writes when it checks a PTX, embedded too.

Every PTX rgpu embeds is assembled by ptxas for its own arch before it is embedded
(`ptx.check`); with `keep_sass` that run writes the machine code (SASS, in a cubin) instead
of discarding it, so the cubin costs the build nothing more. The cuda runtime loads the
cubin on a GPU that can run it (same major compute capability, minor at least the arch's;
`sm_XXa`/`sm_XXf` only on exactly XX) and JIT-compiles the PTX otherwise: a newer GPU, a
driver that refuses the cubin, or no cubin at all (no ptxas here, or one that does not know
the arch: CUDA 13's has no sm_70). The PTX stays the fallback; the manifest lists both,
each with its hash, and the cubin's entry names its PTX (`extra.ptx`, `extra.ptx_sha256`)
and the ptxas that made it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from rgpu.artifacts import ptx
from rgpu.artifacts.manifest import Artifact, describe
from rgpu.util.files import write_bytes_if_changed

KIND = "cubin"
SUFFIX = ".cubin"
# What a build says when ptxas made no SASS for a PTX: the cost is paid at every start.
JIT_NOTE = "the CUDA driver JIT-compiles the PTX when a program first launches it"


def ptxas_release(ptxas: str | None, env: Mapping[str, str]) -> str:
    """The ptxas that made a cubin, for its manifest entry ("Cuda compilation tools,
    release 13.5, V13.5.37"): a driver older than its CUDA may refuse the cubin."""
    if ptxas is None:
        return ""
    return ptx.ptxas_version(ptxas, env) or os.path.basename(ptxas)


def embed(
    checked: ptx.Checked, ptx_artifact: Artifact, base: Path, *, release: str
) -> Artifact | None:
    """Write the cubin of a PTX checked with `keep_sass` beside it (`<stem>.cubin`, only
    when its bytes changed) and describe it; None when ptxas made none."""
    if checked.sass is None:
        return None
    file = base / Path(ptx_artifact.path).with_suffix(SUFFIX)
    write_bytes_if_changed(file, checked.sass)
    return describe(
        file,
        base,
        kind=KIND,
        codegen=ptx_artifact.codegen,
        target=checked.arch,
        entry_points=checked.entry_points,
        source=ptx_artifact.source,
        extra={
            "ptx": ptx_artifact.path,
            "ptx_sha256": ptx_artifact.sha256,
            "ptxas": release,
        },
    )


def without_sass(checked: ptx.Checked) -> str:
    """Why a PTX has no cubin, for the build's warning."""
    return f"ptxas check {checked.ptxas}; no SASS for {checked.arch}: {JIT_NOTE}"
