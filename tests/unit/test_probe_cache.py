"""Toolchain probes are remembered while nothing they depend on changes, and only then."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rgpu.toolchains import probe_cache
from rgpu.util import cmd


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    probe_cache._loaded.clear()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "probe"
    # A program that counts its runs, so the test sees which calls really started it.
    script.write_text(
        '#!/bin/sh\necho run >> "$COUNT_FILE"\n[ -f "$FAIL_FILE" ] && exit 3\necho "answer $1"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "RGPU_CACHE_DIR": str(tmp_path / "cache"),
        "COUNT_FILE": str(tmp_path / "count"),
        "FAIL_FILE": str(tmp_path / "fail"),
    }


def probe(env: dict[str, str], watch: list[Path], arg: str = "x") -> cmd.Result:
    argv = ["probe", arg]
    return probe_cache.run(
        argv, env, watch, lambda: cmd.run(argv, env=env, capture=True, check=False, echo=False)
    )


def runs(env: dict[str, str]) -> int:
    path = Path(env["COUNT_FILE"])
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_repeated_probe_starts_the_program_once(env: dict[str, str], tmp_path: Path) -> None:
    watched = tmp_path / "settings.toml"
    watched.write_text("a")
    assert probe(env, [watched]).stdout == "answer x\n"
    probe_cache._loaded.clear()  # a new rgpu process: the answer comes from the file
    assert probe(env, [watched]).stdout == "answer x\n"
    assert runs(env) == 1
    assert probe(env, [watched], "y").stdout == "answer y\n"  # other arguments: other probe
    assert runs(env) == 2


def test_a_changed_watched_file_or_program_or_env_starts_it_again(
    env: dict[str, str], tmp_path: Path
) -> None:
    watched = tmp_path / "components"
    watched.write_text("rustc")
    probe(env, [watched])
    watched.write_text("rustc\nrust-src")
    probe(env, [watched])
    assert runs(env) == 2
    program = Path(env["PATH"].split(":")[0]) / "probe"
    program.write_text(program.read_text() + "\n")
    probe(env, [watched])
    assert runs(env) == 3
    probe({**env, "RUSTUP_TOOLCHAIN": "nightly"}, [watched])
    assert runs(env) == 4


def test_failures_are_not_remembered_and_the_cache_can_be_turned_off(
    env: dict[str, str], tmp_path: Path
) -> None:
    Path(env["FAIL_FILE"]).write_text("")
    assert probe(env, []).returncode == 3
    assert probe(env, []).returncode == 3
    assert runs(env) == 2
    os.unlink(env["FAIL_FILE"])
    off = {**env, "RGPU_NO_PROBE_CACHE": "1"}
    probe(off, [])
    probe(off, [])
    assert runs(env) == 4


def test_rustup_watch_covers_each_toolchains_components(tmp_path: Path) -> None:
    home = tmp_path / "rustup"
    (home / "toolchains" / "nightly-x" / "lib" / "rustlib").mkdir(parents=True)
    watch = probe_cache.rustup_watch({"RUSTUP_HOME": str(home)})
    assert home / "settings.toml" in watch
    assert home / "toolchains" / "nightly-x" / "lib" / "rustlib" / "components" in watch
