"""Every bad input: one clear message, a distinct exit code, and the disk as it was."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rgpu.errors import ExitCode
from tests.conftest import REPO, run_rgpu


def snapshot(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("name", ["", "1abc", "fn", "my sort", "a/b", "..", "sörter", "core"])
def test_invalid_names_create_nothing(tmp_path: Path, name: str) -> None:
    out = run_rgpu("new", name, "--dir", str(tmp_path), check=False)
    assert out.returncode == ExitCode.INVALID_NAME
    assert out.stderr.startswith("error: ")
    assert "fix: " in out.stderr
    assert "Traceback" not in out.stderr
    assert snapshot(tmp_path) == []


def test_existing_destination_is_refused_without_force(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    out = run_rgpu("new", "demo", "--dir", str(tmp_path), check=False)
    assert out.returncode == ExitCode.DESTINATION
    assert "already exists and is not empty" in out.stderr
    assert "--force" in out.stderr
    assert snapshot(tmp_path) == before
    forced = run_rgpu("new", "demo", "--dir", str(tmp_path), "--force")
    assert "create  Cargo.toml" in forced.stderr
    assert (tmp_path / "demo" / "keep.txt").read_text() == "mine"


def test_unwritable_parent_is_refused(tmp_path: Path) -> None:
    # Under /tmp itself, so that an unprivileged user can reach it.
    parent = Path(tempfile.mkdtemp(prefix="rgpu-readonly-", dir="/tmp"))
    parent.chmod(0o555)
    argv = [sys.executable, "-m", "rgpu", "new", "demo", "--dir", str(parent)]
    if os.geteuid() == 0:
        # Root writes anywhere: run as an unprivileged user to make the parent unwritable.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot drop privileges")
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", check=False)
    assert out.returncode == ExitCode.DESTINATION, out.stderr
    assert "not writable" in out.stderr
    assert snapshot(parent) == []
    parent.chmod(0o755)
    parent.rmdir()


@pytest.mark.parametrize("command", [["build"], ["run"], ["test"]])
def test_commands_outside_a_workspace_say_how_to_start_one(
    tmp_path: Path, command: list[str]
) -> None:
    out = run_rgpu(*command, "-C", str(tmp_path), check=False)
    assert out.returncode == ExitCode.NOT_A_WORKSPACE
    assert "no rgpu workspace found" in out.stderr
    assert "rgpu new NAME" in out.stderr


def test_unknown_backend_is_a_usage_error(sortdemo: Path) -> None:
    out = run_rgpu("build", "--backend", "cdua", "-C", str(sortdemo), check=False)
    assert out.returncode == ExitCode.USAGE
    assert "unknown backend `cdua` (did you mean `cuda`?)" in out.stderr


def test_json_errors_are_json(tmp_path: Path) -> None:
    import json

    out = run_rgpu("build", "--json", "-C", str(tmp_path), check=False)
    data = json.loads(out.stdout)
    assert data["ok"] is False
    assert data["exit_code"] == ExitCode.NOT_A_WORKSPACE
