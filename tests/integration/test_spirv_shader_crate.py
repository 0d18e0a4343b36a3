"""The rust-gpu shader crate (kernel/spirv) stays out of the host's dependency graph.

spirv-std is a git dependency. Declared in kernel/Cargo.toml, even only for
cfg(target_arch = "spirv"), cargo would clone rust-gpu for every plain `cargo build`
(cargo resolves the dependencies of every target into Cargo.lock; checked by hand with
cargo 1.95: "failed to resolve address for github.com"). So the shader crate is its own
workspace, which these tests pin down. Compiling it needs rust-gpu and cannot run here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def metadata(*args: str, cwd: Path) -> dict[str, object]:
    proc = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def test_the_shader_crate_is_its_own_workspace(sortdemo: Path) -> None:
    crate = sortdemo / "kernel" / "spirv"
    data = metadata("--no-deps", cwd=crate)
    assert data["workspace_root"] == str(crate)
    (package,) = data["packages"]  # type: ignore[misc]
    assert package["name"] == "sortdemo-kernel-spirv"
    (lib,) = package["targets"]
    assert Path(lib["src_path"]).resolve() == (sortdemo / "kernel" / "src" / "lib.rs").resolve()
    deps = {d["name"]: d.get("source") or "" for d in package["dependencies"]}
    assert deps["spirv-std"].startswith("git+https://github.com/Rust-GPU/rust-gpu")


def test_the_host_workspace_has_no_git_dependency(sortdemo: Path) -> None:
    data = metadata(cwd=sortdemo)
    sources = {p["source"] or "path" for p in data["packages"]}  # type: ignore[attr-defined]
    assert not [s for s in sources if s.startswith("git+")], sources
    names = {p["name"] for p in data["packages"]}  # type: ignore[attr-defined]
    assert "spirv-std" not in names
    assert "sortdemo-kernel-spirv" not in names
