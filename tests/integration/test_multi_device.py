"""Several devices (issue 30): the minimal template's `split` example spreads SAXPY over every
device of a backend from threads of their own, with progress between chunks, and `rgpu
doctor` counts the devices as the runtime does.

This machine has no GPU; a machine with two is made here (a FIXTURE of the driver list, not
of a driver): Mesa's lavapipe listed twice in `VK_ICD_FILENAMES`, its manifest and a copy of
it, so the Vulkan loader gives two physical devices and the ash backend two real devices.
The kernel is the GLSL FIXTURE twin of the template's SAXPY
(tests/fixtures/spirv/saxpy_fixture.comp, the interface the kernel attribute generates),
embedded with `rgpu build --backend ash --kernel-artifact`; rust-gpu's own SPIR-V of it is run
by tests/integration/test_rust_gpu.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TARGET_DIR, run_rgpu
from tests.integration.conftest import LAVAPIPE_ICD
from tests.spirv_fixture import SAXPY_GLSL, compile_entry


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a machine with two Vulkan devices: lavapipe listed twice."""
    copy = tmp_path_factory.mktemp("icd") / "second_lvp_icd.json"
    shutil.copyfile(LAVAPIPE_ICD, copy)
    files = f"{LAVAPIPE_ICD}:{copy}"
    return {"VK_ICD_FILENAMES": files, "VK_DRIVER_FILES": files}


@pytest.fixture(scope="module")
def split_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("split")
    run_rgpu("new", "splitdemo", "--template", "minimal", "--dir", str(parent))
    ws = parent / "splitdemo"
    spv = compile_entry(SAXPY_GLSL, "saxpy", parent / "saxpy.fixture.spv")
    run_rgpu("build", "--backend", "ash", "--kernel-artifact", str(spv), cwd=ws)
    return ws


def split(
    ws: Path, *args: str, env: dict[str, str] | None = None, example: str = "split"
) -> subprocess.CompletedProcess[str]:
    binary = TARGET_DIR / "release" / "examples" / example
    clean = {k: v for k, v in os.environ.items() if k not in ("RGPU_BACKEND", "RGPU_DEVICE")}
    return subprocess.run(
        [str(binary), *args],
        cwd=ws,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_doctor_counts_the_devices_as_the_runtime_does(
    split_ws: Path, two_gpus: dict[str, str]
) -> None:
    listed = split(split_ws, "--list", env={**two_gpus, "RGPU_BACKEND": "ash"})
    assert listed.returncode == 0, listed.stderr
    runtime = listed.stdout.splitlines()
    assert len(runtime) == 2, runtime
    doctor = run_rgpu("doctor", "--json", env=two_gpus)
    report = json.loads(doctor.stdout)
    for backend in ("ash", "wgpu"):
        found = report["devices"][backend]["devices"]
        assert [d["index"] for d in found] == [0, 1], found
        for device, line in zip(found, runtime, strict=True):
            assert line.startswith(f"{device['index']}: {device['name']} ({device['kind']}"), (
                line,
                device,
            )
    text = run_rgpu("doctor", env=two_gpus).stdout
    assert f"devices ash: {found[0]['index']}: {found[0]['name']} (CPU); 1: " in text, text


def test_the_split_over_two_devices_is_exact_and_both_take_chunks(
    split_ws: Path, two_gpus: dict[str, str]
) -> None:
    env = {**two_gpus, "RGPU_BACKEND": "ash"}
    args = ("--n", "300007", "--chunk", "10000", "--repeat", "5", "--json")
    results = []
    for devices in ("1", "2"):
        proc = split(split_ws, *args, "--devices", devices, env=env)
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert result["backend"] == "ash" and result["devices"] == int(devices)
        assert result["exact"] is True
        assert sum(result["chunks"]) == 31, result
        results.append(result)
    # Both devices worked (a shared queue of 31 chunks, two threads).
    assert all(c > 0 for c in results[1]["chunks"]), results[1]
    # The text form reports progress as chunks finish, and which device took how many.
    proc = split(split_ws, "--n", "300007", "--chunk", "10000", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "progress: 31/31 chunks (100%)" in proc.stderr
    assert proc.stdout.startswith("ash device 0 (llvmpipe"), proc.stdout
    assert "\nash device 1 (llvmpipe" in proc.stdout
    assert "over 2 device(s) of ash: n = 300007" in proc.stdout


def test_rgpu_device_picks_one_and_a_missing_one_is_an_error(
    split_ws: Path, two_gpus: dict[str, str]
) -> None:
    env = {**two_gpus, "RGPU_BACKEND": "ash"}
    one = split(split_ws, "--list", env={**env, "RGPU_DEVICE": "1"})
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("1: llvmpipe") and len(one.stdout.splitlines()) == 1
    missing = split(split_ws, "--list", env={**env, "RGPU_DEVICE": "2"})
    assert missing.returncode == 1
    assert missing.stderr.startswith(
        "error: ash: RGPU_DEVICE=2: there is no device 2; ash's devices are 0: llvmpipe"
    ), missing.stderr
    assert ", 1: llvmpipe" in missing.stderr
    several = split(split_ws, "--list", env={**env, "RGPU_DEVICE": "llvmpipe"})
    assert several.returncode == 1
    assert '2 devices\' names contain "llvmpipe"' in several.stderr, several.stderr
    assert several.stderr.rstrip().endswith("give the index of one instead")
    too_many = split(split_ws, "--devices", "3", env=env)
    assert too_many.returncode == 1
    assert too_many.stderr.startswith(
        "error: --devices 3: ash has 2 device(s) to split over here (0: llvmpipe"
    ), too_many.stderr


def test_without_a_gpu_the_split_runs_on_the_cpu(split_ws: Path) -> None:
    proc = split(
        split_ws, "--n", "100003", "--chunk", "4096", "--json", env={"RGPU_BACKEND": "cpu"}
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["backend"], result["devices"], result["exact"]) == ("cpu", 1, True)
    assert result["chunks"] == [25]


def test_the_allreduce_example_over_two_devices_and_its_launcher_without_nccl(
    split_ws: Path, two_gpus: dict[str, str]
) -> None:
    """The template's `allreduce` example: one process over lavapipe twice (the host path, the
    sum exact), over the cpu alone, and `--launch 2` on a build without CUDA: a clear error."""
    env = {**two_gpus, "RGPU_BACKEND": "ash"}
    proc = split(split_ws, "--n", "100003", "--json", env=env, example="allreduce")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["backend"], result["ranks"], result["exact"]) == ("ash", 2, True), result
    assert result["engine"].startswith("host memory"), result
    proc = split(split_ws, "--n", "1000", env={"RGPU_BACKEND": "cpu"}, example="allreduce")
    assert proc.returncode == 0, proc.stderr
    assert "over 1 rank(s) of cpu through host memory" in proc.stdout and "exact" in proc.stdout
    proc = split(split_ws, "--launch", "2", env=env, example="allreduce")
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "error: --launch needs NCCL's job id, which needs a CUDA build and NCCL: built without "
        "the cuda feature"
    ), proc.stderr
