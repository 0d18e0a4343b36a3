"""The bitonic demo's wgpu and ash hosts on Mesa lavapipe (Vulkan on the CPU), with the SPIR-V
FIXTURE.

The kernel artifact here is the GLSL twin of the demo's `#[rgpu::kernel]` functions
(tests/fixtures/spirv/bitonic_fixture.comp and radix_fixture.comp: the interface the kernel
attribute generates, linked into one module by tests/spirv_fixture.py), compiled at test time and
embedded with `rgpu build --kernel-artifact`. What these tests prove is the host side through the
kernel API: the generated launchers, push constants, bindings, dispatch sizes, the embed path and
the errors, on a real Vulkan driver. rust-gpu's own SPIR-V of the same kernels is built and run by
tests/integration/test_rust_gpu.py.

wgpu is a heavy compile: one workspace is built once, with both hosts, for the module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from rgpu.artifacts.manifest import read_manifest
from rgpu.errors import ExitCode
from tests.conftest import TARGET_DIR, run_rgpu
from tests.integration.conftest import LAVAPIPE
from tests.spirv_fixture import ALL_ENTRY_POINTS, ENTRY_POINTS, compile_fixture, interface

NO_DRIVER = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent"}
KEY_TYPES = ("u32", "i32", "f32")
ORDERS = ("asc", "desc")
# tests/parity.rs sorts its edge sizes (0..3, 1000, 2047..2049, 4095, 4097, 2^16, 2^20 + 7)
# for every type and order; 2^24 (its GPU-only size) takes minutes per sort on lavapipe.
PARITY_MAX_LEN = (1 << 20) + 7


@pytest.fixture(scope="module")
def fixture_spv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_fixture(tmp_path_factory.mktemp("spirv-fixture"))


@pytest.fixture(scope="module")
def vulkan_ws(tmp_path_factory: pytest.TempPathFactory, fixture_spv: Path) -> Path:
    parent = tmp_path_factory.mktemp("vk")
    run_rgpu("new", "vkdemo", "--dir", str(parent))
    ws = parent / "vkdemo"
    result = run_rgpu(
        "build", "--backend", "wgpu,ash", "--kernel-artifact", str(fixture_spv), "--json", cwd=ws
    )
    (ws / "build-result.json").write_text(result.stdout)
    return ws


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


def test_the_fixture_has_the_kernel_attributes_interface(fixture_spv: Path) -> None:
    dis = subprocess.run(
        ["spirv-dis", str(fixture_spv)], capture_output=True, text=True, check=True
    ).stdout
    for entry in ALL_ENTRY_POINTS:
        assert f'OpEntryPoint GLCompute %{entry} "{entry}"' in dis
        assert f"OpExecutionMode %{entry} LocalSize 256 1 1" in dis
    # The launch's params struct as the push constant block: count, len_0, then SortParams'
    # four u32 fields (len, block, distance, key_order), 4 bytes apart.
    for entry in ("bitonic_tile", "bitonic_global"):
        push = interface(fixture_spv, entry)["push_constant"]
        assert push == [(offset, "u32") for offset in (0, 4, 8, 12, 16, 20)], push
    assert "OpDecorate %_ DescriptorSet 0" in dis and "OpDecorate %_ Binding 0" in dis
    # The tile entry point's workgroup array: TILE_KEYS (4096) u32s.
    assert "OpTypeArray %uint %uint_4096" in dis and "Workgroup" in dis


def test_the_build_embeds_the_fixture_as_external(vulkan_ws: Path, fixture_spv: Path) -> None:
    result = json.loads((vulkan_ws / "build-result.json").read_text())
    assert result["ok"] and result["backends"] == ["wgpu", "ash"]
    (artifact,) = read_manifest(vulkan_ws / "target" / "rgpu" / "kernels")
    assert artifact.kind == "spirv" and artifact.codegen == "external"
    assert artifact.source == str(fixture_spv.resolve())
    assert artifact.extra["spirv_val"] == "accepted"
    assert sorted(artifact.entry_points) == sorted(ALL_ENTRY_POINTS)
    assert binary(vulkan_ws).is_file()


def test_both_hosts_match_rusts_sort_on_lavapipe(vulkan_ws: Path) -> None:
    """tests/parity.rs on wgpu and ash: every key type and order, the edge sizes up to
    2^20 + 7; `--backend` makes a backend that cannot open fail instead of skip."""
    env = {**LAVAPIPE, "RGPU_PARITY_MAX_LEN": str(PARITY_MAX_LEN)}
    result = run_rgpu("test", "--backend", "wgpu,ash", cwd=vulkan_ws, env=env, timeout=3600)
    summary = result.stdout + result.stderr
    for backend in ("wgpu", "ash"):
        assert re.search(rf"passed\s+{backend}: parity\b", summary), summary


@pytest.mark.parametrize("backend", ["wgpu", "ash"])
@pytest.mark.parametrize("key_type", KEY_TYPES)
@pytest.mark.parametrize("algorithm", ["bitonic", "radix"])
def test_the_demo_sorts_each_type_and_order_on_lavapipe(
    vulkan_ws: Path, backend: str, key_type: str, algorithm: str
) -> None:
    for order in ORDERS:
        proc = demo(vulkan_ws, "--backend", backend, "--algorithm", algorithm, "--len", "4097",
                    "--type", key_type, "--order", order, "--verify", "--json",
                    env=LAVAPIPE)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert result["backend"] == backend and result["len"] == 4097
        assert result["algorithm"] == algorithm
        assert result["sorted"] is True and result["verified"] is True
        assert result["device_ms"] is not None and result["device_ms"] > 0


@pytest.mark.parametrize("backend", ["wgpu", "ash"])
def test_bench_json_adds_lavapipes_subgroup_size_and_why_it_has_no_kernel_stats(
    vulkan_ws: Path, backend: str
) -> None:
    """`--bench --json` keeps the plain JSON's keys and adds `device_facts` (lavapipe:
    subgroups of 8, vulkaninfo's subgroupSize = min = max = 8; no core count) and why there
    are no kernel statistics: wgpu has no API for them, lavapipe lacks the Vulkan extension."""
    args = ("--backend", backend, "--algorithm", "radix", "--len", "4097", "--json")
    plain = demo(vulkan_ws, *args, env=LAVAPIPE)
    proc = demo(vulkan_ws, *args, "--bench", env=LAVAPIPE)
    assert plain.returncode == 0 and proc.returncode == 0, plain.stderr + proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) - set(json.loads(plain.stdout)) == {
        "device_facts", "kernel_stats", "kernel_stats_unavailable"
    }  # fmt: skip
    assert result["sorted"] is True and result["device_ms"] > 0
    facts = result["device_facts"]
    assert (facts["subgroup_size"], facts["subgroup_min"], facts["subgroup_max"]) == (8, 8, 8)
    assert facts["compute_units"] is None and facts["compute_unit"] == ""
    assert result["kernel_stats"] is None
    reason = result["kernel_stats_unavailable"]
    if backend == "wgpu":
        assert reason.startswith("wgpu: no per-kernel statistics: wgpu 30 has no API"), reason
    else:
        assert reason.startswith(
            "ash: no per-kernel statistics: the Vulkan driver 'llvmpipe' lacks "
            "VK_KHR_pipeline_executable_properties"
        ), reason


@pytest.mark.parametrize("backend", ["wgpu", "ash"])
def test_the_demo_reports_the_vulkan_device(vulkan_ws: Path, backend: str) -> None:
    proc = demo(
        vulkan_ws, "--backend", backend, "--len", "5000", "--type", "f32", "--verify", env=LAVAPIPE
    )
    assert proc.returncode == 0, proc.stderr
    assert f"on {backend} [llvmpipe" in proc.stdout
    assert "driver llvmpipe" in proc.stdout
    assert "verified: identical to Rust's sort" in proc.stdout


def test_the_benchmark_times_each_radix_kernel_on_lavapipe(vulkan_ws: Path) -> None:
    env = {**LAVAPIPE, "BENCH_BACKENDS": "ash", "BENCH_ALGORITHMS": "radix"}
    env |= {"BENCH_SIZES": "12", "BENCH_PHASES": "1"}
    proc = subprocess.run(
        [str(TARGET_DIR / "release" / "examples" / "bench")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The GLSL fixture module has the count-then-scatter kernels only: the sort takes that
    # algorithm (rgpu-primitives' fallback for a module without Onesweep's kernels), three
    # launches a pass.
    assert re.search(r"^ash radix n=2\^12 launches=12 sort_ms=\d+\.\d+ ", proc.stdout, re.M)
    phases = re.search(
        r"^ash radix phases n=2\^12 prim_radix_upsweep_ms=(\S+) prim_radix_scan_ms=(\S+) "
        r"prim_radix_downsweep_ms=(\S+)$",
        proc.stdout,
        re.M,
    )
    assert phases, proc.stdout
    assert all(float(ms) > 0 for ms in phases.groups()), phases.group(0)


def test_wgpu_through_nagas_spirv_frontend(vulkan_ws: Path) -> None:
    env = {**LAVAPIPE, "RGPU_WGPU_SHADER": "naga"}
    proc = demo(vulkan_ws, "--backend", "wgpu", "--len", "3001", "--type", "i32",
                "--order", "desc", "--verify", env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "SPIR-V via naga" in proc.stdout


def test_auto_skips_lavapipe_for_the_cpu_and_says_why(vulkan_ws: Path) -> None:
    """lavapipe is a CPU-type Vulkan device: `--backend auto` prefers the cpu backend (the
    same cores, without Vulkan's copies) and says why it passed over each Vulkan host."""
    proc = demo(vulkan_ws, "--backend", "auto", "--len", "1000", "--verify", env=LAVAPIPE)
    assert proc.returncode == 0, proc.stderr
    assert "on cpu [" in proc.stdout
    for backend in ("wgpu", "ash"):
        assert re.search(
            rf"notice: {backend}: only a CPU Vulkan device \(llvmpipe[^\n]*\); auto prefers the "
            rf"cpu backend: ask for it with RGPU_BACKEND={backend}",
            proc.stderr,
        ), proc.stderr
    assert "notice: sorting on cpu" in proc.stderr
    # Asked for by name, lavapipe is used.
    named = demo(vulkan_ws, "--len", "1000", "--verify", env={**LAVAPIPE, "RGPU_BACKEND": "ash"})
    assert named.returncode == 0, named.stderr
    assert "on ash [llvmpipe" in named.stdout


def test_the_demo_lists_each_backends_devices_and_sorts_on_the_one_asked_for(
    vulkan_ws: Path,
) -> None:
    listed = demo(vulkan_ws, "--list-devices", env=LAVAPIPE)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    for backend in ("wgpu", "ash"):
        assert f"{backend} 0: llvmpipe" in listed.stdout, listed.stdout
    assert any(ln.startswith("cpu 0: ") and ln.endswith(")") for ln in lines), lines
    assert not any(ln.startswith("cuda ") for ln in lines), lines  # not built in
    # By a part of its name (any case), and by index; an index past the last is an error.
    for device in ("LLVMPIPE", "0"):
        proc = demo(vulkan_ws, "--backend", "ash", "--device", device, "--len", "1000",
                    "--verify", "--json", env=LAVAPIPE)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["device"] == 0
    proc = demo(vulkan_ws, "--backend", "wgpu", "--device", "1", "--len", "10", env=LAVAPIPE)
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "error: wgpu: device 1: there is no device 1; wgpu has one device, 0: llvmpipe"
    ), proc.stderr


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
    assert proc.returncode == ExitCode.ARTIFACT, proc.stderr
    assert f"spirv-val rejects {bad}" in proc.stderr


def test_a_module_without_the_workspaces_kernels_is_refused(
    vulkan_ws: Path, tmp_path: Path
) -> None:
    from tests.spirv_fixture import SAXPY_GLSL, compile_entry

    other = compile_entry(SAXPY_GLSL, "saxpy", tmp_path / "saxpy.spv")
    proc = run_rgpu(
        "build", "--backend", "ash", "--kernel-artifact", str(other), cwd=vulkan_ws, check=False
    )
    assert proc.returncode == ExitCode.ARTIFACT, proc.stderr
    # The kernel crate's own kernels are required (the radix sort's are rgpu-primitives',
    # a library's: missing, they fail when launched).
    assert (
        f"--kernel-artifact {other} lacks the workspace's kernels "
        f"{', '.join(sorted(ENTRY_POINTS))} (it has: saxpy)"
    ) in proc.stderr


def test_an_unknown_artifact_kind_is_a_usage_error(vulkan_ws: Path, tmp_path: Path) -> None:
    odd = tmp_path / "kernel.bin"
    odd.write_bytes(b"\0" * 32)
    proc = run_rgpu(
        "build", "--backend", "ash", "--kernel-artifact", str(odd), cwd=vulkan_ws, check=False
    )
    assert proc.returncode == ExitCode.USAGE
    assert "unknown kind of kernel artifact" in proc.stderr
