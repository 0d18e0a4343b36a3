"""Issue 12, one answer: `rgpu doctor` and the build path answer the same question the same
way on the same machine state, for every tool they both need: ptxas, the CUDA root, LLVM's
llvm-config, the nvptx toolchain, the container engine and image, and the pinned toolchains
with and without RGPU_TOOLCHAINS_DIR. Each test makes the state it names (its own rustup
home, stand-in tools, variables) and asks both; no test depends on what this machine has
installed. The build path is `rgpu build` itself: its plan (`--dry-run --json`) where the
answer shows there, else the build, stopped where that tool is needed."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rgpu.errors import ExitCode
from tests.conftest import REPO
from tests.integration.conftest import (
    RustupState,
    assert_clean_failure,
    check_named,
    doctor_json,
    environ,
    fake_tool,
    fake_toolchain,
    manifest_of,
    new_workspace,
    rgpu_in,
    rustup_state,
)

# The pinned nvptx nightly (toolchains/nvptx.toml); the tests fake it in their own rustup home.
NVPTX_PIN = __import__("tomllib").loads((REPO / "toolchains" / "nvptx.toml").read_text())
NVPTX_CHANNEL = str(NVPTX_PIN["channel"])
NVPTX_COMMIT = str(NVPTX_PIN["commit_hash"])

CUDA_VARS = ("CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDA_HOME", "LLVM_CONFIG")
SYSTEM = Path("/usr/bin/rustc").is_file() and Path("/usr/bin/cargo").is_file()
needs_system_rust = pytest.mark.skipif(not SYSTEM, reason="no system rustc (rustc-web)")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Never built: dry runs, and builds that stop before compiling."""
    return new_workspace(tmp_path_factory.mktemp("drift"), "driftdemo")


def doctor(env: Mapping[str, str]) -> dict[str, Any]:
    return doctor_json(env)


check = check_named


def plan(env: Mapping[str, str], ws: Path, *args: str) -> dict[str, Any]:
    proc = rgpu_in(env, "build", *args, "--dry-run", "--json", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def step(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in data["plan"]["steps"] if s["name"] == name)
    return found


# --- ptxas -------------------------------------------------------------------------------


def test_doctors_ptxas_is_the_one_builds_checked_with(cuda_ws: Path) -> None:
    report = doctor(os.environ)
    ptxas = check(report, "ptxas")
    assert ptxas["status"] == "ok", ptxas
    assert all(a.extra["ptxas"] == "accepted" for a in manifest_of(cuda_ws) if a.kind == "ptx")


def test_a_broken_ptxas_first_on_path_is_the_one_doctor_and_builds_use(
    ws: Path, cuda_ws: Path, built_ptx: dict[str, Path], tmp_path: Path
) -> None:
    broken = fake_tool(
        tmp_path / "broken-cuda" / "bin",
        "ptxas",
        "# FAKE ptxas: a broken install (it does not run).\n"
        'echo "ptxas at $0: broken" >&2\nexit 1\n',
    )
    env = environ(PATH=f"{broken.parent}{os.pathsep}{os.environ['PATH']}")
    report = doctor(env)
    line = check(report, "ptxas")
    assert line["status"] == "fail" and line["detail"].startswith(f"{broken} does not run")
    assert report["backends"]["cuda"]["builds"] is False
    # The build checks an external PTX with that same ptxas, and stops on its words.
    built = rgpu_in(
        env, "build", "--backend", "cuda", "--kernel-artifact", str(built_ptx["sm_80"]), cwd=ws
    )
    assert_clean_failure(built, ExitCode.ARTIFACT)
    assert f"ptxas at {broken}: broken" in built.stderr
    # And `rgpu ci check-ptx` (the CUDA CI job) with the same one.
    checked = rgpu_in(env, "ci", "check-ptx", cwd=cuda_ws)
    assert checked.returncode == ExitCode.ARTIFACT, checked.stderr
    assert f"ptxas at {broken}: broken" in checked.stderr


# --- the CUDA toolkit root -----------------------------------------------------------------


@pytest.fixture
def cuda_tree(tmp_path: Path) -> Path:
    """A STAND-IN CUDA toolkit (CUDA cannot be installed here): the layout doctor and the
    nvvm build look at, nothing that runs."""
    root = tmp_path / "cuda-12.8"
    (root / "nvvm" / "lib64").mkdir(parents=True)
    (root / "nvvm" / "lib64" / "libnvvm.so.4").write_bytes(b"")
    (root / "version.json").write_text('{"cuda": {"version": "12.8.1"}}', encoding="utf-8")
    return root


@pytest.mark.parametrize("variable", ["CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", None])
def test_cuda_root(ws: Path, cuda_tree: Path, variable: str | None) -> None:
    if variable is None and any(
        Path(r).is_dir() for r in ("/usr/lib/cuda", "/usr/local/cuda", "/opt/cuda")
    ):
        pytest.skip("this machine has a CUDA toolkit in a default place")
    extra = {variable: str(cuda_tree)} if variable else {}
    env = environ(drop=CUDA_VARS, **extra)
    toolkit = check(doctor(env), "cuda toolkit")
    build = step(
        plan(env, ws, "--backend", "cuda", "--codegen", "nvvm", "--no-docker"), "nvvm-build"
    )
    if variable is None:
        assert toolkit["status"] == "fail" and "no CUDA toolkit" in toolkit["detail"]
        assert "CUDA_PATH" not in build["env"]
    else:
        assert toolkit["status"] == "ok" and toolkit["detail"] == str(cuda_tree)
        assert build["env"]["CUDA_PATH"] == str(cuda_tree)
        lib = f"{cuda_tree}/nvvm/lib64"
        assert build["env"]["LD_LIBRARY_PATH"].split(":")[0] == lib


# --- LLVM (rustc_codegen_nvvm needs LLVM 7) -----------------------------------------------


def fake_llvm_config(directory: Path, version: str) -> Path:
    return fake_tool(
        directory,
        "llvm-config",
        f"# FAKE llvm-config: LLVM {version} cannot be installed here.\n"
        f'[ "$1" = "--version" ] && echo {version} && exit 0\nexit 1\n',
    )


@pytest.mark.parametrize("how", ["LLVM_CONFIG", "PATH"])
def test_an_llvm_7_is_found_the_same_way_and_the_build_runs_here(
    ws: Path, tmp_path: Path, how: str
) -> None:
    config = fake_llvm_config(tmp_path / "llvm-7" / "bin", "7.1.0")
    if how == "LLVM_CONFIG":
        env = environ(drop=CUDA_VARS, LLVM_CONFIG=str(config))
    else:
        env = environ(drop=CUDA_VARS, PATH=f"{config.parent}{os.pathsep}{os.environ['PATH']}")
    llvm = check(doctor(env), "nvvm llvm")
    assert llvm["status"] == "ok" and llvm["detail"] == f"{config} reports 7.1.0"
    data = plan(env, ws, "--backend", "cuda", "--codegen", "nvvm")
    assert step(data, "nvvm-build")["env"]["LLVM_CONFIG"] == str(config)
    assert not any("in a container" in n for n in data["plan"]["notes"])


def test_another_llvm_major_is_refused_the_same_way_and_the_build_goes_to_a_container(
    ws: Path, tmp_path: Path
) -> None:
    config = fake_llvm_config(tmp_path / "llvm-22" / "bin", "22.1.0")
    env = environ(drop=CUDA_VARS, LLVM_CONFIG=str(config))
    llvm = check(doctor(env), "nvvm llvm")
    assert llvm["status"] == "fail" and f"{config} reports 22.1.0" in llvm["detail"]
    data = plan(env, ws, "--backend", "cuda", "--codegen", "nvvm")
    notes = " ".join(data["plan"]["notes"])
    assert "run in a container of ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda12" in notes
    assert "no LLVM 7 here" in notes
    assert step(data, "nvvm-build")["env"]["LLVM_CONFIG"] == "/opt/llvm-7/bin/llvm-config"


# --- the nvptx toolchain ----------------------------------------------------------------


def nvptx_answers(env: Mapping[str, str], ws: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    report = doctor(env)
    assert report["backends"]["cuda"]["builds"] is True, report["backends"]["cuda"]
    return check(report, "nvptx toolchain"), step(
        plan(env, ws, "--backend", "cuda", "--arch", "sm_80"), "nvptx-sm_80"
    )


@pytest.fixture
def rustup_home(tmp_path: Path) -> RustupState:
    state = rustup_state(tmp_path)
    state.link_system()  # cargo works; no pin matches it
    return state


@needs_system_rust
def test_a_rustup_nightly_with_the_components_is_used_by_both(
    ws: Path, rustup_home: RustupState
) -> None:
    name = fake_toolchain(
        rustup_home,
        NVPTX_CHANNEL,
        ["rust-src", "llvm-tools", "llvm-bitcode-linker"],
        commit=NVPTX_COMMIT,
    )
    line, build = nvptx_answers(rustup_home.env(), ws)
    assert line["status"] == "ok" and line["detail"].startswith(f"route: the pinned rustup {name}")
    assert build["argv"][:2] == ["cargo", f"+{NVPTX_CHANNEL}"]
    assert "RUSTC_BOOTSTRAP" not in build["env"]


@needs_system_rust
def test_a_nightly_lacking_a_component_sends_both_to_the_system_rustc(
    ws: Path, rustup_home: RustupState
) -> None:
    name = fake_toolchain(
        rustup_home, NVPTX_CHANNEL, ["rust-src", "llvm-tools"], commit=NVPTX_COMMIT
    )
    line, build = nvptx_answers(rustup_home.env(), ws)
    assert line["status"] == "ok" and line["detail"].startswith("route: the system rustc")
    assert f"the pinned {name}" in line["detail"]
    assert "missing components: llvm-bitcode-linker" in line["detail"]
    assert build["argv"][0] == "/usr/bin/cargo"
    assert build["env"]["RUSTC"] == "/usr/bin/rustc" and build["env"]["RUSTC_BOOTSTRAP"] == "1"


@needs_system_rust
def test_a_rustup_that_fails_sends_both_to_the_system_rustc_and_says_why(
    ws: Path, tmp_path: Path
) -> None:
    fake = fake_tool(
        tmp_path / "fake-rustup",
        "rustup",
        "# FAKE rustup: lists a nightly, then fails to list its components (damaged).\n"
        'case "$1" in\n'
        '  --version) echo "rustup 1.29.0 (fake)";;\n'
        f'  toolchain) echo "{NVPTX_CHANNEL}-x86_64-unknown-linux-gnu";;\n'
        '  *) echo "error: toolchain is damaged" >&2; exit 1;;\n'
        "esac\n",
    )
    env = environ(PATH=f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    line, build = nvptx_answers(env, ws)
    assert line["detail"].startswith("route: the system rustc")
    assert f"`rustup component list --installed --toolchain {NVPTX_CHANNEL}" in line["detail"]
    assert build["argv"][0] == "/usr/bin/cargo" and build["env"]["RUSTC_BOOTSTRAP"] == "1"


@needs_system_rust
def test_without_rustup_both_use_the_system_rustc(ws: Path) -> None:
    dirs = os.environ["PATH"].split(os.pathsep)
    path = os.pathsep.join(d for d in dirs if not (Path(d) / "rustup").exists())
    line, build = nvptx_answers(environ(PATH=path), ws)
    assert line["detail"].startswith("route: the system rustc")
    assert "rustup is not installed" in line["detail"]
    assert build["argv"][0] == "/usr/bin/cargo"


# --- the container engine and image -------------------------------------------------------


def engine_answers(env: Mapping[str, str], ws: Path) -> tuple[dict[str, Any], str]:
    line = check(doctor(env), "container engine")
    built = rgpu_in(env, "build", "--backend", "cuda", "--docker", cwd=ws)
    assert_clean_failure(built, ExitCode.CONTAINER)
    return line, built.stderr


def test_an_engine_named_but_missing(ws: Path) -> None:
    env = environ(RGPU_CONTAINER_ENGINE="/nonexistent/docker")
    line, stderr = engine_answers(env, ws)
    said = "container engine `/nonexistent/docker` (from RGPU_CONTAINER_ENGINE) was not found"
    assert line["status"] == "warn" and said in line["detail"]
    assert f"error: {said}" in stderr


def test_no_engine_on_path(ws: Path) -> None:
    env = environ(drop=("RGPU_CONTAINER_ENGINE",), PATH=str(Path(sys.executable).parent))
    line, stderr = engine_answers(env, ws)
    assert "neither docker nor podman is on PATH" in line["detail"]
    assert "neither docker nor podman is on PATH" in stderr


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker client")
def test_a_daemon_that_does_not_answer(ws: Path, tmp_path: Path) -> None:
    env = environ(drop=("RGPU_CONTAINER_ENGINE",), DOCKER_HOST=f"unix://{tmp_path}/no-daemon.sock")
    line, stderr = engine_answers(env, ws)
    assert line["status"] == "warn" and "the docker engine is not answering" in line["detail"]
    assert "the docker engine is not answering" in stderr
    assert "dockerd" in line["fix"] and "dockerd" in stderr


def docker_answers() -> bool:
    import subprocess

    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not docker_answers(), reason="no docker daemon answering")
def test_the_image_builds_would_use(ws: Path) -> None:
    env = environ(drop=("RGPU_CONTAINER_ENGINE",), RGPU_IMAGE="rgpu-test-missing:never")
    report = doctor(env)
    assert check(report, "container engine")["status"] == "ok"
    image = check(report, "image rgpu")
    assert (
        image["status"] == "warn" and "rgpu-test-missing:never (from RGPU_IMAGE)" in image["detail"]
    )
    built = rgpu_in(env, "build", "--backend", "cuda", "--docker", cwd=ws)
    assert_clean_failure(built, ExitCode.CONTAINER)
    assert "container image `rgpu-test-missing:never` is not available" in built.stderr
    assert image["fix"] in built.stderr  # the same fix


# --- pinned toolchains, packaged or from RGPU_TOOLCHAINS_DIR -------------------------------


def pins_dir(tmp_path: Path, channels: Mapping[str, str]) -> Path:
    """A copy of rgpu's pins with other channels: RGPU_TOOLCHAINS_DIR."""
    out = tmp_path / "pins"
    shutil.copytree(REPO / "toolchains", out)
    for name, channel in channels.items():
        pin = out / f"{name}.toml"
        text = pin.read_text(encoding="utf-8")
        old = next(ln for ln in text.splitlines() if ln.startswith("channel = "))
        pin.write_text(text.replace(old, f'channel = "{channel}"'), encoding="utf-8")
    return out


def packaged_channel(name: str) -> str:
    text = (REPO / "toolchains" / f"{name}.toml").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("channel = "))
    return line.split('"')[1]


@needs_system_rust
@pytest.mark.parametrize("source", ["packaged", "RGPU_TOOLCHAINS_DIR"])
def test_pinned_channels(ws: Path, rustup_home: RustupState, tmp_path: Path, source: str) -> None:
    env = rustup_home.env()
    if source == "packaged":
        env.pop("RGPU_TOOLCHAINS_DIR", None)
        spirv, nvvm = packaged_channel("spirv"), packaged_channel("nvvm")
    else:
        spirv, nvvm = "nightly-2099-01-01", "nightly-2099-02-02"
        env["RGPU_TOOLCHAINS_DIR"] = str(pins_dir(tmp_path, {"spirv": spirv, "nvvm": nvvm}))
    report = doctor(env)
    spirv_line = check(report, "spirv toolchain")
    assert spirv_line["detail"].startswith(f"{spirv} is not installed")
    assert check(report, "nvvm toolchain")["detail"].startswith(f"{nvvm} is not installed")
    # `rgpu toolchain` reads the same pins.
    shown = json.loads(rgpu_in(env, "toolchain", "show", "spirv", "--json").stdout)
    assert shown["toolchain"]["channel"] == spirv and shown["toolchain"]["state"] == "missing"
    # A spirv build stops with doctor's own line and fix, before running anything.
    built = rgpu_in(env, "build", "--backend", "wgpu", cwd=ws)
    assert_clean_failure(built, ExitCode.TOOLCHAIN)
    assert f"the spirv codegen cannot run here: spirv toolchain: {spirv_line['detail']}" in (
        built.stderr
    )
    assert f"fix: {spirv_line['fix']}" in built.stderr
    # The nvvm plan compiles with the channel doctor checked.
    data = plan(env, ws, "--backend", "cuda", "--codegen", "nvvm", "--no-docker")
    assert step(data, "nvvm-build")["argv"][:2] == ["cargo", f"+{nvvm}"]
    assert nvvm in step(data, "nvvm-toolchain")["argv"]


def test_a_toolchains_dir_that_is_not_one_stops_both_the_same_way(ws: Path, tmp_path: Path) -> None:
    env = environ(RGPU_TOOLCHAINS_DIR=str(tmp_path / "nowhere"))
    said = f"RGPU_TOOLCHAINS_DIR={tmp_path / 'nowhere'} is not a directory of toolchain pins"
    for args, cwd in ((("doctor",), None), (("build", "--backend", "cuda"), ws)):
        proc = rgpu_in(env, *args, cwd=cwd)
        assert_clean_failure(proc, ExitCode.TOOLCHAIN)
        assert said in proc.stderr
