"""Find the rgpu workspace (a Cargo workspace with [workspace.metadata.rgpu]) and its parts.

rgpu knows one thing of the workspace's layout: its kernel crate (`kernel = "DIR"`, default
`kernel`), the crate that holds the `#[rgpu::kernel]` functions. The backend features
(`cuda`, `wgpu`, `ash`) are the kernel crate's, so every binary, example and test of the
workspace that uses the kernels gets the same backends.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.errors import ConfigError, NotAWorkspaceError
from rgpu.util.files import absolute, is_utf8, shown


class Workspace(NamedTuple):
    root: Path
    kernel_dir: Path
    kernel_package: str
    metadata: Mapping[str, Any]
    target_dir: Path
    # The binary `rgpu run` runs without --bin (`binary` in the table), if one is named.
    default_binary: str | None = None

    @property
    def rgpu_dir(self) -> Path:
        """rgpu's own files (build state, stamps, external artifacts, codegen outputs).
        Always inside the workspace, even when CARGO_TARGET_DIR is shared."""
        return self.root / "target" / "rgpu"

    @property
    def kernels_dir(self) -> Path:
        """The embedded artifacts and their manifest, and nothing else: the kernel crate's
        `rgpu::embed_kernels!()` reads this directory, so it only changes when they do."""
        return self.rgpu_dir / "kernels"

    @property
    def kernel_crate_name(self) -> str:
        return self.kernel_package.replace("-", "_")

    def feature(self, name: str) -> str:
        """A backend feature of the kernel crate, qualified for `cargo --features`."""
        return f"{self.kernel_package}/{name}"


def load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", f"fix the syntax in {path}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text", f"fix the encoding of {path}") from exc


def find_root(start: Path) -> Path:
    """Search ``start`` and its parents for a Cargo.toml with [workspace.metadata.rgpu]."""
    # `..` folded away (as a shell's `cd` does): cargo reports normalized paths, and the
    # parents searched are the directory's real ancestors.
    start = absolute(start)
    if start.exists() and not start.is_dir():
        raise NotAWorkspaceError(
            f"{shown(start)} is a file, not a directory",
            f"pass the workspace's directory: `-C {shown(start.parent)}`",
        )
    if not start.is_dir():
        raise NotAWorkspaceError(
            f"{shown(start)} does not exist", "pass an existing directory to -C (or cd into it)"
        )
    plain: Path | None = None
    for directory in (start, *start.parents):
        manifest = directory / "Cargo.toml"
        if not manifest.is_file():
            continue
        data = load_toml(manifest)
        workspace = data.get("workspace")
        if isinstance(workspace, dict):
            if isinstance(workspace.get("metadata", {}).get("rgpu"), dict):
                return directory
            plain = plain or directory
        elif plain is None and "package" in data:
            plain = directory
    if plain is not None:
        raise NotAWorkspaceError(
            f"{plain / 'Cargo.toml'} is a Cargo project without rgpu "
            "(no [workspace.metadata.rgpu] table)",
            f"add rgpu to it with `rgpu init -C {plain}` (see what it would change with "
            "--dry-run), or create a new workspace with `rgpu new NAME`",
        )
    raise NotAWorkspaceError(
        f"no rgpu workspace found in {shown(start)} or any parent directory",
        "run `rgpu new NAME` to create one, `rgpu init` in an existing Cargo project, "
        "or pass its directory with `-C DIR`",
    )


def package_name(crate_dir: Path) -> str:
    manifest = crate_dir / "Cargo.toml"
    if not manifest.is_file():
        raise ConfigError(
            f"{manifest} does not exist",
            "point `kernel` in [workspace.metadata.rgpu] at the kernel crate's directory",
        )
    name = load_toml(manifest).get("package", {}).get("name")
    if not isinstance(name, str):
        raise ConfigError(f"{manifest} has no [package] name", f"add `name = ...` to {manifest}")
    return name


def target_dir(root: Path, env: Mapping[str, str]) -> Path:
    target = env.get("CARGO_TARGET_DIR")
    path = Path(target) if target else root / "target"
    return path if path.is_absolute() else root / path


def load(start: Path, env: Mapping[str, str] | None = None) -> Workspace:
    env = os.environ if env is None else env
    root = find_root(start)
    if not is_utf8(root):
        raise ConfigError(
            f"the workspace {shown(root)} is at a path that is not valid UTF-8: cargo and "
            "rustc need UTF-8 paths",
            "rename the directory (or move the workspace) to a name that is valid UTF-8",
        )
    meta: dict[str, Any] = load_toml(root / "Cargo.toml")["workspace"]["metadata"]["rgpu"]
    kernel = meta.get("kernel", "kernel")
    if not isinstance(kernel, str) or not kernel.strip():
        raise ConfigError(
            f"[workspace.metadata.rgpu] kernel = {kernel!r} is not a directory name",
            'write kernel = "kernel" (the kernel crate\'s directory, relative to the workspace)',
        )
    binary = meta.get("binary")
    if binary is not None and not isinstance(binary, str):
        raise ConfigError(
            f"[workspace.metadata.rgpu] binary = {binary!r} is not a binary name",
            'write binary = "NAME" (what `rgpu run` runs without --bin)',
        )
    kernel_dir = root / kernel
    return Workspace(
        root=root,
        kernel_dir=kernel_dir,
        kernel_package=package_name(kernel_dir),
        metadata=meta,
        target_dir=target_dir(root, env),
        default_binary=binary,
    )


# The variable that tells a crate outside the workspace (a library of kernels from cargo's
# registry or a path elsewhere) whose kernels its `embed_kernels!()` embeds; it also makes
# cargo rebuild such a crate, and a vendored one, for each workspace sharing a target dir.
WORKSPACE_VAR = "RGPU_WORKSPACE"
CARGO_CONFIG_ENV = f'[env]\n{WORKSPACE_VAR} = {{ value = ".", relative = true }}\n'


def configured_workspace(root: Path, env: Mapping[str, str]) -> Path | None:
    """Where RGPU_WORKSPACE points for cargo run in ``root``: the environment's value, else
    the `[env]` entry of the workspace's `.cargo/config.toml` (or `config`)."""
    named = env.get(WORKSPACE_VAR)
    if named:
        return absolute(Path(named))
    for name in ("config.toml", "config"):
        config = root / ".cargo" / name
        if not config.is_file():
            continue
        value = load_toml(config).get("env", {}).get(WORKSPACE_VAR)
        if isinstance(value, str):
            return absolute(Path(value))
        if isinstance(value, dict) and isinstance(value.get("value"), str):
            path = Path(value["value"])
            return absolute(root / path) if value.get("relative") else absolute(path)
    return None


def require_workspace_env(ws: Workspace, env: Mapping[str, str], libraries: list[str]) -> None:
    """Crates other than the kernel crate hold kernels: cargo must tell them the workspace
    (RGPU_WORKSPACE), for a plain `cargo build` as for rgpu's."""
    where = configured_workspace(ws.root, env)
    if where is not None and where == absolute(ws.root):
        return
    crates = ", ".join(libraries)
    config = ws.root / ".cargo" / "config.toml"
    now = (
        f"{WORKSPACE_VAR} points at {where}, not this workspace"
        if where is not None
        else f"{shown(config)} does not set {WORKSPACE_VAR}"
    )
    raise ConfigError(
        f"the kernel crate depends on crates that declare kernels ({crates}); each embeds "
        f"the kernels this workspace builds, so cargo must tell it the workspace, and {now}",
        f"add to {shown(config)}:\n{CARGO_CONFIG_ENV}"
        + (f"(and unset {WORKSPACE_VAR} in your shell)" if env.get(WORKSPACE_VAR) else ""),
    )
