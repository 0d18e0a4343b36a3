"""Codegens: compilers from Rust to a GPU format, each one module that owns its toolchain.

A codegen module defines `CODEGEN`, an object following `Codegen`: which pin file it reads
(toolchains/<name>.toml, through toolchains.pins), how it finds its tools on this machine
(`toolchain`), the lines `rgpu doctor` shows for it (`checks`, derived from the same
toolchain), its own container image choice, its plan of commands (pure: the placement and
the toolchain are decided before and carried in `KernelBuild`), and how it collects its
artifacts. Adding a codegen is its module, its pin file and one line in `REGISTRY`
(rgpu/backends.py, the table of backends and codegens).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from rgpu.backends import REGISTRY, check_codegen, codegen_names

if TYPE_CHECKING:
    from rgpu.artifacts.manifest import Artifact
    from rgpu.check import Check
    from rgpu.config import Options
    from rgpu.containers.placement import Placement
    from rgpu.plan import Plan
    from rgpu.toolchains.pins import Pin
    from rgpu.workspace import Workspace


class KernelBuild(NamedTuple):
    """What a codegen is asked to build, with where and with what it runs (decided once)."""

    workspace: Workspace
    options: Options
    out_dir: Path  # where artifacts go (target/rgpu/kernels)
    pin: Pin
    placement: Placement
    toolchain: Any  # what this codegen's `toolchain()` found
    # The scalar types the kernel crate's source names (f64, u8, ...: artifacts/
    # capabilities.py), read once by the pipeline so that plans stay pure.
    kernel_types: tuple[str, ...] = ()
    # The workspace's Cargo.lock as it is before the build (None: none yet), for a codegen
    # whose kernel build resolves against a copy of it (nvptx: its libm patch).
    cargo_lock: str | None = None


class Codegen(Protocol):
    name: str  # also the pin file's name
    artifact_kind: str  # "ptx" or "spirv"
    # Run as the image's root in a container (the image keeps its tools under /root).
    container_as_root: bool
    # With consent (--yes) it installs its own pinned toolchain, so a missing one is no stop.
    installs_toolchain: bool
    # The GitHub Actions job `rgpu ci init` writes for it: rgpu commands before the build
    # (installing its pinned toolchain), and what it adds to `rgpu build --backend B`.
    ci_setup: tuple[tuple[str, ...], ...]
    ci_build_args: tuple[str, ...]

    def image(self, pin: Pin, env: Mapping[str, str]) -> str | None:
        """Its own choice of container image (None: the pin's [container] image)."""
        ...

    def toolchain(self, pin: Pin, placement: Placement, env: Mapping[str, str]) -> Any:
        """Find its tools (probes the machine; the one answer build and doctor share)."""
        ...

    def checks(self, pin: Pin, toolchain: Any) -> list[Check]:
        """doctor's lines for it, derived from what `toolchain` found (doctor asks for a
        local placement; a build checks the toolchain it will use)."""
        ...

    def install(self, build: KernelBuild, env: Mapping[str, str]) -> Any:
        """Called only with consent (--yes) for a local build: install a missing toolchain
        and return the toolchain found afterwards; None when it has nothing to install
        here (it is ready, or the plan's own steps install it)."""
        ...

    def plan(self, build: KernelBuild) -> Plan:
        """The commands that compile the kernel crate; pure (no probing, no I/O)."""
        ...

    def collect(self, build: KernelBuild) -> list[Artifact]:
        """After the plan ran: check and describe what it produced."""
        ...

    def dep_infos(self, build: KernelBuild) -> list[Path] | None:
        """cargo's dep-info files of its outputs, so an unchanged build is skipped; None
        when it cannot tell (then it always runs)."""
        ...


def get(name: str) -> Codegen:
    """The codegen called ``name`` (its module is imported now); an unknown name fails
    with the nearest one."""
    check_codegen(name)
    entry = next(e for e in REGISTRY if e.name == name)
    codegen: Codegen = importlib.import_module(entry.module).CODEGEN
    return codegen


def all_codegens() -> list[Codegen]:
    return [get(n) for n in codegen_names()]


def first_failure(checks: Sequence[Check]) -> Check | None:
    return next((c for c in checks if c.failed), None)
