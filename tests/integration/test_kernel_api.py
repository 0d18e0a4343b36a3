"""The kernel API (issue 13) as a user meets it: one new `#[rgpu::kernel]` function and one
launch call, added to a workspace `rgpu new` made, run on every backend this machine has.

- SAXPY: on the cpu (`rgpu test --backend cpu`), built for CUDA (rgpu's nvptx codegen; the
  PTX through ptxas), and launched on wgpu and ash on Mesa lavapipe. For the Vulkan hosts
  the SPIR-V is the GLSL FIXTURE twin of the kernel (tests/fixtures/spirv/saxpy_fixture.comp,
  the interface the kernel attribute generates) linked with the bitonic FIXTURE: rust-gpu
  itself is run by tests/integration/test_rust_gpu.py. Every backend's y is compared with
  the cpu backend's, and both with the exact answer.
- A plain `cargo test` embeds what `rgpu build` made, and a launch whose kernel was not
  built names the command that builds it.
- A kernel that calls a third-party `no_std` crate (libm) builds for the cpu and CUDA with
  one line added to the kernel crate's Cargo.toml.
- `rgpu::unroll!` (both forms) in a user kernel of that same workspace, run on the cpu and
  built for CUDA; a count it cannot take is a compile error that says what to write instead.

The workspaces are module-scoped and built once (2 cores: every host build is minutes cold).
"""

from __future__ import annotations

import math
import os
import re
import struct
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from rgpu.artifacts.manifest import read_manifest
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import REPO, TARGET_DIR, run_rgpu
from tests.integration.conftest import LAVAPIPE, assemble
from tests.saxpy import SAXPY_CALL, SAXPY_KERNEL, add_saxpy, floats, saxpy_expected, user_lines
from tests.spirv_fixture import ALL_ENTRY_POINTS, compile_bitonic_and_saxpy

ALL_FEATURES = "cuda,wgpu,ash"


def cargo(
    ws: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Plain cargo in the workspace, sharing the suite's target directory."""
    return subprocess.run(
        ["cargo", *args],
        cwd=ws,
        env={**os.environ, "CARGO_TARGET_DIR": str(TARGET_DIR), **(env or {})},
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )


def saxpy_test(ws: Path, out: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """`cargo test --test saxpy` with every backend feature, as a user would run it."""
    return cargo(
        ws, "test", "--release", "--features", ALL_FEATURES, "--test", "saxpy", "--",
        "--nocapture", env={"SAXPY_OUT": str(out), **env},
    )  # fmt: skip


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("kapi")
    run_rgpu("new", "kapidemo", "--dir", str(parent))
    ws = parent / "kapidemo"
    add_saxpy(ws)
    return ws


@pytest.fixture(scope="module")
def cpu_run(ws: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = ws / "saxpy-out" / "y"
    out.parent.mkdir()
    result = run_rgpu("test", "--backend", "cpu", cwd=ws, env={"SAXPY_OUT": str(out)})
    return result, out


@pytest.fixture(scope="module")
def cuda_built(ws: Path, cpu_run: object) -> Path:
    run_rgpu("build", "--backend", "cuda", cwd=ws)
    return ws


@pytest.fixture(scope="module")
def vulkan_runs(
    cuda_built: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str] | Path]:
    """Plain `cargo test` with the Vulkan features before and after `rgpu build --backend
    wgpu,ash --kernel-artifact FIXTURE`."""
    ws = cuda_built
    out = ws / "saxpy-out" / "y"
    before = saxpy_test(ws, out, {**LAVAPIPE, "RGPU_TEST_BACKENDS": "wgpu,ash"})
    spv = compile_bitonic_and_saxpy(tmp_path_factory.mktemp("saxpy-fixture"))
    run_rgpu("build", "--backend", "wgpu,ash", "--kernel-artifact", str(spv), cwd=ws)
    after = saxpy_test(ws, out, {**LAVAPIPE, "RGPU_REQUIRE_BACKENDS": "wgpu,ash"})
    return {"before": before, "after": after, "out": out, "fixture": spv}


def test_the_user_code_for_kernel_and_call_is_at_most_ten_lines(ws: Path) -> None:
    lines = user_lines(SAXPY_KERNEL) + user_lines(SAXPY_CALL)
    assert len(lines) <= 10, lines
    assert len(lines) == 5  # attribute, signature, body, brace; the call
    # The counted code is the code that runs.
    assert (ws / "kernel" / "src" / "lib.rs").read_text().endswith(SAXPY_KERNEL)
    assert (ws / "tests" / "saxpy.rs").read_text().count("kernel::saxpy(") == 1


def test_saxpy_runs_on_the_cpu(cpu_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    result, out = cpu_run
    # rgpu test's per-backend summary: the demo's parity test and the new one, on the cpu.
    summary = result.stderr + result.stdout
    assert re.search(r"passed\s+cpu: parity, parity-radix, saxpy", summary), summary
    assert floats(out.with_name("y.cpu")) == saxpy_expected()


def test_saxpy_builds_for_cuda_and_ptxas_accepts_the_ptx(cuda_built: Path) -> None:
    kernels = cuda_built / "target" / "rgpu" / "kernels"
    artifacts = [a for a in read_manifest(kernels) if a.kind == "ptx"]
    assert sorted(a.target for a in artifacts) == ["sm_75", "sm_80", "sm_90"]
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    for artifact in artifacts:
        assert artifact.codegen == "nvptx"
        assert "saxpy" in artifact.entry_points
        assert artifact.extra["ptxas"] == "accepted"  # rgpu ran ptxas in the build
        file = kernels / artifact.path
        text = file.read_text()
        # The entry point, with the launch's params block by value ({count, len_0, len_1, a}:
        # 16 bytes) and the two buffers as pointers.
        entry = re.search(r"\.visible \.entry saxpy\((.*?)\)", text, re.S)
        assert entry is not None, "no .entry saxpy in the PTX"
        params = entry.group(1)
        assert re.search(r"\.param \.align 4 \.b8 saxpy_param_0\[16\]", params), params
        assert params.count(".param .u64") == 2, params
        # And ptxas, run here again, on this file for its arch.
        assemble(ptxas, file, artifact.target)


def test_a_launch_whose_kernels_were_not_built_says_which_build_to_run(
    vulkan_runs: dict[str, subprocess.CompletedProcess[str] | Path],
) -> None:
    """Built with the wgpu and ash features by plain cargo, before any SPIR-V was built."""
    before = vulkan_runs["before"]
    assert isinstance(before, subprocess.CompletedProcess)
    assert before.returncode != 0
    text = before.stdout + before.stderr
    for backend in ("wgpu", "ash"):
        assert (
            f"{backend}: kernel `saxpy` has no SPIR-V in this binary (none of its 0 SPIR-V "
            f"modules has the entry point `saxpy`): run rgpu build --backend {backend}"
        ) in text, text
    # The test fails with those words (each_backend's verdict), not with a crash.
    assert "test saxpy ... FAILED" in before.stdout
    assert text.count("panicked at") == 1 and "rgpu-runtime/src/testing.rs" in text


def test_saxpy_on_wgpu_and_ash_matches_the_cpu(
    vulkan_runs: dict[str, subprocess.CompletedProcess[str] | Path],
    cpu_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    """A plain `cargo test` after `rgpu build` embeds the kernels and runs them on lavapipe."""
    after, out = vulkan_runs["after"], vulkan_runs["out"]
    assert isinstance(after, subprocess.CompletedProcess) and isinstance(out, Path)
    assert after.returncode == 0, after.stdout + after.stderr
    for backend in ("wgpu", "ash"):
        assert re.search(rf"PASSED {backend} \(saxpy\) on llvmpipe", after.stderr), after.stderr
    cpu = cpu_run[1].with_name("y.cpu").read_bytes()
    for backend in ("wgpu", "ash", "cpu"):
        assert out.with_name(f"y.{backend}").read_bytes() == cpu, backend
    assert floats(out.with_name("y.wgpu")) == saxpy_expected()


def test_the_manifest_embeds_ptx_and_the_spirv_fixture(
    vulkan_runs: dict[str, subprocess.CompletedProcess[str] | Path], cuda_built: Path
) -> None:
    built = read_manifest(cuda_built / "target" / "rgpu" / "kernels")
    spirv = [a for a in built if a.kind == "spirv"]
    assert len(spirv) == 1 and spirv[0].codegen == "external"  # the FIXTURE, not rust-gpu
    assert spirv[0].source == str(Path(str(vulkan_runs["fixture"])).resolve())
    assert sorted(spirv[0].entry_points) == sorted([*ALL_ENTRY_POINTS, "saxpy"])
    assert sorted(a.target for a in built if a.kind == "ptx") == ["sm_75", "sm_80", "sm_90"]


# --- a third-party no_std crate in a kernel ---------------------------------------------

LIBM_LINE = 'libm = "0.2"'
# The kernels are real files, which the portability corpus includes too (tests/corpus_table.py).
NORM_KERNEL = (REPO / "tests" / "kernels" / "norm.rs").read_text(encoding="utf-8")
NORM_TEST = """\
#[test]
fn norm() {
    rgpu::testing::each_backend("norm", |device| {
        let x: Vec<f32> = (0..5000).map(|i| (i % 97) as f32).collect();
        let y: Vec<f32> = (0..5000).map(|i| (i % 89) as f32 - 40.0).collect();
        let mut out = vec![0.0f32; 5000];
        kernel::norm(device, 5000, &x, &y, &mut out).map_err(|e| e.to_string())?;
        let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = std::env::var("NORM_OUT").map_err(|e| e.to_string())?;
        std::fs::write(format!("{path}.{}", device.backend()), bytes).map_err(|e| e.to_string())
    });
}
"""


UNROLL_KERNEL = (REPO / "tests" / "kernels" / "unrolled.rs").read_text(encoding="utf-8")
UNROLL_TEST = """\
#[test]
fn unrolled() {
    rgpu::testing::each_backend("unrolled", |device| {
        let mut out = vec![0u32; 5000];
        kernel::unrolled(device, 5000, &mut out).map_err(|e| e.to_string())?;
        let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = std::env::var("UNROLL_OUT").map_err(|e| e.to_string())?;
        std::fs::write(format!("{path}.{}", device.backend()), bytes).map_err(|e| e.to_string())
    });
}
"""


def f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


@pytest.fixture(scope="module")
def libm_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("kapi-libm")
    run_rgpu("new", "kapimath", "--dir", str(parent))
    ws = parent / "kapimath"
    manifest = ws / "kernel" / "Cargo.toml"
    before = manifest.read_text()
    manifest.write_text(before.replace("[dependencies]\n", f"[dependencies]\n{LIBM_LINE}\n", 1))
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n" + NORM_KERNEL + "\n" + UNROLL_KERNEL)
    (ws / "tests" / "norm.rs").write_text(NORM_TEST)
    (ws / "tests" / "unrolled.rs").write_text(UNROLL_TEST)
    run_rgpu("build", "--backend", "cuda", cwd=ws)
    return ws


def test_the_libm_dependency_is_one_line(libm_ws: Path) -> None:
    manifest = (libm_ws / "kernel" / "Cargo.toml").read_text().splitlines()
    assert manifest.count(LIBM_LINE) == 1
    assert [ln for ln in manifest if "libm" in ln] == [LIBM_LINE]


@pytest.fixture(scope="module")
def libm_cpu_test(libm_ws: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`rgpu test --backend cpu` of the workspace once: its norm and unrolled outputs."""
    env = {"NORM_OUT": str(libm_ws / "norm-out"), "UNROLL_OUT": str(libm_ws / "unroll-out")}
    return run_rgpu("test", "--backend", "cpu", cwd=libm_ws, env=env), libm_ws


def test_a_kernel_calling_libm_runs_on_the_cpu(
    libm_cpu_test: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    result, ws = libm_cpu_test
    out = ws / "norm-out"
    summary = result.stderr + result.stdout
    assert re.search(r"passed\s+cpu: norm, parity, parity-radix, unrolled", summary), summary
    got = floats(out.with_name("norm-out.cpu"))
    # sqrt of an exact f32 sum, rounded once to f32: what sqrtf must return.
    want = [f32(math.sqrt((i % 97) ** 2 + ((i % 89) - 40) ** 2)) for i in range(5000)]
    assert got == want


def test_a_kernel_calling_libm_builds_for_cuda_through_ptxas(libm_ws: Path) -> None:
    kernels = libm_ws / "target" / "rgpu" / "kernels"
    artifacts = [a for a in read_manifest(kernels) if a.kind == "ptx"]
    assert artifacts
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    for artifact in artifacts:
        assert "norm" in artifact.entry_points
        assert artifact.extra["ptxas"] == "accepted"
        file = kernels / artifact.path
        assert re.search(r"\.visible \.entry norm\(", file.read_text())
        assemble(ptxas, file, artifact.target)


# --- rgpu::unroll! in a user kernel (the same workspace) --------------------------------


def test_an_unrolled_kernel_runs_on_the_cpu_and_builds_for_cuda(
    libm_cpu_test: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, ws = libm_cpu_test
    got = struct.unpack("<5000I", (ws / "unroll-out.cpu").read_bytes())
    assert list(got) == [(7723 * i) % 2**32 for i in range(5000)]
    kernels = ws / "target" / "rgpu" / "kernels"
    ptx = [a for a in read_manifest(kernels) if a.kind == "ptx"]
    assert ptx and all("unrolled" in a.entry_points for a in ptx)


def test_an_unroll_count_it_cannot_take_says_what_to_write_instead(libm_ws: Path) -> None:
    lib = libm_ws / "kernel" / "src" / "lib.rs"
    before = lib.read_text()
    bad = "pub fn too_many(a: &mut [u32; 40]) {\n    rgpu::unroll!(J in 0..40 => { a[J] = 1 });\n}"
    lib.write_text(before + "\n" + bad)
    try:
        result = cargo(libm_ws, "check", "--release", "-p", "kapimath-kernel")
    finally:
        lib.write_text(before)
    assert result.returncode != 0
    assert (
        "rgpu::unroll!(J in 0..40): the count must be an integer literal from 1 to 32; "
        "for others list the values: `J in [0, 1, ..]`" in result.stderr
    ), result.stderr
