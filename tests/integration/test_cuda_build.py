"""`rgpu build --backend cuda` for real, on a machine without a GPU: PTX for three archs
with the system toolchain, each accepted by ptxas, hashes in the manifest, the host built
with cudarc, clippy clean, and the binary's answers when no driver is there."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rgpu import ptx
from rgpu.artifacts import read_manifest, sha256_file
from rgpu.errors import ExitCode
from tests.conftest import has_nvidia_gpu, run_rgpu

ARCHS = ("sm_75", "sm_80", "sm_90")
no_gpu_here = pytest.mark.skipif(has_nvidia_gpu(), reason="checks the no-GPU answers")


@pytest.fixture(scope="module")
def cuda_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A workspace built once with `rgpu build --backend cuda` (default archs)."""
    parent = tmp_path_factory.mktemp("cuda")
    run_rgpu("new", "cudademo", "--dir", str(parent))
    ws = parent / "cudademo"
    result = run_rgpu("build", "--backend", "cuda", "--json", cwd=ws)
    (ws / "build-result.json").write_text(result.stdout)
    yield ws


def test_ptx_for_three_archs_each_accepted_by_ptxas(cuda_ws: Path) -> None:
    ptxas = ptx.find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    built = {a.target: a for a in read_manifest(cuda_ws / "target" / "rgpu")}
    assert tuple(sorted(built)) == ARCHS
    for arch, artifact in built.items():
        file = cuda_ws / "target" / "rgpu" / artifact.path
        assert file.name == f"cudademo_kernel-{arch}.ptx"
        assert artifact.sha256 == sha256_file(file) and artifact.size == file.stat().st_size
        assert artifact.entry_points == ("bitonic_global", "bitonic_tile")
        assert artifact.extra["ptxas"] == "accepted"
        # The tile kernel's shared array (global_asm! + cvta.shared, not the global fallback).
        assert artifact.extra["tile_memory"] == "shared"
        assert ptx.check_with_ptxas(ptxas, file, arch, os.environ) == "accepted"
        assert f".target {arch}" in file.read_text()


def test_build_result_lists_the_artifacts_and_the_cuda_feature(cuda_ws: Path) -> None:
    result = json.loads((cuda_ws / "build-result.json").read_text())
    assert result["ok"] and result["features"] == ["cpu", "cuda"]
    assert sorted(a["target"] for a in result["artifacts"]) == list(ARCHS)
    assert Path(result["binary"]).is_file()


@no_gpu_here
def test_backend_cuda_without_a_gpu_says_why(cuda_ws: Path) -> None:
    binary = json.loads((cuda_ws / "build-result.json").read_text())["binary"]
    proc = subprocess.run(
        [binary, "--backend", "cuda", "--len", "1000"], capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "cuda backend unavailable: no CUDA driver found" in proc.stderr
    assert "panicked" not in proc.stderr


@no_gpu_here
def test_backend_auto_falls_back_to_the_cpu_with_a_notice(cuda_ws: Path) -> None:
    binary = json.loads((cuda_ws / "build-result.json").read_text())["binary"]
    proc = subprocess.run(
        [binary, "--backend", "auto", "--len", "5000", "--verify"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "notice: cuda backend unavailable" in proc.stderr
    assert "notice: --backend auto chose cpu" in proc.stderr
    assert "verified: identical to Rust's sort" in proc.stdout


def test_host_with_every_backend_is_clippy_clean(cuda_ws: Path) -> None:
    env = dict(os.environ, RGPU_MANIFEST=str(cuda_ws / "target" / "rgpu" / "manifest.json"))
    proc = subprocess.run(
        ["cargo", "clippy", "--release", "--all-targets", "--features", "cpu,cuda,wgpu,ash",
         "--", "-D", "warnings"],
        cwd=cuda_ws, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_rgpu_test_runs_parity_for_the_built_backends(cuda_ws: Path) -> None:
    proc = run_rgpu("test", cwd=cuda_ws)
    assert "--features cudademo/cpu,cudademo/cuda" in proc.stderr
    assert "test every_built_backend_matches_rusts_sort ... ok" in proc.stdout
    # The same test binary again (already built), uncaptured, to see what it did per backend.
    env = dict(os.environ, RGPU_MANIFEST=str(cuda_ws / "target" / "rgpu" / "manifest.json"))
    parity = subprocess.run(
        ["cargo", "test", "--release", "--features", "cpu,cuda", "--test", "parity", "--",
         "--nocapture", "every_built_backend"],
        cwd=cuda_ws, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert parity.returncode == 0, parity.stderr[-4000:]
    assert "PASSED cpu" in parity.stderr
    marker = "PASSED cuda" if has_nvidia_gpu() else "SKIPPED cuda: cuda backend unavailable"
    assert marker in parity.stderr


def test_external_ptx_is_checked_and_recorded(cuda_ws: Path, tmp_path: Path) -> None:
    built = cuda_ws / "target" / "rgpu" / "cudademo_kernel-sm_80.ptx"
    good = tmp_path / "from-ci-sm_80.ptx"
    good.write_bytes(built.read_bytes())
    bad = tmp_path / "broken.ptx"
    bad.write_text(built.read_text().replace("ret;", "not_an_instruction;", 1))
    proc = run_rgpu("build", "--backend", "cuda", "--kernel-artifact", str(bad), cwd=cuda_ws,
                    check=False)  # fmt: skip
    assert proc.returncode == ExitCode.ARTIFACT, proc.stderr
    assert "ptxas rejected" in proc.stderr
    run_rgpu("build", "--backend", "cuda", "--kernel-artifact", str(good), cwd=cuda_ws)
    (artifact,) = read_manifest(cuda_ws / "target" / "rgpu")
    assert artifact.codegen == "external" and artifact.source == str(good.resolve())
    assert artifact.target == "sm_80" and artifact.path == "external/from-ci-sm_80.ptx"
    # Back to the workspace's own build for the tests that run after this one.
    run_rgpu("build", "--backend", "cuda", cwd=cuda_ws)
