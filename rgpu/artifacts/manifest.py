"""Kernel artifacts and their manifest (target/rgpu/kernels/manifest.json): read, write, hash.

The kernels directory holds the artifacts the host embeds and the manifest that lists them,
nothing else: each crate holding kernels reads the manifest with `rgpu::embed_kernels!()` at
compile time and `include_bytes!`es every file that has one of its kernels (the manifest's
`kernels` list says which package declares each kernel), so cargo rebuilds when, and only
when, one of them changes. Files are written only when their content changes; the manifest
is written last; files it no longer lists (an arch dropped from cuda-archs) are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rgpu.artifacts.kernels import Kernel
from rgpu.errors import ArtifactError
from rgpu.util.files import write_text_if_changed

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 2


@dataclass(frozen=True, kw_only=True)
class Artifact:
    path: str  # relative to the manifest's directory
    # "ptx", "spirv"; "cubin" (a PTX's SASS, artifacts/sass.py); "wgsl", "msl", "hlsl" (the
    # portability check's translations)
    kind: str
    codegen: str  # "nvptx", "nvvm", "spirv", or "external"
    target: str  # e.g. "sm_80" or "spirv-unknown-vulkan1.2"
    entry_points: tuple[str, ...]
    size: int
    sha256: str
    source: str = "built"  # "built", or where an external artifact came from
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["entry_points"] = list(self.entry_points)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Artifact:
        return cls(
            path=str(data["path"]),
            kind=str(data["kind"]),
            codegen=str(data["codegen"]),
            target=str(data["target"]),
            entry_points=tuple(data.get("entry_points", ())),
            size=int(data["size"]),
            sha256=str(data["sha256"]),
            source=str(data.get("source", "built")),
            extra=dict(data.get("extra", {})),
        )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def describe(
    file: Path,
    base: Path,
    *,
    kind: str,
    codegen: str,
    target: str,
    entry_points: Iterable[str],
    source: str = "built",
    extra: dict[str, Any] | None = None,
) -> Artifact:
    return Artifact(
        path=os.path.relpath(file, base),
        kind=kind,
        codegen=codegen,
        target=target,
        entry_points=tuple(entry_points),
        size=file.stat().st_size,
        sha256=sha256_file(file),
        source=source,
        extra=dict(extra or {}),
    )


def write_manifest(
    directory: Path,
    artifacts: Iterable[Artifact],
    kernels: Iterable[Kernel] | None = None,
    *,
    checked: bool = False,
) -> Path:
    """Verify every artifact, write the manifest (only if it changed), and remove files of
    the directory that it no longer lists. ``kernels``: every kernel with the package that
    declares it (the `kernels` list: each crate's `embed_kernels!()` embeds the artifacts
    holding its own kernels, and reports name the crate). ``checked``: a checked build
    (rgpu/checked.py), written as `"checked": true` for `embed_kernels!()` to pass on to
    the launchers (absent otherwise: a release build's manifest is as before)."""
    items = sorted(artifacts, key=lambda a: (a.kind, a.target, a.path))
    for artifact in items:
        verify(directory, artifact)
    data: dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "artifacts": [a.to_dict() for a in items],
    }
    if kernels is not None:
        data["kernels"] = [{"name": k.name, "package": k.package} for k in kernels]
    if checked:
        data["checked"] = True
    path = directory / MANIFEST_NAME
    write_text_if_changed(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    remove_unlisted(directory, {a.path for a in items})
    return path


def remove_unlisted(directory: Path, listed: set[str]) -> None:
    """Stale artifacts (of archs or kinds no longer built) leave the kernels directory."""
    for file in sorted(directory.rglob("*"), reverse=True):
        rel = file.relative_to(directory).as_posix()
        if file.is_file() and rel != MANIFEST_NAME and rel not in listed:
            file.unlink()
        elif file.is_dir() and not any(file.iterdir()):
            file.rmdir()


def read_manifest(directory: Path) -> list[Artifact]:
    path = directory / MANIFEST_NAME
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Artifact.from_dict(a) for a in data["artifacts"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(
            f"{path} is not a valid rgpu manifest: {exc}",
            f"delete {path} and rebuild the kernels with `rgpu build`",
        ) from exc


def read_kernels(directory: Path) -> tuple[Kernel, ...] | None:
    """The manifest's `kernels` list; None without a manifest or a list."""
    path = directory / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        listed = data.get("kernels")
        if not isinstance(listed, list):
            return None
        return tuple(Kernel(str(k["name"]), str(k["package"])) for k in listed)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


# Files this process has hashed, by (path, size, mtime): a build verifies the same artifact
# more than once (is it intact, then before the manifest is written), and a no-op build
# would otherwise hash every PTX twice.
_hashed: dict[tuple[str, int, int], str] = {}


def verify(directory: Path, artifact: Artifact) -> None:
    file = directory / artifact.path
    try:
        st = file.stat()
    except OSError:
        st = None
    if st is None or not file.is_file():
        raise ArtifactError(
            f"artifact {file} listed in the manifest is missing", "rebuild with `rgpu build`"
        )
    seen = (str(file), st.st_size, st.st_mtime_ns)
    actual = _hashed.get(seen) or sha256_file(file)
    _hashed[seen] = actual
    if actual != artifact.sha256:
        raise ArtifactError(
            f"artifact {file} does not match its manifest hash "
            f"({actual[:12]} != {artifact.sha256[:12]})",
            "rebuild with `rgpu build`",
        )
