"""rgpu-naga, the translator behind the portability check (crates/rgpu-naga in rgpu's data).

A small Rust program on naga, pinned (`=`) to the naga of the wgpu that rgpu-runtime uses
and named in toolchains/spirv.toml `[naga]`. rgpu installs it once into its own cache, like
cargo-gpu: `cargo install --locked --path <rgpu's crates>/rgpu-naga --root <cache>/rgpu-naga/
<naga version>-<source hash>` with the user's own cargo (stable is fine). The root is keyed
by a hash of the crate's files, so a different rgpu-naga (another rgpu version) installs
beside the old one, never over it. Build and doctor both ask `find` here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rgpu.config import cache_dir
from rgpu.resources import crates_dir
from rgpu.toolchains.pins import Pin
from rgpu.util.platform import executable

CRATE = "rgpu-naga"


@dataclass(frozen=True)
class NagaTool:
    version: str  # the naga crate's version (toolchains/spirv.toml [naga] version)
    source: Path  # crates/rgpu-naga
    root: Path  # the `cargo install --root`
    binary: Path

    @property
    def installed(self) -> bool:
        return self.binary.is_file()

    def install_argv(self) -> tuple[str, ...]:
        return (
            "cargo",
            "install",
            "--locked",
            "--path",
            str(self.source),
            "--root",
            str(self.root),
            # One target directory for every version: a changed rgpu-naga rebuilds only
            # itself, not naga.
            "--target-dir",
            str(self.root.parent / "target"),
        )


def version(pin: Pin) -> str:
    return str(pin.table("naga").get("version", ""))


def source_hash(source: Path) -> str:
    """sha256 (12 hex digits) of the crate's Cargo.toml, Cargo.lock and src/**."""
    digest = hashlib.sha256()
    files = [source / "Cargo.toml", source / "Cargo.lock", *sorted((source / "src").rglob("*"))]
    for file in files:
        if file.is_file():
            digest.update(file.relative_to(source).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def find(pin: Pin, env: Mapping[str, str]) -> NagaTool:
    """Where rgpu keeps (or will install) rgpu-naga for this pin and this rgpu's crate."""
    source = crates_dir() / CRATE
    v = version(pin)
    root = cache_dir(env) / CRATE / f"{v}-{source_hash(source)}"
    return NagaTool(version=v, source=source, root=root, binary=root / "bin" / executable(CRATE))
