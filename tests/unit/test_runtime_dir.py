"""The XDG_RUNTIME_DIR rgpu gives the programs it starts when the session has none."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rgpu.util import cmd


@pytest.mark.skipif(os.name != "posix", reason="XDG_RUNTIME_DIR is a POSIX thing")
def test_an_unset_runtime_dir_gets_a_private_one(tmp_path: Path) -> None:
    env = cmd.with_runtime_dir({"PATH": "/bin"})
    assert env is not None
    runtime = Path(env["XDG_RUNTIME_DIR"])
    st = runtime.lstat()
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
    assert stat.S_IMODE(st.st_mode) == 0o700
    assert env["PATH"] == "/bin"
    assert cmd.with_runtime_dir({"XDG_RUNTIME_DIR": ""})["XDG_RUNTIME_DIR"] == str(runtime)  # type: ignore[index]


def test_the_sessions_runtime_dir_is_kept(tmp_path: Path) -> None:
    mine = {"XDG_RUNTIME_DIR": str(tmp_path)}
    assert cmd.with_runtime_dir(mine) is mine


def test_a_runtime_dir_someone_else_could_read_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    shared = tmp_path / f"rgpu-runtime-{os.getuid()}"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    assert cmd.runtime_dir() is None
    assert cmd.with_runtime_dir({"PATH": "/bin"}) == {"PATH": "/bin"}
