"""SASS beside every PTX: the cubin ptxas writes when it checks a PTX, embedded too.

Every PTX rgpu embeds is assembled by ptxas for its own arch before it is embedded
(`ptx.check`); that run writes the machine code (SASS, in a cubin) instead of discarding it,
so the cubin costs the build nothing more. The cuda runtime loads the cubin on a GPU that can
run it (same major compute capability, minor at least the arch's; `sm_XXa`/`sm_XXf` only on
exactly XX) and JIT-compiles the PTX otherwise: a newer GPU, a driver that refuses the cubin,
or no cubin at all (no ptxas here, or one that does not know the arch: CUDA 13's has no
sm_70). The PTX stays the fallback; the manifest lists both, each with its hash, and the
cubin's entry names its PTX (`extra.ptx`, `extra.ptx_sha256`) and the ptxas that made it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from rgpu.artifacts import ptx
from rgpu.artifacts.manifest import Artifact, describe
from rgpu.util.files import write_bytes_if_changed

KIND = "cubin"
SUFFIX = ".cubin"
# What a build says when ptxas made no SASS for a PTX: the cost is paid at every start.
JIT_NOTE = "the CUDA driver JIT-compiles the PTX when a program first launches it"


class Assembled(NamedTuple):
    """A PTX checked by ptxas, and the SASS that run wrote (None: ptxas did not run)."""

    checked: ptx.Checked
    sass: bytes | None


def check(
    file: Path,
    ptxas: str | None,
    env: Mapping[str, str],
    *,
    shown_as: str,
    expect_arch: str | None = None,
    allowed_archs: tuple[str, ...] | None = None,
) -> Assembled:
    """`ptx.check`, keeping what ptxas wrote: the cubin's bytes when it accepted the PTX."""
    with tempfile.TemporaryDirectory(prefix="rgpu-sass-") as tmp:
        out = Path(tmp) / f"{file.stem}{SUFFIX}"
        checked = ptx.check(
            file,
            ptxas,
            env,
            shown_as=shown_as,
            expect_arch=expect_arch,
            allowed_archs=allowed_archs,
            output=out,
        )
        accepted = checked.ptxas == "accepted" and out.is_file()
        return Assembled(checked, out.read_bytes() if accepted else None)


def ptxas_release(ptxas: str | None, env: Mapping[str, str]) -> str:
    """The ptxas that made a cubin, for its manifest entry ("Cuda compilation tools,
    release 13.5, V13.5.37"): a driver older than its CUDA may refuse the cubin."""
    if ptxas is None:
        return ""
    from rgpu.toolchains.tools import ptxas_version

    return ptxas_version(ptxas, env) or os.path.basename(ptxas)


def embed(
    assembled: Assembled,
    ptx_artifact: Artifact,
    base: Path,
    *,
    release: str,
) -> Artifact | None:
    """Write the cubin beside its PTX (`<stem>.cubin`, only when its bytes changed) and
    describe it; None when ptxas made none."""
    if assembled.sass is None:
        return None
    file = base / Path(ptx_artifact.path).with_suffix(SUFFIX)
    write_bytes_if_changed(file, assembled.sass)
    return describe(
        file,
        base,
        kind=KIND,
        codegen=ptx_artifact.codegen,
        target=assembled.checked.arch,
        entry_points=assembled.checked.entry_points,
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
