"""A Project value for plan tests: the layout `rgpu new` produces, without cargo."""

from __future__ import annotations

from pathlib import Path

from rgpu.project import Project


def demo_project(root: Path, name: str = "demo") -> Project:
    return Project(
        root=root,
        host_package=name,
        host_binary=name,
        kernel_dir=root / "kernel",
        kernel_package=f"{name}-kernel",
        shared_dir=root / "shared",
        metadata={},
        target_dir=root / "target",
    )
