"""rgpu's Rust support crates, vendored into a workspace.

A workspace made by `rgpu new` or `rgpu init` builds offline right away, and keeps building
when rgpu is reinstalled, upgraded or removed: it carries its own copy of the crates
(`rgpu`, `rgpu-macros`, `rgpu-runtime`) under `vendor/rgpu-<version>/`, referenced with
`path` and `version` from [workspace.dependencies]. The crates are the ones in rgpu's
repository (crates/), published to crates.io under the same names and versions, so the
`path` can be dropped once they are there. `rgpu vendor` writes the running rgpu's crates
beside the old ones and moves the dependency to them (moving to a newer rgpu).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rgpu import __version__
from rgpu.resources import data_dir

CRATES = ("rgpu", "rgpu-macros", "rgpu-runtime")
SKIP = {"target", "Cargo.lock", ".gitignore", "tests", "examples"}


def vendor_dir(version: str = __version__) -> str:
    """The vendored crates' directory, relative to the workspace root."""
    return f"vendor/rgpu-{version}"


def crates_source() -> Path:
    return data_dir("crates")


def _files(crate: Path) -> list[Path]:
    out = []
    for path in sorted(crate.rglob("*")):
        rel = path.relative_to(crate)
        if rel.parts[0] in SKIP or "__pycache__" in rel.parts:
            continue
        if path.is_file():
            out.append(rel)
    return out


def vendor_files(root: Path) -> list[str]:
    """Copy the crates under `root/vendor/rgpu-<version>/`; return the relative paths."""
    written: list[str] = []
    source = crates_source()
    base = vendor_dir()
    for name in CRATES:
        for rel in _files(source / name):
            target = root / base / name / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name / rel, target)
            written.append(f"{base}/{name}/{rel.as_posix()}")
    return written
