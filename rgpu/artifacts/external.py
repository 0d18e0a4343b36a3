"""Kernel artifacts made outside rgpu (`rgpu build --kernel-artifact FILE`).

They stand in for a codegen's output. Each is checked where the user keeps it (its kind
fits a backend being built, it is PTX/SPIR-V, its target, its entry points: the workspace's
own kernels, ptxas / spirv-val), every message names the user's file, and only a file that
passed is copied into the kernels directory (under `external/`) and recorded with codegen
"external" and its source path, so later builds and runs reuse it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from rgpu.artifacts import manifest, ptx, sass
from rgpu.backends import of_artifact
from rgpu.cuda_archs import Arch
from rgpu.errors import ArtifactError, UsageError
from rgpu.util.files import write_bytes_if_changed

EXTERNAL_DIR = "external"
# File suffix -> artifact kind.
KINDS = {".spv": "spirv", ".ptx": "ptx", ".wgsl": "wgsl"}
KIND_NAMES = {"spirv": "SPIR-V (.spv)", "ptx": "PTX (.ptx)", "wgsl": "WGSL (.wgsl)"}
WGSL_TARGET = "webgpu"
SPIRV_TARGET = "spirv-unknown-vulkan1.2"


def kind_of(path: Path) -> str:
    try:
        return KINDS[path.suffix]
    except KeyError:
        raise UsageError(
            f"--kernel-artifact {path}: unknown kind of kernel artifact",
            f"pass a file ending in {', '.join(sorted(KINDS))}",
        ) from None


def check_kinds(paths: Sequence[Path], needed: dict[str, tuple[str, ...]]) -> None:
    """Every file must be of a kind a backend being built uses (`needed`: kind ->
    backends)."""
    for path in paths:
        kind = kind_of(path)
        if kind not in needed:
            wanted = ", ".join(f"{KIND_NAMES[k]} for {'/'.join(b)}" for k, b in needed.items())
            backends = " or ".join(of_artifact(kind))
            raise UsageError(
                f"--kernel-artifact {path} is {KIND_NAMES[kind]}, which the {backends} "
                f"backend runs, but this build is for "
                + (wanted or "the cpu backend, which embeds no kernels"),
                f"add `--backend {backends.split()[0]}`, or pass "
                + (wanted or "no --kernel-artifact"),
            )


def _missing_entries(path: Path, have: Iterable[str], required: Sequence[str]) -> None:
    present = set(have)
    missing = [e for e in required if e not in present]
    if missing:
        raise ArtifactError(
            f"--kernel-artifact {path} lacks the workspace's kernels {', '.join(missing)} "
            f"(it has: {', '.join(sorted(present)) or 'none'})",
            "build it from this workspace's kernel crate (its #[rgpu::kernel] functions)",
        )


def _check_spirv(path: Path, required: Sequence[str]) -> tuple[tuple[str, ...], dict[str, str]]:
    # start-up: ~2 ms to import spirv.module; only this path pays it
    from rgpu.spirv import module as spirv_module

    info = spirv_module.inspect(path)
    if not info.compute_entry_points:
        raise ArtifactError(
            f"--kernel-artifact {path} has no compute entry point",
            "pass the module the kernel crate compiles to",
        )
    _missing_entries(path, info.compute_entry_points, required)
    validated = spirv_module.validate(path, SPIRV_TARGET)
    extra = {
        "spirv_val": "accepted" if validated else "not run: no spirv-val",
        "spirv_version": "{}.{}".format(*info.version),
    }
    return info.compute_entry_points, extra


def _check_wgsl(path: Path) -> tuple[str, ...]:
    """The compute entry points of a WGSL file (one file per kernel: rgpu checks the
    workspace's kernels against all the WGSL files together)."""
    import re

    text = path.read_text(errors="replace")
    entries = tuple(re.findall(r"@compute\b[^{;]*?\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", text))
    if not entries:
        raise ArtifactError(
            f"--kernel-artifact {path} has no compute entry point (`@compute ... fn NAME`)",
            "pass the WGSL rgpu wrote for one of the workspace's kernels",
        )
    return entries


class _Accepted(NamedTuple):
    """A file that passed every check, not yet copied."""

    path: Path
    kind: str
    target: str
    entry_points: tuple[str, ...]
    extra: dict[str, str]
    sass: ptx.Checked | None = None  # PTX: ptxas's check, with the cubin it wrote


def _check_one(
    path: Path, required: Sequence[str], cuda_archs: Sequence[Arch], ptxas: str | None
) -> _Accepted:
    if not path.is_file():
        raise UsageError(f"--kernel-artifact {path}: no such file", "check the path")
    kind = kind_of(path)
    if kind == "wgsl":
        return _Accepted(path, kind, WGSL_TARGET, _check_wgsl(path), {})
    if kind == "spirv":
        entries, extra = _check_spirv(path, required)
        return _Accepted(path, kind, SPIRV_TARGET, entries, extra)
    checked = ptx.check(
        path,
        ptxas,
        os.environ,
        shown_as=f"--kernel-artifact {path}",
        allowed_archs=cuda_archs,
        keep_sass=True,
    )
    _missing_entries(path, checked.entry_points, required)
    extra = {"ptx_isa": checked.isa, "ptxas": checked.ptxas}
    return _Accepted(path, kind, checked.arch, checked.entry_points, extra, checked)


def collect(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    required: Sequence[str],
    cuda_archs: Sequence[Arch],
    ptxas: str | None,
) -> list[manifest.Artifact]:
    """Check every file in place first; only when all passed, copy each under
    `out_dir/external/` and describe it (a refused build leaves the kernels as they were).
    A PTX that ptxas accepted brings its SASS (`external/<name>.cubin`, artifacts.sass)."""
    accepted = [_check_one(path, required, cuda_archs, ptxas) for path in paths]
    wgsl = [a for a in accepted if a.kind == "wgsl"]
    if wgsl:
        _missing_entries(
            Path(", ".join(str(a.path) for a in wgsl)),
            [e for a in wgsl for e in a.entry_points],
            required,
        )
    _one_per_target(accepted)
    found: list[manifest.Artifact] = []
    release = sass.ptxas_release(ptxas, os.environ) if any(a.sass for a in accepted) else ""
    for item in accepted:
        copy = out_dir / EXTERNAL_DIR / item.path.name
        write_bytes_if_changed(copy, item.path.read_bytes())
        artifact = manifest.describe(
            copy,
            out_dir,
            kind=item.kind,
            codegen="external",
            target=item.target,
            entry_points=item.entry_points,
            source=str(item.path.resolve()),
            extra=item.extra,
        )
        found.append(artifact)
        cubin = sass.embed(item.sass, artifact, out_dir, release=release) if item.sass else None
        if cubin is not None:
            found.append(cubin)
    return found


def _one_per_target(accepted: Sequence[_Accepted]) -> None:
    seen: dict[tuple[str, str], Path] = {}
    for item in accepted:
        # WGSL is one file per kernel: one per entry point.
        key = (item.kind, item.target if item.kind != "wgsl" else ",".join(item.entry_points))
        if key in seen:
            raise UsageError(
                f"--kernel-artifact {seen[key]} and {item.path} are both "
                f"{KIND_NAMES[item.kind]} for {item.target}",
                "pass one file per kind and target",
            )
        seen[key] = item.path
    names = [item.path.name for item in accepted]
    if len(set(names)) != len(names):
        raise UsageError(
            "two --kernel-artifact files have the same name",
            "give them different file names",
        )


def reusable(
    previous: Sequence[manifest.Artifact],
    kinds: Iterable[str],
    cuda_archs: Iterable[Arch] | None = None,
) -> list[manifest.Artifact]:
    """External artifacts of an earlier build for these kinds (a PTX's cubin with its
    PTX); with `cuda_archs`, PTX only for an arch still asked for (PTX for an arch dropped
    from cuda-archs is stale)."""
    wanted = set(kinds)
    archs = None if cuda_archs is None else {a.name for a in cuda_archs}

    def family(kind: str) -> str:
        return "ptx" if kind == sass.KIND else kind

    return [
        a
        for a in previous
        if a.codegen == "external"
        and family(a.kind) in wanted
        and (archs is None or family(a.kind) != "ptx" or a.target in archs)
    ]
