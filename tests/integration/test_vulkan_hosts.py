"""The wgpu and ash hosts on Mesa lavapipe (Vulkan on the CPU), with the SPIR-V FIXTURE.

rust-gpu cannot run here, so the kernel artifact is the GLSL twin of the Rust entry points
(tests/fixtures/spirv/bitonic_fixture.comp and radix_fixture.comp, named test fixtures, linked
into one module by tests/spirv_fixture.py), compiled at test time and
embedded with `rgpu build --kernel-artifact`. What these tests prove is the host side: the
runners, push constants, dispatch sizes, the embed path and the errors, on a real Vulkan
driver. They do not prove rust-gpu's output (see tests/unit/test_spirv_codegen.py).

wgpu is a heavy compile: one workspace is built once, with both hosts, for the module.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TARGET_DIR, run_rgpu
from tests.spirv_fixture import ALL_ENTRY_POINTS, compile_fixture

LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
LAVAPIPE = {"VK_ICD_FILENAMES": LAVAPIPE_ICD, "VK_DRIVER_FILES": LAVAPIPE_ICD}
NO_DRIVER = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent"}


@pytest.fixture(scope="module")
def fixture_spv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_fixture(tmp_path_factory.mktemp("spirv-fixture"))


@pytest.fixture(scope="module")
def vulkan_ws(tmp_path_factory: pytest.TempPathFactory, fixture_spv: Path) -> Iterator[Path]:
    parent = tmp_path_factory.mktemp("vk")
    run_rgpu("new", "vkdemo", "--dir", str(parent))
    ws = parent / "vkdemo"
    run_rgpu("build", "--backend", "wgpu,ash", "--kernel-artifact", str(fixture_spv), cwd=ws)
    yield ws


def binary(ws: Path) -> Path:
    return TARGET_DIR / "release" / ws.name


def demo(ws: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary(ws)), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_spirv_val_accepts_the_fixture(fixture_spv: Path) -> None:
    proc = subprocess.run(
        ["spirv-val", "--target-env", "vulkan1.2", str(fixture_spv)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_fixture_binary_has_the_declared_interface(fixture_spv: Path) -> None:
    dis = subprocess.run(
        ["spirv-dis", str(fixture_spv)], capture_output=True, text=True, check=True
    ).stdout
    for entry in ALL_ENTRY_POINTS:
        assert f'OpEntryPoint GLCompute %{entry} "{entry}"' in dis
        assert f"OpExecutionMode %{entry} LocalSize 256 1 1" in dis
    for member, offset in enumerate((0, 4, 8, 12)):
        assert f"OpMemberDecorate %SortParams {member} Offset {offset}" in dis
    assert "OpDecorate %_ DescriptorSet 0" in dis and "OpDecorate %_ Binding 0" in dis
    # The tile entry point's workgroup array: TILE_KEYS (4096) u32s.
    assert "OpTypeArray %uint %uint_4096" in dis and "Workgroup" in dis


def test_the_manifest_records_the_fixture_as_external(vulkan_ws: Path, fixture_spv: Path) -> None:
    manifest = json.loads((vulkan_ws / "target/rgpu/manifest.json").read_text())
    (artifact,) = manifest["artifacts"]
    assert artifact["codegen"] == "external"
    assert artifact["source"] == str(fixture_spv.resolve())
    assert artifact["extra"]["spirv_val"] is True
    assert sorted(artifact["entry_points"]) == sorted(ALL_ENTRY_POINTS)


def test_both_hosts_match_rusts_sort_on_lavapipe(vulkan_ws: Path) -> None:
    """tests/parity.rs: all key types, both orders, edge sizes; a backend that cannot open
    fails instead of printing SKIPPED (RGPU_REQUIRE_BACKENDS)."""
    env = {**LAVAPIPE, "RGPU_REQUIRE_BACKENDS": "wgpu,ash", "RGPU_PARITY_MAX_LEN": "65536"}
    run_rgpu("test", cwd=vulkan_ws, env=env)


@pytest.mark.parametrize("backend", ["wgpu", "ash"])
def test_the_demo_reports_the_vulkan_device(vulkan_ws: Path, backend: str) -> None:
    proc = demo(
        vulkan_ws, "--backend", backend, "--len", "5000", "--type", "f32", "--verify", env=LAVAPIPE
    )
    assert proc.returncode == 0, proc.stderr
    assert f"on {backend} [llvmpipe" in proc.stdout
    assert "driver llvmpipe" in proc.stdout
    assert "verified: identical to Rust's sort" in proc.stdout


def test_wgpu_through_nagas_spirv_frontend(vulkan_ws: Path) -> None:
    env = {**LAVAPIPE, "RGPU_WGPU_SHADER": "naga"}
    proc = demo(
        vulkan_ws,
        "--backend",
        "wgpu",
        "--len",
        "3001",
        "--type",
        "i32",
        "--order",
        "desc",
        "--verify",
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "SPIR-V via naga" in proc.stdout


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        ("wgpu", "wgpu backend unavailable: no Vulkan, Metal or DX12 adapter"),
        ("ash", "ash backend unavailable: no Vulkan driver"),
    ],
)
def test_no_driver_is_a_clear_error_not_a_panic(
    vulkan_ws: Path, backend: str, message: str
) -> None:
    proc = demo(vulkan_ws, "--backend", backend, "--len", "100", env=NO_DRIVER)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "panicked" not in proc.stderr


def test_auto_falls_back_to_the_cpu_without_a_driver(vulkan_ws: Path) -> None:
    proc = demo(vulkan_ws, "--backend", "auto", "--len", "100", "--verify", env=NO_DRIVER)
    assert proc.returncode == 0, proc.stderr
    assert "on cpu [" in proc.stdout


def test_a_module_spirv_val_rejects_is_refused(
    vulkan_ws: Path, tmp_path: Path, fixture_spv: Path
) -> None:
    data = bytearray(fixture_spv.read_bytes())
    data[8:12] = (0xFFFFFFFF).to_bytes(4, "little")  # id bound: too small for the module's ids
    data[12:16] = (1).to_bytes(4, "little")
    bad = tmp_path / "bad.spv"
    bad.write_bytes(bytes(data))
    proc = run_rgpu(
        "build", "--backend", "ash", "--kernel-artifact", str(bad), cwd=vulkan_ws, check=False
    )
    assert proc.returncode == 10, proc.stderr  # ExitCode.ARTIFACT
    assert "spirv-val rejects" in proc.stderr


def test_an_unknown_artifact_kind_is_a_usage_error(vulkan_ws: Path, tmp_path: Path) -> None:
    odd = tmp_path / "kernel.bin"
    odd.write_bytes(b"\0" * 32)
    proc = run_rgpu(
        "build", "--backend", "ash", "--kernel-artifact", str(odd), cwd=vulkan_ws, check=False
    )
    assert proc.returncode == 2
    assert "unknown kind of kernel artifact" in proc.stderr
