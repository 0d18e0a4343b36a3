"""Issue 11, trust: a build with nothing changed does nothing. No cargo is started, the
kernels directory keeps its bytes and its mtimes (cargo compares mtimes: a rewritten PTX
would rebuild the host), and `rgpu run` never compiles what `rgpu build` just built.
The stamps are content based (rgpu/host/stamp.py), so a plain `cargo build` in between,
which rewrites cargo's own dep-info files, does not undo the no-op."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_rgpu
from tests.integration.conftest import (
    binary,
    files_with_mtimes,
    kernels_dir,
    new_workspace,
    started_commands,
)


def test_second_cuda_build_starts_no_cargo_and_keeps_the_kernels(cuda_ws: Path) -> None:
    # The first of the two may compile: the suite's workspaces share CARGO_TARGET_DIR, and
    # cargo gives their vendored `rgpu` crates (same name, version and relative path) the
    # same artifacts, so a build of another workspace in between invalidates this one's.
    run_rgpu("build", "--backend", "cuda", cwd=cuda_ws)
    before = files_with_mtimes(kernels_dir(cuda_ws))
    state = cuda_ws / "target" / "rgpu" / "build.json"
    state_before = (state.read_bytes(), state.stat().st_mtime_ns)
    host_before = binary(cuda_ws).stat().st_mtime_ns
    again = run_rgpu("build", "--backend", "cuda", cwd=cuda_ws)
    assert started_commands(again.stderr) == []  # not cargo, not ptxas: nothing at all
    assert "nvptx kernels: up to date, not compiled" in again.stderr
    assert "up to date, cargo not started" in again.stderr
    assert "Compiling" not in again.stderr
    assert files_with_mtimes(kernels_dir(cuda_ws)) == before
    assert (state.read_bytes(), state.stat().st_mtime_ns) == state_before
    assert binary(cuda_ws).stat().st_mtime_ns == host_before


def test_build_then_run_twice_never_compiles(cuda_ws: Path) -> None:
    run_rgpu("build", "--backend", "cuda", cwd=cuda_ws)  # settled (see above)
    before = files_with_mtimes(kernels_dir(cuda_ws))
    outputs = [run_rgpu("build", cwd=cuda_ws)]
    for _ in range(2):
        ran = run_rgpu("run", "--", "--len", "10", cwd=cuda_ws)
        assert "sorted 10 u32 keys" in ran.stdout
        outputs.append(ran)
    for proc in outputs:
        assert "Compiling" not in proc.stdout + proc.stderr
        assert not any(c.split()[0].endswith("cargo") for c in started_commands(proc.stderr))
    assert files_with_mtimes(kernels_dir(cuda_ws)) == before


@pytest.fixture(scope="module")
def cpu_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = new_workspace(tmp_path_factory.mktemp("noop"), "noopdemo")
    run_rgpu("build", cwd=ws)
    return ws


@pytest.mark.parametrize(
    "cargo_args",
    [
        ["build", "--release"],
        ["build", "--release", "--workspace", "--bins", "--examples", "--tests"],
    ],
    ids=["cargo-build-release", "cargo-build-as-rgpu-does"],
)
def test_cpu_noop_stays_a_noop_after_a_plain_cargo_build(
    cpu_ws: Path, cargo_args: list[str]
) -> None:
    host = binary(cpu_ws)
    before = host.stat().st_mtime_ns
    plain = subprocess.run(
        ["cargo", *cargo_args], cwd=cpu_ws, capture_output=True, text=True, check=False
    )
    assert plain.returncode == 0, plain.stderr
    assert "Compiling" not in plain.stderr  # cargo itself had nothing to do
    again = run_rgpu("build", cwd=cpu_ws)
    assert "host build (cpu; release): up to date, cargo not started" in again.stderr
    assert started_commands(again.stderr) == []
    assert host.stat().st_mtime_ns == before


def test_an_edit_is_not_mistaken_for_a_noop(cpu_ws: Path) -> None:
    """The other side of the stamp: a changed source starts cargo again."""
    lib = cpu_ws / "kernel" / "src" / "lib.rs"
    text = lib.read_text(encoding="utf-8")
    lib.write_text(text + "\n// an edit\n", encoding="utf-8")
    try:
        changed = run_rgpu("build", cwd=cpu_ws)
        assert any(c.startswith("cargo build") for c in started_commands(changed.stderr))
    finally:
        lib.write_text(text, encoding="utf-8")


def test_a_new_example_is_built_and_runs(cpu_ws: Path) -> None:
    """cargo finds examples/*.rs by itself, so no dep-info names a new one: the stamp still
    sees it (the directory changed), cargo builds it and `rgpu run --example` runs it."""
    example = cpu_ws / "examples" / "newone.rs"
    example.write_text('fn main() {\n    println!("newone ran");\n}\n', encoding="utf-8")
    try:
        built = run_rgpu("build", cwd=cpu_ws)
        assert any(c.startswith("cargo build") for c in started_commands(built.stderr))
        ran = run_rgpu("run", "--example", "newone", cwd=cpu_ws)
        assert ran.stdout == "newone ran\n"
    finally:
        example.unlink()
    gone = run_rgpu("build", cwd=cpu_ws)
    assert any(c.startswith("cargo build") for c in started_commands(gone.stderr))
