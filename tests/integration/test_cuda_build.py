"""`rgpu build --backend cuda` for real, on a machine without a GPU: PTX for three archs by
the nvptx codegen (rustc's nvptx64-nvidia-cuda, system toolchain here), each accepted by
ptxas, listed with its hash in target/rgpu/kernels/manifest.json, the host built with the
cuda feature, and the binary's answers when no driver is there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.artifacts.kernels import find
from rgpu.artifacts.manifest import sha256_file
from rgpu.artifacts.ptx import check_with_ptxas
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import has_nvidia_gpu, run_rgpu
from tests.corpus_table import SORT_KERNELS, primitives_kernels
from tests.integration.conftest import (
    CUDA_ARCHS,
    binary,
    kernels_dir,
    manifest_of,
    ptx_of,
    python_without_ptxas,
)
from tests.spirv_fixture import ALL_ENTRY_POINTS

no_gpu_here = pytest.mark.skipif(has_nvidia_gpu(), reason="checks the answers without a GPU")


def test_ptx_for_three_archs_each_accepted_by_ptxas(cuda_ws: Path) -> None:
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    built = {a.target: a for a in ptx_of(cuda_ws)}
    assert tuple(sorted(built)) == CUDA_ARCHS
    kernels = find(cuda_ws / "kernel")  # the #[rgpu::kernel] functions of the source
    assert kernels == tuple(sorted(SORT_KERNELS))
    # The PTX holds them and rgpu-primitives' (the demo's radix sort), which the kernel
    # crate depends on.
    linked = tuple(sorted({*kernels, *primitives_kernels()}))
    assert set(ALL_ENTRY_POINTS) <= set(linked)
    for arch, artifact in built.items():
        file = kernels_dir(cuda_ws) / artifact.path
        assert file.name == f"cudademo_kernel-{arch}.ptx"
        assert artifact.codegen == "nvptx" and artifact.source == "built"
        assert artifact.sha256 == sha256_file(file) and artifact.size == file.stat().st_size
        assert tuple(sorted(artifact.entry_points)) == linked
        assert artifact.extra["ptxas"] == "accepted"
        text = file.read_text(encoding="utf-8")
        assert f".target {arch}" in text
        # The tile kernel's workgroup array is real shared memory.
        assert ".shared .align 16 .b8 rgpu_shared_bitonic_tile" in text
        assert check_with_ptxas(ptxas, file, arch, os.environ, str(file)) == "accepted"
    # The kernels directory holds the artifacts and their manifest, nothing else.
    assert sorted(p.name for p in kernels_dir(cuda_ws).iterdir()) == sorted(
        [*(a.path for a in manifest_of(cuda_ws)), "manifest.json"]
    )


def test_each_archs_sass_is_embedded_beside_its_ptx(cuda_ws: Path, tmp_path: Path) -> None:
    """The cubin is what ptxas makes of the listed PTX for that arch (its check wrote it),
    byte for byte, so a build from nothing embeds the same one."""
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    ptx = {a.target: a for a in ptx_of(cuda_ws)}
    cubins = {a.target: a for a in manifest_of(cuda_ws) if a.kind == "cubin"}
    assert tuple(sorted(cubins)) == CUDA_ARCHS
    for arch, cubin in cubins.items():
        file = kernels_dir(cuda_ws) / cubin.path
        assert file.name == f"cudademo_kernel-{arch}.cubin"
        assert (cubin.codegen, cubin.source) == ("nvptx", "built")
        assert cubin.entry_points == ptx[arch].entry_points
        assert cubin.extra["ptx"] == ptx[arch].path
        assert cubin.extra["ptx_sha256"] == ptx[arch].sha256
        assert "release" in cubin.extra["ptxas"]
        assert cubin.sha256 == sha256_file(file) and file.read_bytes()[:4] == b"\x7fELF"
        again = tmp_path / f"{arch}.cubin"
        ptx_file = kernels_dir(cuda_ws) / ptx[arch].path
        assert check_with_ptxas(ptxas, ptx_file, arch, os.environ, "", again) == "accepted"
        assert again.read_bytes() == file.read_bytes()


def test_build_json_lists_backends_features_artifacts_and_the_binary(cuda_ws: Path) -> None:
    result = json.loads(run_rgpu("build", "--backend", "cuda", "--json", cwd=cuda_ws).stdout)
    assert result["ok"] is True and result["dry_run"] is False
    assert result["backends"] == ["cuda"]  # cpu is always built in, never listed
    assert result["features"] == ["cudademo-kernel/cuda"]
    programs = {t["name"]: t for t in result["targets"]}
    assert Path(programs["cudademo"]["path"]) == binary(cuda_ws)
    assert binary(cuda_ws).is_file()


@no_gpu_here
def test_backend_cuda_without_a_gpu_says_why(cuda_ws: Path) -> None:
    proc = subprocess.run(
        [binary(cuda_ws), "--backend", "cuda", "--len", "1000"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "error: cuda backend unavailable: no CUDA driver found" in proc.stderr
    assert "panicked" not in proc.stderr


@no_gpu_here
def test_backend_auto_falls_back_to_the_cpu_with_a_notice(cuda_ws: Path) -> None:
    proc = subprocess.run(
        [binary(cuda_ws), "--backend", "auto", "--len", "5000", "--verify"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "notice: cuda: no CUDA driver found" in proc.stderr
    assert "notice: sorting on cpu" in proc.stderr
    assert "verified: identical to Rust's sort" in proc.stdout


def test_rgpu_ci_check_ptx_accepts_what_the_build_wrote(cuda_ws: Path) -> None:
    proc = run_rgpu("ci", "check-ptx", "-C", str(cuda_ws))
    for arch in CUDA_ARCHS:
        assert f"cudademo_kernel-{arch}.ptx ({arch})" in proc.stderr
    assert "rejected" not in proc.stderr


def test_without_ptxas_the_ptx_is_embedded_alone_and_the_build_says_so(
    cuda_ws: Path, tmp_path: Path
) -> None:
    """No ptxas on PATH, in a wheel or under CUDA_PATH: each PTX comes without SASS (and
    unchecked), and the build warns that the driver will JIT-compile it."""
    python = python_without_ptxas(tmp_path)
    ws = tmp_path / "copy"
    shutil.copytree(cuda_ws, ws, symlinks=True)
    path = os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "ptxas").exists()
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_PATH", "CUDA_HOME")}
    env["PATH"] = path
    none = "import os, rgpu.toolchains.tools as t; assert t.find_ptxas(os.environ) is None"
    assert subprocess.run([str(python), "-c", none], env=env).returncode == 0
    built = subprocess.run([str(python), "-m", "rgpu", "build", "--backend", "cuda"], cwd=ws,
                           env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "ptxas not found: PTX not checked and no SASS (cubin) built" in built.stderr
    assert "`rgpu build --backend cuda --yes`" in built.stderr
    for arch in CUDA_ARCHS:
        assert f"cudademo_kernel-{arch}.ptx: ptxas check not run: no ptxas found; no SASS " \
               f"for {arch}: the CUDA driver JIT-compiles the PTX" in built.stderr  # fmt: skip
    assert sorted(a.kind for a in manifest_of(ws)) == ["ptx"] * len(CUDA_ARCHS)
    assert not list(kernels_dir(ws).glob("*.cubin"))
