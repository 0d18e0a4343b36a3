"""Unit-test helpers: a tiny rgpu workspace on disk (no cargo runs), fake programs, options.

The workspace has the layout rgpu reads: a root Cargo.toml with [workspace.metadata.rgpu]
and [workspace.dependencies], and a kernel crate depending on `rgpu`. Nothing here depends
on rgpu's templates or on the machine's toolchains.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rgpu import config, workspace
from rgpu.codegens import KernelBuild
from rgpu.containers.placement import Placement
from rgpu.toolchains import pins

ROOT_MANIFEST = """\
[workspace]
resolver = "2"
members = ["kernel"]

[workspace.package]
edition = "2024"

[workspace.dependencies]
rgpu = {{ path = "vendor/rgpu", version = "0.1.0" }}
bytemuck = {{ version = "1", features = ["derive"] }}

[workspace.metadata.rgpu]
{metadata}
"""

KERNEL_MANIFEST = """\
[package]
name = "{name}-kernel"
version = "0.1.0"
edition.workspace = true

[dependencies]
{dependencies}

[features]
cuda = ["rgpu/cuda"]
wgpu = ["rgpu/wgpu"]
ash = ["rgpu/ash"]
"""

KERNEL_DEPENDENCIES = """\
rgpu = { workspace = true }
bytemuck = { workspace = true, features = ["min_const_generics"] }
helper = { path = "../helper" }
"""

KERNEL_SOURCE = """\
#![no_std]

/// Adds one to every element.
#[rgpu::kernel]
pub fn add_one(data: &mut [u32]) {}
"""


def write_workspace(
    root: Path,
    name: str = "demo",
    *,
    metadata: str = "",
    dependencies: str = KERNEL_DEPENDENCIES,
) -> Path:
    """Write the workspace's files under ``root`` (created); return ``root``."""
    (root / "kernel" / "src").mkdir(parents=True, exist_ok=True)
    (root / "Cargo.toml").write_text(ROOT_MANIFEST.format(metadata=metadata), encoding="utf-8")
    kernel = KERNEL_MANIFEST.format(name=name, dependencies=dependencies)
    (root / "kernel" / "Cargo.toml").write_text(kernel, encoding="utf-8")
    (root / "kernel" / "src" / "lib.rs").write_text(KERNEL_SOURCE, encoding="utf-8")
    return root


def demo_workspace(root: Path, name: str = "demo", **kwargs: Any) -> workspace.Workspace:
    """The tiny workspace, loaded the way every command loads it (env={}: no overrides)."""
    write_workspace(root, name, **kwargs)
    return workspace.load(root, env={})


def options(env: Mapping[str, str] | None = None, **cli: Any) -> config.Options:
    """Options from defaults, ``env`` and typed CLI values (no workspace metadata)."""
    return config.resolve(metadata={}, env=env or {}, cli=cli)


def pin(name: str) -> pins.Pin:
    """A packaged pin (env={}: RGPU_TOOLCHAINS_DIR is not consulted)."""
    return pins.load(name, {})


def fake_program(directory: Path, name: str, script: str) -> Path:
    """An executable /bin/sh script ``directory/name`` running ``script``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(script).lstrip("\n"), encoding="utf-8")
    path.chmod(0o755)
    return path


def kernel_build(
    ws: workspace.Workspace,
    pin_name: str,
    toolchain: Any,
    opts: config.Options | None = None,
    where: Placement | None = None,
) -> KernelBuild:
    """What a codegen is asked to build, with its toolchain given by hand: no probing."""
    return KernelBuild(
        workspace=ws,
        options=opts or options(),
        out_dir=ws.kernels_dir,
        pin=pin(pin_name),
        placement=where or Placement.local("test"),
        toolchain=toolchain,
    )


def tiny_ptx(arch: str = "sm_80", body: str = "ret;", entry: str = "k") -> str:
    """The smallest PTX rgpu embeds: one empty kernel, written by hand."""
    return (
        f".version 7.0\n.target {arch}\n.address_size 64\n\n"
        f".visible .entry {entry}()\n{{\n\t{body}\n}}\n"
    )
