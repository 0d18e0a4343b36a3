"""Find the rgpu workspace (a Cargo workspace with [workspace.metadata.rgpu]) and its parts."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.errors import ConfigError, NotAWorkspaceError


@dataclass(frozen=True, kw_only=True)
class Project:
    root: Path
    host_package: str
    host_binary: str
    kernel_dir: Path
    kernel_package: str
    shared_dir: Path
    metadata: Mapping[str, Any]
    target_dir: Path

    @property
    def rgpu_dir(self) -> Path:
        """Where kernel artifacts, the manifest and build state live. Always inside the
        workspace, even when CARGO_TARGET_DIR is shared between workspaces."""
        return self.root / "target" / "rgpu"

    @property
    def kernel_crate_name(self) -> str:
        return self.kernel_package.replace("-", "_")

    def binary_path(self, profile: str) -> Path:
        suffix = ".exe" if os.name == "nt" else ""
        return self.target_dir / profile / f"{self.host_binary}{suffix}"


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", f"fix the syntax in {path}") from exc


def find_root(start: Path) -> Path:
    """Search ``start`` and its parents for a Cargo.toml with [workspace.metadata.rgpu]."""
    start = start.resolve()
    if not start.is_dir():
        raise NotAWorkspaceError(f"{start} is not a directory", "pass an existing directory to -C")
    plain_workspace: Path | None = None
    for directory in (start, *start.parents):
        manifest = directory / "Cargo.toml"
        if not manifest.is_file():
            continue
        data = _load_toml(manifest)
        workspace = data.get("workspace")
        if isinstance(workspace, dict):
            if isinstance(workspace.get("metadata", {}).get("rgpu"), dict):
                return directory
            plain_workspace = plain_workspace or directory
    if plain_workspace is not None:
        raise NotAWorkspaceError(
            f"{plain_workspace / 'Cargo.toml'} has no [workspace.metadata.rgpu] table, "
            "so rgpu does not know its kernel and host crates",
            "create an rgpu workspace with `rgpu new NAME`, or add [workspace.metadata.rgpu] "
            "with `host = ...` and `kernel = ...`",
        )
    raise NotAWorkspaceError(
        f"no rgpu workspace found in {start} or any parent directory",
        "run `rgpu new NAME` to create one, or pass its directory with `-C DIR`",
    )


def _package_name(crate_dir: Path) -> str:
    manifest = crate_dir / "Cargo.toml"
    if not manifest.is_file():
        raise ConfigError(
            f"{manifest} does not exist",
            "point [workspace.metadata.rgpu] `kernel`/`shared` at crate directories",
        )
    name = _load_toml(manifest).get("package", {}).get("name")
    if not isinstance(name, str):
        raise ConfigError(f"{manifest} has no [package] name", f"add `name = ...` to {manifest}")
    return name


def load(start: Path, env: Mapping[str, str] | None = None) -> Project:
    env = os.environ if env is None else env
    root = find_root(start)
    data = _load_toml(root / "Cargo.toml")
    meta: dict[str, Any] = data["workspace"]["metadata"]["rgpu"]
    host = data.get("package", {}).get("name")
    if not isinstance(host, str):
        raise ConfigError(
            f"{root / 'Cargo.toml'} has no root [package]: rgpu expects the host package there",
            "add the host [package] to the workspace's root Cargo.toml",
        )
    kernel_dir = root / str(meta.get("kernel", "kernel"))
    shared_dir = root / str(meta.get("shared", "shared"))
    target = env.get("CARGO_TARGET_DIR")
    target_dir = Path(target) if target else root / "target"
    if not target_dir.is_absolute():
        target_dir = root / target_dir
    return Project(
        root=root,
        host_package=host,
        host_binary=str(meta.get("binary", host)),
        kernel_dir=kernel_dir,
        kernel_package=_package_name(kernel_dir),
        shared_dir=shared_dir,
        metadata=meta,
        target_dir=target_dir,
    )
