"""A fresh machine reaches the cuda backend with consent alone: in a rustup home of the
test's own (RUSTUP_HOME/CARGO_HOME), with the pinned nvptx nightly installed WITHOUT two of
its components (the state issue 20 met: a nightly lacking llvm-bitcode-linker) and no
usable system rustc (the pin's [system] rustc points nowhere), `rgpu doctor` names the
route, a build without --yes stops with one message, and `rgpu build --backend cuda --yes`
has the real rustup add what is missing, then builds the demo's PTX with no warning rgpu
caused. Downloads the pinned nightly (about 300 MB) from static.rust-lang.org."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from rgpu.errors import ExitCode
from tests.conftest import REPO
from tests.integration.conftest import (
    assert_clean_failure,
    check_named,
    doctor_json,
    manifest_of,
    rgpu_in,
    rustup_state,
)


def pins_without_system_rustc(directory: Path) -> Path:
    shutil.copytree(REPO / "toolchains", directory)
    nvptx = directory / "nvptx.toml"
    text = nvptx.read_text(encoding="utf-8")
    text = text.replace('rustc = "/usr/bin/rustc"', f'rustc = "{directory}/no-such-rustc"')
    nvptx.write_text(text, encoding="utf-8")
    return directory


def test_yes_installs_the_pinned_nightlys_missing_components_and_builds(tmp_path: Path) -> None:
    home = rustup_state(tmp_path)
    home.link_system()  # the host build's cargo; no pin matches it
    pins = pins_without_system_rustc(tmp_path / "pins")
    channel = re.search(r'^channel = "(.+)"', (pins / "nvptx.toml").read_text(), re.M)
    assert channel is not None
    nightly = channel.group(1)
    partial = home.rustup(
        "toolchain", "install", nightly, "--profile", "minimal", "--no-self-update", "-c",
        "rust-src",
    )  # fmt: skip
    assert partial.returncode == 0, partial.stderr
    env = home.env()
    env.update(RGPU_TOOLCHAINS_DIR=str(pins), RGPU_CACHE_DIR=str(tmp_path / "cache"))
    for name in ("CI", "RGPU_YES"):
        env.pop(name, None)

    report = doctor_json(env, "--backend", "cuda", code=ExitCode.BACKEND_UNAVAILABLE)
    line = check_named(report, "nvptx toolchain")
    assert line["status"] == "fail"
    assert "missing components: llvm-tools, llvm-bitcode-linker" in line["detail"]
    assert "route: install with --yes: `rustup component add --toolchain" in line["detail"]

    new = rgpu_in(env, "new", "sortdemo", "--dir", str(tmp_path))
    assert new.returncode == 0, new.stderr
    ws = tmp_path / "sortdemo"
    refused = rgpu_in(env, "build", "--backend", "cuda", "--arch", "sm_80", cwd=ws)
    assert_clean_failure(refused, ExitCode.TOOLCHAIN)
    assert "--yes" in refused.stderr

    built = rgpu_in(env, "build", "--backend", "cuda", "--arch", "sm_80", "--yes", cwd=ws)
    assert built.returncode == 0, built.stderr
    assert "rustup component add" in built.stderr
    assert "warning:" not in built.stderr.replace("warning: unused manifest key", ""), built.stderr
    (ptx,) = [a for a in manifest_of(ws) if a.kind == "ptx"]
    assert (ptx.codegen, ptx.target, ptx.extra["ptxas"]) == ("nvptx", "sm_80", "accepted")
    assert not any("llvm-bitcode-linker" in t for t in home.toolchains())

    after = doctor_json(env, "--backend", "cuda")
    assert check_named(after, "nvptx toolchain")["detail"].startswith(
        f"route: the pinned rustup {nightly}"
    )
    listed = rgpu_in(env, "toolchain", "list", "--json")
    rows = {r["name"]: r for r in json.loads(listed.stdout)["toolchains"]}
    assert rows["nvptx"]["state"] == "ok" and rows["nvptx"]["missing_components"] == []


def test_without_rustup_yes_runs_apt_get_as_root_and_says_what_is_still_missing(
    tmp_path: Path,
) -> None:
    """No rustup on PATH and no system rustc where the pin says (it points nowhere), as
    root with apt-get: `rgpu toolchain install nvptx --yes` runs the real `apt-get install`
    of the pin's Debian packages (installed on this machine already, so apt changes
    nothing), finds the toolchain still incomplete and says so in one message."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("needs root and apt-get (Debian), as scripts/test.sh runs")
    pins = pins_without_system_rustc(tmp_path / "pins")
    python_dir = str(Path(sys.executable).parent)
    env = {
        "PATH": os.pathsep.join([python_dir, "/usr/sbin", "/usr/bin", "/sbin", "/bin"]),
        "HOME": str(tmp_path),
        "RGPU_TOOLCHAINS_DIR": str(pins),
        "RGPU_CACHE_DIR": str(tmp_path / "cache"),
    }
    assert shutil.which("rustup", path=env["PATH"]) is None
    report = doctor_json(env, "--backend", "cuda", code=ExitCode.BACKEND_UNAVAILABLE)
    line = check_named(report, "nvptx toolchain")["detail"]
    assert "rustup is not installed" in line
    assert (
        "route: install with --yes: `apt-get install -y --no-install-recommends rustc-web" in line
    )
    done = rgpu_in(env, "toolchain", "install", "nvptx", "--yes")
    assert_clean_failure(done, ExitCode.TOOLCHAIN)
    assert "apt-get install -y --no-install-recommends rustc-web" in done.stderr
    assert "could not install the nvptx toolchain" in done.stderr
    assert "no-such-rustc" in done.stderr  # what is still missing, named
