"""Where a codegen's kernel compile runs: locally, or in a container of which image.

The default comes from the codegen's toolchain file (`[container] default`): "local",
"container", or "unless-llvm7" (nvvm: a container unless an LLVM 7 `llvm-config` is found
here). `--docker/--no-docker` (or RGPU_DOCKER / `docker` in [workspace.metadata.rgpu])
overrides it; `--image` / RGPU_IMAGE overrides the image.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu import container
from rgpu.config import Options
from rgpu.resources import toolchains_dir
from rgpu.util import cmd

# Used when a toolchain file has no [container] table.
FALLBACK_DEFAULTS = {"nvvm": "unless-llvm7"}
DEFAULT_WORDS = ("local", "container", "unless-llvm7")


@dataclass(frozen=True)
class Placement:
    in_container: bool
    image: str | None
    why: str


def toolchain_table(codegen: str, directory: Path | None = None) -> dict[str, Any]:
    path = (directory or toolchains_dir()) / f"{codegen}.toml"
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def default_word(codegen: str, table: Mapping[str, Any]) -> str:
    section = table.get("container")
    word = section.get("default") if isinstance(section, dict) else None
    if word in DEFAULT_WORDS:
        return str(word)
    return FALLBACK_DEFAULTS.get(codegen, "local")


def llvm7_config(env: Mapping[str, str]) -> str | None:
    """LLVM_CONFIG, else `llvm-config` on PATH, when its version starts with 7 (the rule of
    Rust-CUDA's crates/rustc_codegen_nvvm/build.rs at the pinned rev)."""
    program = env.get("LLVM_CONFIG") or cmd.which("llvm-config", env)
    if not program:
        return None
    try:
        result = cmd.run([program, "--version"], env=env, capture=True, check=False, echo=False)
    except Exception:  # a broken LLVM_CONFIG simply means "not found here"
        return None
    return program if result.returncode == 0 and result.stdout.startswith("7") else None


def default_image(codegen: str, table: Mapping[str, Any]) -> str:
    section = table.get("container")
    image = section.get("image") if isinstance(section, dict) else None
    return str(image) if image else container.DEFAULT_IMAGE


def decide(
    codegen: str,
    options: Options,
    env: Mapping[str, str],
    *,
    image_for_codegen: str | None = None,
    table: Mapping[str, Any] | None = None,
) -> Placement:
    """``image_for_codegen``: the codegen's own image choice (nvvm picks by CUDA major)."""
    table = toolchain_table(codegen) if table is None else table
    image = options.image or image_for_codegen or default_image(codegen, table)
    if options.docker is not None:
        flag = "--docker" if options.docker else "--no-docker"
        return Placement(options.docker, image if options.docker else None, f"{flag} was given")
    word = default_word(codegen, table)
    if word == "container":
        return Placement(True, image, f"the {codegen} codegen builds in a container by default")
    if word == "unless-llvm7":
        found = llvm7_config(env)
        if found:
            return Placement(False, None, f"LLVM 7 found here ({found})")
        return Placement(True, image, "no LLVM 7 here (LLVM_CONFIG or llvm-config 7.x)")
    return Placement(False, None, f"the {codegen} codegen builds locally by default")
