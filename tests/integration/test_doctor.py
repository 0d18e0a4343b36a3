"""`rgpu doctor` on this machine's real state: toolchains, Vulkan, Docker, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO, run_rgpu

SCHEMA = json.loads((REPO / "rgpu/schemas/doctor.schema.json").read_text(encoding="utf-8"))
LAVAPIPE = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")


def doctor(*args: str, env: dict[str, str] | None = None, code: int = 0) -> dict[str, Any]:
    proc = run_rgpu("doctor", "--json", *args, env=env, check=False)
    assert proc.returncode == code, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA, cls=jsonschema.Draft202012Validator)
    return report


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in report["checks"] if c["name"] == name)
    return found


def pinned_installed(channel: str) -> bool:
    if shutil.which("rustup") is None:
        return False
    out = subprocess.run(["rustup", "toolchain", "list"], capture_output=True, text=True).stdout
    return any(line.startswith(f"{channel}-") for line in out.splitlines())


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_doctor_json_matches_its_schema_and_covers_every_area() -> None:
    report = doctor()
    names = {c["name"] for c in report["checks"]}
    for name in ("python", "cargo", "rustup", "nvptx toolchain", "nvptx rust-src",
                 "nvptx llvm tools", "spirv toolchain", "spirv components", "spirv commit hash",
                 "nvvm toolchain", "nvvm llvm", "cuda toolkit", "libnvvm", "ptxas",
                 "nvidia driver", "vulkan loader", "vulkan drivers", "vulkan device",
                 "container engine", "disk"):  # fmt: skip
        assert name in names
    assert set(report["backends"]) == {"cpu", "cuda", "wgpu", "ash"}
    assert any("not exercised in rgpu's CI" in note for note in report["notes"])


def test_text_report_has_one_line_per_check_and_the_ci_note() -> None:
    proc = run_rgpu("doctor")
    lines = proc.stdout.splitlines()
    assert sum(1 for ln in lines if ln.split(" ", 1)[0] in ("ok", "warn", "FAIL")) >= 20
    assert any(ln.startswith("note: the spirv and nvvm codegens are not exercised") for ln in lines)


@pytest.mark.skipif(not Path("/usr/bin/rustc").is_file(), reason="no system rustc (rustc-web)")
def test_system_rustc_serves_nvptx_when_no_nightly_has_the_components(tmp_path: Path) -> None:
    pins = tmp_path / "pins"
    pins.mkdir()
    text = (REPO / "toolchains/nvptx.toml").read_text(encoding="utf-8")
    # A component no nightly has: the system toolchain is then the only candidate.
    text = text.replace('"llvm-bitcode-linker"]', '"llvm-bitcode-linker", "no-such-component"]')
    (pins / "nvptx.toml").write_text(text, encoding="utf-8")
    report = doctor(env={"RGPU_TOOLCHAINS_DIR": str(pins)})
    nvptx = check(report, "nvptx toolchain")
    assert nvptx["status"] == "ok", nvptx
    assert "system rustc" in nvptx["detail"] and "RUSTC_BOOTSTRAP=1" in nvptx["detail"]
    assert check(report, "nvptx rust-src")["status"] == "ok"
    llvm = check(report, "nvptx llvm tools")
    assert llvm["status"] == "ok" and "the same major as rustc's" in llvm["detail"]
    assert report["backends"]["cuda"]["builds"] is True


@pytest.mark.skipif(not LAVAPIPE.is_file(), reason="lavapipe (mesa-vulkan-drivers) not installed")
def test_lavapipe_enumerates_as_a_vulkan_device() -> None:
    report = doctor()
    assert check(report, "vulkan loader")["status"] == "ok"
    assert "lvp_icd" in check(report, "vulkan drivers")["detail"]
    device = check(report, "vulkan device")
    assert device["status"] == "ok" and "llvmpipe" in device["detail"]


def test_icd_variable_pointing_at_nothing_fails_the_vulkan_checks() -> None:
    report = doctor(env={"VK_ICD_FILENAMES": "/nonexistent"})
    drivers = check(report, "vulkan drivers")
    assert drivers["status"] == "fail" and "VK_ICD_FILENAMES" in drivers["fix"]
    if shutil.which("vulkaninfo"):
        assert check(report, "vulkan device")["status"] == "fail"
    assert report["backends"]["wgpu"]["runs"] is False


def docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    proc = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    return proc.returncode == 0


@pytest.mark.skipif(not docker_answers(), reason="dockerd is not running on this machine")
def test_running_docker_is_ok_and_images_are_listed() -> None:
    report = doctor()
    assert check(report, "container engine")["status"] == "ok"
    assert "image nvvm cuda13" in {c["name"] for c in report["checks"]}


@pytest.mark.skipif(shutil.which("docker") is None, reason="docker client not installed")
def test_docker_without_a_daemon_is_a_warning_with_the_start_command() -> None:
    # A real docker client pointed at a socket where no daemon listens: the stopped state.
    report = doctor(env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    engine = check(report, "container engine")
    assert engine["status"] == "warn"
    assert "daemon does not answer" in engine["detail"] and "dockerd" in engine["fix"]


def test_backend_cpu_passes() -> None:
    proc = run_rgpu("doctor", "--backend", "cpu")
    assert "backend cpu" in proc.stdout


@pytest.mark.skipif(pinned_installed("nightly-2026-04-08"), reason="spirv pin installed here")
def test_backend_wgpu_without_the_spirv_toolchain_exits_8_with_one_line_why() -> None:
    proc = run_rgpu("doctor", "--backend", "wgpu", check=False)
    assert proc.returncode == 8
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert errors == [
        "error: backend wgpu cannot be built here: spirv toolchain: nightly-2026-04-08 "
        "is not installed (not exercised in rgpu's CI)"
    ]
    assert "fix: rgpu toolchain install spirv" in proc.stderr
    report = doctor("--backend", "wgpu", code=8)  # stdout stays one valid JSON document
    assert report["backend"] == "wgpu" and report["backends"]["wgpu"]["builds"] is False


@pytest.mark.skipif(pinned_installed("nightly-2026-04-02"), reason="nvvm pin installed here")
def test_nvvm_fails_with_the_exact_fix() -> None:
    report = doctor("--backend", "cuda", "--codegen", "nvvm", code=8)
    nvvm = check(report, "nvvm toolchain")
    assert nvvm["status"] == "fail" and nvvm["fix"] == "rgpu toolchain install nvvm"


def test_unknown_backend_is_a_usage_error() -> None:
    proc = run_rgpu("doctor", "--backend", "cdua", check=False)
    assert proc.returncode == 2 and "did you mean `cuda`" in proc.stderr


@pytest.mark.skipif(pinned_installed("nightly-2026-04-08"), reason="spirv pin installed here")
def test_require_codegen_stops_with_doctors_message_for_a_missing_toolchain() -> None:
    from rgpu.doctor import require_codegen
    from rgpu.errors import ToolchainError

    with pytest.raises(ToolchainError) as caught:
        require_codegen("spirv")
    assert "spirv toolchain: nightly-2026-04-08 is not installed" in caught.value.message
    assert caught.value.hint == "rgpu toolchain install spirv"


@pytest.mark.skipif(not Path("/usr/bin/rustc").is_file(), reason="no system rustc (rustc-web)")
def test_require_codegen_lets_nvptx_through_with_the_system_toolchain() -> None:
    from rgpu.doctor import require_codegen

    require_codegen("nvptx")  # raises if any nvptx check fails here


def test_without_rustup_on_path_pins_fail_with_the_rustup_fix_and_nvptx_may_still_work() -> None:
    import os

    dirs = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(d for d in dirs if not (Path(d) / "rustup").exists())
    report = doctor(env={"PATH": path})
    assert check(report, "rustup")["status"] == "warn"
    spirv = check(report, "spirv toolchain")
    assert spirv["status"] == "fail" and "https://rustup.rs" in spirv["fix"]
    if Path("/usr/bin/rustc").is_file():
        assert "system rustc" in check(report, "nvptx toolchain")["detail"]


@pytest.fixture
def cuda_tree_stand_in(tmp_path: Path) -> Path:
    """Stands in for a CUDA toolkit, which cannot be installed here: only the layout doctor
    looks at (nvvm/lib64/libnvvm.so.4). Nothing loads it."""
    lib = tmp_path / "cuda" / "nvvm" / "lib64"
    lib.mkdir(parents=True)
    (lib / "libnvvm.so.4").write_bytes(b"")
    return tmp_path / "cuda"


def test_libnvvm_off_the_loader_path_fails_with_the_export_fix(cuda_tree_stand_in: Path) -> None:
    lib = cuda_tree_stand_in / "nvvm" / "lib64"
    report = doctor(env={"CUDA_PATH": str(cuda_tree_stand_in), "LD_LIBRARY_PATH": ""})
    assert check(report, "cuda toolkit")["detail"] == str(cuda_tree_stand_in)
    libnvvm = check(report, "libnvvm")
    assert libnvvm["status"] == "fail"
    assert libnvvm["fix"] == f'export LD_LIBRARY_PATH="{lib}:$LD_LIBRARY_PATH"'
    fixed = doctor(env={"CUDA_PATH": str(cuda_tree_stand_in), "LD_LIBRARY_PATH": str(lib)})
    assert check(fixed, "libnvvm")["status"] == "ok"
