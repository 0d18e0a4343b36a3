"""The programs a build runs on the artifacts (ptxas, spirv-opt, spirv-val), on real machine
states: a PATH without them (links to everything else PATH holds) and an empty tools dir
(RGPU_TOOLS_DIR; rgpu's toolchain cache stays where it is). Without --yes a build that needs
spirv-opt stops before any compiler starts, exit 6, with the fix; with --yes rgpu downloads
the pinned package (Debian's spirv-tools .deb, PyPI's nvidia-cuda-nvcc wheel: one download
each, from the real registries) into the tools dir and the build goes on with it; doctor
asks the same finder and says so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from rgpu.errors import ExitCode
from rgpu.toolchains.tools import NVCC_WHEEL, SPIRV_TOOLS_DEB
from tests.conftest import run_rgpu
from tests.integration.conftest import (
    COLD_BUILD_TIMEOUT,
    CUDA_ARCHS,
    assert_clean_failure,
    check_named,
    doctor_json,
    environ,
    json_result,
    kernels_dir,
    manifest_of,
    path_without,
    python_without_ptxas,
    rgpu_in,
)

SPIRV_TOOLS = ("spirv-opt", "spirv-val")


def test_doctor_reports_every_build_tool_where_a_build_finds_it() -> None:
    report = doctor_json(environ())
    assert sorted(report["tools"]) == ["ptxas", "spirv-opt", "spirv-val"]
    for name, tool in report["tools"].items():
        assert tool["path"] and tool["version"], tool  # this machine has all three
        assert tool["source"] == "this system" and tool["fix"] is None
        assert check_named(report, name)["status"] == "ok"
        assert tool["path"] in check_named(report, name)["detail"]


@pytest.fixture(scope="module")
def no_spirv_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A minimal workspace, and an environment without SPIRV-Tools: PATH lacks spirv-opt
    and spirv-val, and rgpu's tools dir is empty."""
    root = tmp_path_factory.mktemp("spirv-tools")
    run_rgpu("new", "toolsdemo", "--template", "minimal", "--dir", str(root))
    tools = root / "tools"
    env = environ(PATH=path_without(SPIRV_TOOLS, root / "bin"), RGPU_TOOLS_DIR=str(tools))
    for name in SPIRV_TOOLS:
        assert shutil.which(name, path=env["PATH"]) is None
    return {"ws": root / "toolsdemo", "env": env, "tools": tools}


def test_without_spirv_opt_the_build_stops_before_compiling_with_the_fix(
    no_spirv_tools: dict[str, Any],
) -> None:
    ws, env, tools = no_spirv_tools["ws"], no_spirv_tools["env"], no_spirv_tools["tools"]
    started = time.monotonic()
    proc = rgpu_in(env, "build", "--backend", "cuda,wgpu,ash", "--arch", "sm_90", cwd=ws)
    assert_clean_failure(proc, ExitCode.TOOL_MISSING)
    assert time.monotonic() - started < 60  # no compile first (issue 36: 6 minutes of it)
    assert "kernel ->" not in proc.stderr and "Compiling" not in proc.stderr, proc.stderr
    assert "spirv-opt (spirv-tools) is not installed" in proc.stderr
    assert "stopped before compiling" in proc.stderr
    assert "rerun `rgpu build` with --yes" in proc.stderr
    assert "`sudo apt-get install spirv-tools`" in proc.stderr
    assert "spirv-opt = false" in proc.stderr
    assert not tools.exists()  # nothing downloaded without consent
    # doctor asks the same finder: the spirv backends do not build here, with the same fix.
    report = doctor_json(env)
    assert report["tools"]["spirv-opt"]["path"] is None
    assert check_named(report, "spirv-opt")["status"] == "fail"
    assert check_named(report, "spirv-val")["status"] == "warn"
    for backend in ("wgpu", "ash"):
        verdict = report["backends"][backend]
        assert not verdict["builds"] and verdict["why"].startswith("spirv-opt: not found")
        assert "rerun `rgpu build` with --yes" in verdict["fix"]


def test_with_yes_spirv_tools_land_in_the_cache_and_the_build_goes_on(
    no_spirv_tools: dict[str, Any],
) -> None:
    ws, env, tools = no_spirv_tools["ws"], no_spirv_tools["env"], no_spirv_tools["tools"]
    proc = rgpu_in(env, "build", "--backend", "wgpu", "--yes", cwd=ws, timeout=COLD_BUILD_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert f"downloading {SPIRV_TOOLS_DEB.label}" in proc.stderr
    home = tools / f"{SPIRV_TOOLS_DEB.name}-{SPIRV_TOOLS_DEB.version}"
    for name in SPIRV_TOOLS:
        assert (home / "bin" / name).is_file()
    assert (home / "LICENSE").is_file()
    (spv,) = [a for a in manifest_of(ws) if a.kind == "spirv"]
    assert spv.extra["spirv_opt"]["tools"].startswith("SPIRV-Tools v2023.1")
    assert spv.extra["spirv_val"] == "accepted"
    report = doctor_json(env)
    for name in SPIRV_TOOLS:
        tool = report["tools"][name]
        assert tool["source"] == "rgpu's cache" and tool["path"] == str(home / "bin" / name)
    assert report["backends"]["wgpu"]["builds"]


def test_with_yes_ptxas_lands_in_the_cache_and_the_cuda_build_embeds_sass(
    cuda_ws: Path, tmp_path: Path
) -> None:
    """No ptxas on PATH, in a wheel or under CUDA_PATH: with --yes rgpu takes ptxas out of
    PyPI's nvidia-cuda-nvcc wheel into its tools dir, and every PTX gets its cubin."""
    python = python_without_ptxas(tmp_path)
    ws = tmp_path / "copy"
    shutil.copytree(cuda_ws, ws, symlinks=True)
    tools = tmp_path / "tools"
    env = environ(
        drop=("CUDA_PATH", "CUDA_HOME"),
        PATH=path_without(("ptxas",), tmp_path / "bin"),
        RGPU_TOOLS_DIR=str(tools),
    )
    built = subprocess.run([str(python), "-m", "rgpu", "build", "--backend", "cuda", "--yes"],
                           cwd=ws, env=env, capture_output=True, text=True, check=False,
                           stdin=subprocess.DEVNULL, timeout=COLD_BUILD_TIMEOUT)  # fmt: skip
    assert built.returncode == 0, built.stderr[-6000:]
    assert f"downloading {NVCC_WHEEL.label}" in built.stderr
    ptxas = tools / f"{NVCC_WHEEL.name}-{NVCC_WHEEL.version}" / "bin" / "ptxas"
    assert ptxas.is_file()
    assert "JIT-compiles" not in built.stderr
    cubins = [a for a in manifest_of(ws) if a.kind == "cubin"]
    assert sorted(a.target for a in cubins) == sorted(CUDA_ARCHS)
    for cubin in cubins:
        assert "release 13.5" in cubin.extra["ptxas"]
        assert (kernels_dir(ws) / cubin.path).is_file()
    # doctor, run by the same Python, finds the ptxas the build used.
    doctor = subprocess.run([str(python), "-m", "rgpu", "doctor", "--json"], env=env,
                            capture_output=True, text=True, check=False)  # fmt: skip
    found = json.loads(doctor.stdout)["tools"]["ptxas"]
    assert found["path"] == str(ptxas) and found["source"] == "rgpu's cache"


def test_bad_tools_dir_is_refused_not_overwritten(
    no_spirv_tools: dict[str, Any], tmp_path: Path
) -> None:
    """A directory rgpu would install into that it did not make: refused with the fix, the
    user's file untouched."""
    tools = tmp_path / "tools"
    theirs = tools / f"{SPIRV_TOOLS_DEB.name}-{SPIRV_TOOLS_DEB.version}" / "notes.txt"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("mine\n")
    env = {**no_spirv_tools["env"], "RGPU_TOOLS_DIR": str(tools)}
    proc = rgpu_in(env, "build", "--backend", "wgpu", "--yes", cwd=no_spirv_tools["ws"])
    assert_clean_failure(proc, ExitCode.TOOL_MISSING)
    assert "is not rgpu's" in proc.stderr and "RGPU_TOOLS_DIR" in proc.stderr
    assert theirs.read_text() == "mine\n"


def test_toolchain_install_spirv_fetches_the_spirv_tools_too(
    no_spirv_tools: dict[str, Any], tmp_path: Path
) -> None:
    """`rgpu toolchain install spirv` makes a spirv build ready, its tools with it: without
    consent it stops with the fix and downloads nothing; with --yes it obtains them as
    `rgpu build --yes` does (the pinned toolchain itself is installed on this machine)."""
    tools = tmp_path / "tools"
    env = {**no_spirv_tools["env"], "RGPU_TOOLS_DIR": str(tools)}
    refused = rgpu_in(env, "toolchain", "install", "spirv")
    assert_clean_failure(refused, ExitCode.TOOL_MISSING)
    assert "spirv-opt (spirv-tools) is not installed" in refused.stderr
    assert not tools.exists()
    proc = rgpu_in(env, "toolchain", "install", "spirv", "--yes")
    assert proc.returncode == 0, proc.stderr[-4000:]
    home = tools / f"{SPIRV_TOOLS_DEB.name}-{SPIRV_TOOLS_DEB.version}" / "bin"
    for name in SPIRV_TOOLS:
        assert (home / name).is_file()
        assert f"spirv: {name} downloaded ({home / name})" in proc.stderr
    again = rgpu_in(env, "toolchain", "install", "spirv", "--yes", "--json")
    assert "downloading" not in again.stderr
    assert f"spirv: spirv-opt found ({home / 'spirv-opt'})" in again.stderr
    result = json_result(again, "toolchain-install.schema.json")
    assert result["toolchain"] == "spirv" and result["tools"] == {
        name: {"path": str(home / name), "downloaded": False} for name in SPIRV_TOOLS
    }


def test_toolchain_install_nvptx_fetches_ptxas_too(tmp_path: Path) -> None:
    """The cuda route's toolchain install obtains ptxas (PyPI's nvidia-cuda-nvcc wheel), the
    same download `rgpu build --yes` makes, so the first cuda build embeds SASS."""
    python = python_without_ptxas(tmp_path)
    tools = tmp_path / "tools"
    env = environ(
        drop=("CUDA_PATH", "CUDA_HOME"),
        PATH=path_without(("ptxas",), tmp_path / "bin"),
        RGPU_TOOLS_DIR=str(tools),
    )
    proc = subprocess.run([str(python), "-m", "rgpu", "toolchain", "install", "nvptx", "--yes"],
                          env=env, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL, timeout=COLD_BUILD_TIMEOUT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    ptxas = tools / f"{NVCC_WHEEL.name}-{NVCC_WHEEL.version}" / "bin" / "ptxas"
    assert ptxas.is_file() and f"nvptx: ptxas downloaded ({ptxas})" in proc.stderr


def test_without_a_cxx_compiler_a_first_spirv_build_stops_before_compiling(
    no_spirv_tools: dict[str, Any], tmp_path: Path
) -> None:
    """rust-gpu's first build compiles SPIRV-Tools' C++ (found on a clean Debian image: it
    failed after 2 minutes, `failed to find tool "c++"`). No C++ compiler on PATH and a
    cache without rust-gpu's compiler: doctor says so, and a build stops at once, exit 6."""
    cxx = ("c++", "g++", "clang++", "x86_64-linux-gnu-g++")
    env = {
        **environ(drop=("CXX",), PATH=path_without(cxx, tmp_path / "bin")),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # cargo-gpu's: rust-gpu not built there
        "RGPU_CACHE_DIR": str(tmp_path / "rgpu-cache"),
    }
    report = doctor_json(env)
    check = check_named(report, "spirv C++ compiler")
    assert check["status"] == "fail" and "sudo apt-get install g++" in check["fix"]
    started = time.monotonic()
    proc = rgpu_in(env, "build", "--backend", "wgpu", "--yes", cwd=no_spirv_tools["ws"])
    assert_clean_failure(proc, ExitCode.TOOL_MISSING)
    assert time.monotonic() - started < 60 and "Compiling" not in proc.stderr, proc.stderr
    assert "no C++ compiler" in proc.stderr and "stopped before compiling" in proc.stderr
    assert "sudo apt-get install g++" in proc.stderr
