"""`rgpu doctor` on real machine states: every report matches rgpu/schemas/doctor.schema.json;
toolchain states come from a rustup home of the test's own (the real rustup), so nothing
here depends on which toolchains this machine has; Vulkan through the real loader and
lavapipe; Docker through the real client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from rgpu.errors import ExitCode
from tests.integration.conftest import (
    DOCTOR_SCHEMA,
    LAVAPIPE,
    LAVAPIPE_ICD,
    RustupState,
    check_named,
    doctor_json,
    environ,
    rgpu_in,
    rustup_state,
)

SYSTEM_RUST = Path("/usr/bin/rustc").is_file() and Path("/usr/bin/cargo").is_file()
AREAS = (
    "python", "cargo", "rustup",
    "nvptx toolchain", "nvptx rust-src", "nvptx llvm tools",
    "spirv toolchain", "spirv components", "spirv commit hash", "spirv cargo-gpu",
    "spirv rgpu-naga",
    "nvvm toolchain", "nvvm components", "nvvm commit hash", "nvvm llvm", "cuda toolkit",
    "libnvvm", "ptxas", "nvidia driver", "vulkan loader", "vulkan drivers", "vulkan device",
    "container engine", "disk",
)  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> RustupState:
    """No pinned toolchain installed; the system toolchain as rustup's default."""
    state = rustup_state(tmp_path)
    if SYSTEM_RUST:
        state.link_system()
    return state


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(DOCTOR_SCHEMA)


def test_json_report_matches_its_schema_and_covers_every_area() -> None:
    report = doctor_json(os.environ)
    names = [c["name"] for c in report["checks"]]
    for name in AREAS:
        assert name in names, name
    assert len(names) == len(set(names))
    assert set(report["backends"]) == {"cpu", "cuda", "wgpu", "ash", "webgpu"}
    assert report["backend"] is None
    # The pins that say rgpu's test suite does not execute their codegen.
    assert any("not executed by rgpu's own test suite" in note for note in report["notes"])
    for line in report["checks"]:
        if line["status"] != "ok":
            assert line["fix"], line  # every problem comes with its fix


def test_text_report_has_one_line_per_check_then_one_per_backend() -> None:
    proc = rgpu_in(os.environ, "doctor")
    assert proc.returncode == 0, proc.stderr
    report = doctor_json(os.environ)
    lines = proc.stdout.splitlines()
    marked = [ln for ln in lines if ln.split(" ", 1)[0] in ("ok", "warn", "FAIL", "--")]
    assert len(marked) == len(report["checks"])
    # Without --backend only what every build needs fails; the rest says what needs it.
    for line, check in zip(marked, report["checks"], strict=True):
        if line.startswith("--"):
            assert check["status"] == "fail" and "needed only for --backend" in line, line
        if line.startswith("FAIL"):
            assert check["status"] == "fail" and "cargo" in check["needed_for"], line
    for backend in ("cpu", "cuda", "wgpu", "ash", "webgpu"):
        assert any(ln.startswith(f"backend {backend}") for ln in lines), backend
    assert any(
        ln.startswith("note: the ") and "not executed by rgpu's own test suite" in ln
        for ln in lines
    )


@pytest.mark.skipif(not SYSTEM_RUST, reason="no system rustc (rustc-web)")
def test_the_system_rustc_serves_nvptx_when_no_nightly_has_the_components(
    home: RustupState,
) -> None:
    report = doctor_json(home.env())
    nvptx = check_named(report, "nvptx toolchain")
    assert nvptx["status"] == "ok", nvptx
    assert "system rustc" in nvptx["detail"] and "RUSTC_BOOTSTRAP=1" in nvptx["detail"]
    assert check_named(report, "nvptx rust-src")["status"] == "ok"
    llvm = check_named(report, "nvptx llvm tools")
    assert llvm["status"] == "ok" and "rustc's major" in llvm["detail"]
    cuda = report["backends"]["cuda"]
    assert cuda["builds"] is True and cuda["codegen"] == "nvptx"


@pytest.mark.skipif(not SYSTEM_RUST, reason="no system rustc (rustc-web) for rustup's default")
def test_wgpu_without_the_spirv_toolchain_exits_8_with_one_line_why(home: RustupState) -> None:
    proc = rgpu_in(home.env(), "doctor", "--backend", "wgpu")
    assert proc.returncode == ExitCode.BACKEND_UNAVAILABLE
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    channel = "nightly-2026-08-15"  # toolchains/spirv.toml
    assert errors == [
        f"error: backend wgpu cannot be built here: spirv toolchain: {channel} is not installed"
    ]
    assert "fix: rgpu toolchain install spirv" in proc.stderr
    # With --json, stdout stays one valid report; the one-line reason goes to stderr.
    report = doctor_json(home.env(), "--backend", "wgpu", code=ExitCode.BACKEND_UNAVAILABLE)
    assert report["backend"] == "wgpu" and report["backends"]["wgpu"]["builds"] is False
    assert list(report["backends"]) == ["wgpu"]


def test_nvvm_fails_with_the_exact_fix(home: RustupState) -> None:
    env = {k: v for k, v in home.env().items() if k not in ("LLVM_CONFIG", "CUDA_PATH")}
    report = doctor_json(
        env, "--backend", "cuda", "--codegen", "nvvm", code=ExitCode.BACKEND_UNAVAILABLE
    )
    nvvm = check_named(report, "nvvm toolchain")
    assert nvvm["status"] == "fail" and nvvm["fix"] == "rgpu toolchain install nvvm"
    assert report["backends"]["cuda"]["codegen"] == "nvvm"


def test_backend_cpu_passes() -> None:
    proc = rgpu_in(os.environ, "doctor", "--backend", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert "backend cpu: builds, runs" in proc.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--backend", "cdua"), "did you mean `cuda`"),
        (("--backend", "cuda", "--codegen", "spirv"), "cannot build for the cuda backend"),
    ],
)
def test_a_bad_name_is_a_usage_error(args: tuple[str, ...], said: str) -> None:
    proc = rgpu_in(os.environ, "doctor", *args)
    assert proc.returncode == ExitCode.USAGE and said in proc.stderr


def test_without_rustup_pins_fail_with_the_rustup_fix() -> None:
    dirs = os.environ["PATH"].split(os.pathsep)
    path = os.pathsep.join(d for d in dirs if not (Path(d) / "rustup").exists())
    report = doctor_json(environ(PATH=path))
    assert check_named(report, "rustup")["status"] == "warn"
    spirv = check_named(report, "spirv toolchain")
    assert spirv["status"] == "fail" and "https://rustup.rs" in spirv["fix"]
    if SYSTEM_RUST:
        assert "system rustc" in check_named(report, "nvptx toolchain")["detail"]


@pytest.mark.skipif(
    not LAVAPIPE_ICD.is_file(), reason="lavapipe (mesa-vulkan-drivers) not installed"
)
def test_lavapipe_enumerates_as_a_cpu_vulkan_device() -> None:
    report = doctor_json(environ(**LAVAPIPE))
    assert check_named(report, "vulkan loader")["status"] == "ok"
    assert "lvp_icd" in check_named(report, "vulkan drivers")["detail"]
    device = check_named(report, "vulkan device")
    if shutil.which("vulkaninfo"):
        assert device["status"] == "ok" and "llvmpipe" in device["detail"]
        assert "(cpu)" in device["detail"]
        assert report["backends"]["wgpu"]["runs"] is True


def test_an_icd_variable_pointing_at_nothing_fails_the_vulkan_checks() -> None:
    report = doctor_json(
        environ(VK_ICD_FILENAMES="/nonexistent/icd.json", VK_DRIVER_FILES="/nonexistent")
    )
    drivers = check_named(report, "vulkan drivers")
    assert drivers["status"] == "fail" and "VK_ICD_FILENAMES" in drivers["fix"]
    if shutil.which("vulkaninfo"):
        assert check_named(report, "vulkan device")["status"] == "fail"
    assert report["backends"]["wgpu"]["runs"] is False


def docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not docker_answers(), reason="no docker daemon answering")
def test_a_running_docker_is_ok_and_its_images_are_listed() -> None:
    report = doctor_json(environ(drop=("RGPU_CONTAINER_ENGINE", "RGPU_IMAGE", "DOCKER_HOST")))
    assert check_named(report, "container engine")["status"] == "ok"
    names = {c["name"] for c in report["checks"]}
    assert {"image nvvm cuda12", "image nvvm cuda13", "image rgpu"} <= names


@pytest.mark.skipif(shutil.which("docker") is None, reason="docker client not installed")
def test_docker_without_a_daemon_is_a_warning_with_the_start_command(tmp_path: Path) -> None:
    report = doctor_json(environ(DOCKER_HOST=f"unix://{tmp_path}/no-daemon.sock"))
    engine = check_named(report, "container engine")
    assert engine["status"] == "warn"
    assert "not answering" in engine["detail"] and "dockerd" in engine["fix"]
    # A failing `docker info` is quoted by its error line, not a stack trace's last line.
    assert "Cannot connect to the Docker daemon" in engine["detail"]


@pytest.fixture
def cuda_tree(tmp_path: Path) -> Path:
    """A STAND-IN CUDA toolkit (CUDA cannot be installed here): only the layout doctor looks
    at (nvvm/lib64/libnvvm.so.4). Nothing loads it."""
    lib = tmp_path / "cuda" / "nvvm" / "lib64"
    lib.mkdir(parents=True)
    (lib / "libnvvm.so.4").write_bytes(b"")
    return tmp_path / "cuda"


def test_libnvvm_off_the_loader_path_is_fine_the_build_puts_it_there(cuda_tree: Path) -> None:
    """rustc loads rustc_codegen_nvvm, which loads libNVVM: the nvvm build step puts
    $CUDA_PATH/nvvm/lib64 first on its own LD_LIBRARY_PATH, so doctor (asking the same
    code) does not ask the user to export it."""
    lib = cuda_tree / "nvvm" / "lib64"
    for value in ("", str(lib)):
        report = doctor_json(environ(CUDA_PATH=str(cuda_tree), LD_LIBRARY_PATH=value))
        assert check_named(report, "cuda toolkit")["detail"] == str(cuda_tree)
        libnvvm = check_named(report, "libnvvm")
        assert libnvvm["status"] == "ok", libnvvm
        assert str(lib) in libnvvm["detail"] and libnvvm["fix"] is None


def test_the_json_report_is_the_only_thing_on_stdout() -> None:
    proc = rgpu_in(os.environ, "doctor", "--json")
    json.loads(proc.stdout)  # no log line mixed in
