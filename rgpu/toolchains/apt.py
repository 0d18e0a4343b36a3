"""Debian's packages as a toolchain route: `apt-get install`, as root only (rgpu never asks
for a password), and only with the user's consent (the caller asks)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from rgpu.errors import ToolchainError
from rgpu.util import cmd
from rgpu.util.output import reporter


def install_argv(
    packages: Sequence[str], env: Mapping[str, str], *, root: bool | None = None
) -> tuple[str, ...] | None:
    """`apt-get install` of ``packages`` when this process may run it: as root, with apt-get
    on PATH. None otherwise (no sudo: rgpu never asks for a password)."""
    if root is None:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not packages or not root or cmd.which("apt-get", env) is None:
        return None
    return ("apt-get", "install", "-y", "--no-install-recommends", *packages)


def install(argv: Sequence[str], env: Mapping[str, str], what: str) -> None:
    """apt-get install, non-interactive; on a failure, `apt-get update` once and again (a
    fresh machine or container has no package lists yet)."""
    apt_env = {**env, "DEBIAN_FRONTEND": "noninteractive"}
    command = cmd.format_argv(argv)
    with reporter().group(f"installing {what}: `{command}`"):
        result = cmd.run(argv, env=apt_env, capture=True, check=False)
        if result.returncode != 0:
            cmd.run(("apt-get", "update"), env=apt_env, capture=True, check=False)
            result = cmd.run(argv, env=apt_env, capture=True, check=False)
    if result.returncode != 0:
        detail = cmd.error_line(result.stderr or result.stdout, result.returncode)
        raise ToolchainError(
            f"`{command}` failed (exit code {result.returncode}): {detail}",
            f"run `{command}` and fix what apt-get reports",
        )
