"""Codegens turn (project, kernel, targets, toolchain) into a plan of commands.

Nothing outside this package knows a codegen's flags. Each module exposes a class that
follows ``Codegen``; ``get`` looks one up by name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rgpu.artifacts import Artifact
from rgpu.backends import did_you_mean
from rgpu.config import Options
from rgpu.errors import UsageError
from rgpu.plan import Plan
from rgpu.project import Project


@dataclass(frozen=True, kw_only=True)
class KernelBuild:
    """What a codegen is asked to build."""

    project: Project
    options: Options
    out_dir: Path  # where artifacts go (target/rgpu)


class Codegen(Protocol):
    name: str
    artifact_kind: str

    def plan(self, build: KernelBuild) -> Plan:
        """The commands that compile the kernel crate; pure, no side effects."""
        ...

    def collect(self, build: KernelBuild) -> list[Artifact]:
        """After the plan ran: check and describe what it produced."""
        ...


# Codegen name -> the module that defines it as ``CODEGEN``; imported only when used, so
# that `rgpu build --backend cpu` pays for none of them.
MODULES: dict[str, str] = {
    "nvptx": "rgpu.codegens.nvptx",
    "nvvm": "rgpu.codegens.nvvm",
    "spirv": "rgpu.codegens.spirv",
}


def get(name: str) -> Codegen:
    try:
        module = importlib.import_module(MODULES[name])
    except KeyError:
        names = tuple(sorted(MODULES))
        raise UsageError(
            f"unknown codegen `{name}`{did_you_mean(name, names)}",
            f"available codegens: {', '.join(names) or 'none'}",
        ) from None
    codegen: Codegen = module.CODEGEN
    return codegen
