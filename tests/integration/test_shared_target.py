"""Workspaces sharing one CARGO_TARGET_DIR compile rgpu's vendored crates once (issue 20):
two workspaces made by `rgpu new` (the second made after the first was built, so its copy
of the crates is younger than the build), built one after the other, then the first again:
cargo compiles `rgpu`, `rgpu-macros` and `rgpu-runtime` for neither rebuild. The real
cargo, in a target directory of the test's own."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_rgpu

VENDORED = re.compile(r"Compiling (rgpu|rgpu-macros|rgpu-runtime) v")


def build(ws: Path, target: Path) -> str:
    proc = run_rgpu(
        "build", "-C", str(ws), "--backend", "cpu", env={"CARGO_TARGET_DIR": str(target)}
    )
    return proc.stderr


def test_the_vendored_crates_compile_once_per_target_dir(tmp_path: Path) -> None:
    target = tmp_path / "shared-target"
    run_rgpu("new", "first", "--template", "minimal", "--dir", str(tmp_path))
    first = build(tmp_path / "first", target)
    assert len(VENDORED.findall(first)) == 3, first
    run_rgpu("new", "second", "--template", "minimal", "--dir", str(tmp_path))
    second = build(tmp_path / "second", target)
    assert "Compiling second" in second and not VENDORED.search(second), second
    (tmp_path / "first" / "src" / "main.rs").touch()  # the host changed: cargo runs again
    again = build(tmp_path / "first", target)
    assert "Compiling first" in again and not VENDORED.search(again), again
