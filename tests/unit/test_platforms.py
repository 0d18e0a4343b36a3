"""What differs on macOS and Windows (rgpu/util/platform.py and its users), checked here by
setting sys.platform / os.name to theirs: the code paths run, on Linux. Nothing here proves
rgpu runs on those systems (docs/platforms.md: not run there)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rgpu import config
from rgpu.codegens import spirv
from rgpu.toolchains import naga
from rgpu.util import cmd, platform
from rgpu.web import browser
from tests.unit.projects import pin

SYSTEMS = {"linux": "linux", "darwin": "macos", "win32": "windows", "freebsd14": "linux"}


@pytest.mark.parametrize(("name", "kind"), sorted(SYSTEMS.items()))
def test_the_system_is_one_of_three(name: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", name)
    assert platform.system() == kind


def test_rgpus_cache_follows_each_systems_convention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = {"HOME": str(tmp_path / "h"), "USERPROFILE": str(tmp_path / "u")}
    monkeypatch.setattr(sys, "platform", "linux")
    assert config.cache_dir(home) == tmp_path / "h" / ".cache" / "rgpu"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert config.cache_dir(home) == tmp_path / "h" / "Library" / "Caches" / "rgpu"
    monkeypatch.setattr(sys, "platform", "win32")
    local = {**home, "LOCALAPPDATA": str(tmp_path / "local")}
    assert config.cache_dir(local) == tmp_path / "local" / "rgpu"
    assert config.cache_dir(home) == tmp_path / "u" / "AppData" / "Local" / "rgpu"
    for system in ("linux", "darwin", "win32"):  # the explicit settings win everywhere
        monkeypatch.setattr(sys, "platform", system)
        assert config.cache_dir({**local, "XDG_CACHE_HOME": "/x"}) == Path("/x/rgpu")
        assert config.cache_dir({**local, "RGPU_CACHE_DIR": "/y"}) == Path("/y")


def test_tools_rgpu_installs_are_exe_files_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"RGPU_CACHE_DIR": str(tmp_path), "PATH": str(tmp_path / "empty")}
    monkeypatch.setattr(sys, "platform", "win32")
    found = spirv.CODEGEN.toolchain(pin("spirv"), None, env)  # type: ignore[arg-type]
    assert found.cargo_gpu.name == "cargo-gpu.exe"
    tool = naga.find(pin("spirv"), env)
    assert tool is not None and tool.binary.name == "rgpu-naga.exe"
    monkeypatch.setattr(sys, "platform", "darwin")
    found = spirv.CODEGEN.toolchain(pin("spirv"), None, env)  # type: ignore[arg-type]
    assert found.cargo_gpu.name == "cargo-gpu"


def test_chrome_is_found_where_macos_and_windows_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path)}
    monkeypatch.setattr(sys, "platform", "darwin")
    assert browser.find_chromium(env) is None
    app = tmp_path / "Applications" / "Google Chrome.app" / "Contents" / "MacOS" / "Google Chrome"
    app.parent.mkdir(parents=True)
    app.write_text("")
    assert browser.find_chromium(env) == str(app)
    monkeypatch.setattr(sys, "platform", "win32")
    programs = {"PATH": env["PATH"], "PROGRAMFILES": str(tmp_path / "pf")}
    assert browser.find_chromium(programs) is None
    exe = tmp_path / "pf" / "Google" / "Chrome" / "Application" / "chrome.exe"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    assert browser.find_chromium(programs) == str(exe)


class FakeProcess:
    pid = 1234567

    def __init__(self) -> None:
        self.calls: list[str] = []

    def terminate(self) -> None:
        self.calls.append("terminate")

    def kill(self) -> None:
        self.calls.append("kill")


def test_windows_stops_the_process_itself_posix_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = FakeProcess()
    monkeypatch.setattr(os, "name", "nt")
    cmd.stop_group(proc, kill=False)  # type: ignore[arg-type]
    cmd.stop_group(proc, kill=True)  # type: ignore[arg-type]
    assert proc.calls == ["terminate", "kill"]
    monkeypatch.setattr(os, "name", "posix")
    signals: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda pid, sig: signals.append((pid, sig)), raising=False)
    cmd.stop_group(proc, kill=False)  # type: ignore[arg-type]
    assert proc.calls == ["terminate", "kill"] and signals == [(1234567, 15)]
