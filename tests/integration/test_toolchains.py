"""`rgpu toolchain list|show|install` against the real rustup, in a rustup home of each
test's own (RUSTUP_HOME/CARGO_HOME): the toolchains there are FAKE toolchain directories
(conftest.fake_toolchain) that rustup reads like installed ones, so every state is the one
the test names: the pin's toolchain with its commit hash, a component missing, another
commit hash, nothing installed. Nothing here depends on this machine's own toolchains, and
nothing touches them. stdin is never a terminal (except where a test opens one), which is
the "no terminal" case."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rgpu.errors import ExitCode
from tests.conftest import REPO
from tests.integration.conftest import (
    RustupState,
    assert_clean_failure,
    fake_toolchain,
    rgpu_in,
    rustup_state,
)

COMMIT = "4f1e0cbd8c1d7b6a5e4f3c2b1a0d9e8f7c6b5a49"


@pytest.fixture
def home(tmp_path: Path) -> RustupState:
    return rustup_state(tmp_path)


def write_pin(directory: Path, name: str, channel: str, commit: str, components: list[str]) -> None:
    directory.mkdir(exist_ok=True)
    (directory / f"{name}.toml").write_text(
        f'name = "{name}"\ndescription = "test pin"\nchannel = "{channel}"\n'
        f'commit_hash = "{commit}"\ncomponents = {json.dumps(components)}\n'
        'exercised_in_ci = true\n[source]\nrepository = "https://github.com/rust-lang/rust"\n'
        'rev = "test"\nfile = "none"\nconfirmed = "2026-11-22"\n',
        encoding="utf-8",
    )


def pins_env(home: RustupState, pins: Path, **extra: str) -> dict[str, str]:
    env = home.env()
    env["RGPU_TOOLCHAINS_DIR"] = str(pins)
    for name in ("CI", "RGPU_YES"):
        env.pop(name, None)
    env.update(extra)
    return env


def show(env: dict[str, str], name: str) -> dict[str, Any]:
    proc = rgpu_in(env, "toolchain", "show", name, "--json")
    assert proc.returncode == 0, proc.stderr
    row: dict[str, Any] = json.loads(proc.stdout)["toolchain"]
    return row


def test_list_shows_rustups_state_for_every_packaged_pin(home: RustupState) -> None:
    spirv = (REPO / "toolchains" / "spirv.toml").read_text(encoding="utf-8")
    channel = next(ln for ln in spirv.splitlines() if ln.startswith("channel = ")).split('"')[1]
    commit = next(ln for ln in spirv.splitlines() if ln.startswith("commit_hash = ")).split('"')[1]
    fake_toolchain(home, channel, ["rust-src", "rustc-dev", "llvm-tools"], commit=commit)
    env = home.env()
    env.pop("RGPU_TOOLCHAINS_DIR", None)
    proc = rgpu_in(env, "toolchain", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)["toolchains"]}
    assert set(rows) == {"spirv", "nvvm", "nvptx"}
    assert rows["spirv"]["state"] == "ok" and rows["spirv"]["installed"].startswith(channel)
    assert rows["spirv"]["install_command"] is None
    nvvm = rows["nvvm"]
    assert nvvm["state"] == "missing" and nvvm["installed"] is None
    assert nvvm["install_command"] == (
        f"rustup toolchain install {nvvm['channel']} --profile minimal --no-self-update "
        "-c rust-src -c rustc-dev -c llvm-tools"
    )
    text = rgpu_in(env, "toolchain", "list")
    assert (
        f"install: rgpu toolchain install nvvm  (runs `{nvvm['install_command']}`)" in text.stdout
    )
    assert "[not exercised in rgpu's CI]" in text.stdout


def test_show_prints_the_pin_in_full(home: RustupState) -> None:
    env = home.env()
    env.pop("RGPU_TOOLCHAINS_DIR", None)
    proc = rgpu_in(env, "toolchain", "show", "nvvm")
    assert proc.returncode == 0, proc.stderr
    for field in ("file:", "channel:     nightly-", "commit hash: (not pinned upstream",
                  "components:  rust-src, rustc-dev, llvm-tools",
                  "source:      https://github.com/Rust-GPU/rust-cuda @", "[llvm] major = 7",
                  "[images]", "state:       missing"):  # fmt: skip
        assert field in proc.stdout, field


def test_the_pinned_toolchain_with_its_hash_is_ok_and_install_is_a_no_op(
    home: RustupState, tmp_path: Path
) -> None:
    fake_toolchain(home, "nightly-2026-03-03", ["rust-src"], commit=COMMIT)
    pins = tmp_path / "pins"
    write_pin(pins, "real", "nightly-2026-03-03", COMMIT, ["rust-src"])
    env = pins_env(home, pins)
    row = show(env, "real")
    assert row["state"] == "ok" and row["missing_components"] == []
    before = home.toolchains()
    for _ in range(2):  # safe to run twice, with no terminal and no --yes
        proc = rgpu_in(env, "toolchain", "install", "real")
        assert proc.returncode == 0, proc.stderr
        assert "real: already installed, nothing to do" in proc.stderr
        assert "+ rustup" not in proc.stderr  # nothing was run
    assert home.toolchains() == before


def test_a_missing_component_without_a_terminal_fails_with_the_exact_command(
    home: RustupState, tmp_path: Path
) -> None:
    name = fake_toolchain(home, "nightly-2026-03-03", ["rust-src"], commit=COMMIT)
    pins = tmp_path / "pins"
    write_pin(pins, "partial", "nightly-2026-03-03", COMMIT, ["rust-src", "rustc-dev"])
    env = pins_env(home, pins, CI="true")
    row = show(env, "partial")
    assert row["state"] == "incomplete" and row["missing_components"] == ["rustc-dev"]
    proc = rgpu_in(env, "toolchain", "install", "partial")
    assert_clean_failure(proc, ExitCode.TOOLCHAIN)
    assert f"`rustup component add --toolchain {name} rustc-dev`" in proc.stderr
    assert "rgpu toolchain install partial --yes" in proc.stderr  # or RGPU_YES=1
    assert "+ rustup" not in proc.stderr


def test_a_wrong_commit_hash_is_reported_and_install_does_not_touch_it(
    home: RustupState, tmp_path: Path
) -> None:
    fake_toolchain(home, "nightly-2026-03-03", ["rust-src"], commit=COMMIT)
    pins = tmp_path / "pins"
    write_pin(pins, "wronghash", "nightly-2026-03-03", "0" * 40, ["rust-src"])
    env = pins_env(home, pins)
    assert show(env, "wronghash")["state"] == "wrong commit hash"
    before = home.toolchains()
    proc = rgpu_in(env, "toolchain", "install", "wronghash", "--yes")
    assert_clean_failure(proc, ExitCode.TOOLCHAIN)
    assert f"reports commit hash {COMMIT}" in proc.stderr
    assert "rustup toolchain uninstall nightly-2026-03-03" in proc.stderr
    assert home.toolchains() == before


@pytest.mark.parametrize("consent", ["--yes", "RGPU_YES=1"])
def test_install_with_consent_runs_rustup_and_reports_its_failure(
    home: RustupState, tmp_path: Path, consent: str
) -> None:
    """A channel that does not exist: rustup really runs (and says there is no such
    release, or that it cannot reach its server); rgpu passes that on."""
    pins = tmp_path / "pins"
    write_pin(pins, "ancient", "nightly-1999-01-01", "", ["rust-src"])
    env = pins_env(home, pins, **({"RGPU_YES": "1"} if consent == "RGPU_YES=1" else {}))
    env["RUST_BACKTRACE"] = "1"  # rustup ends its failures with a backtrace then
    args = ["--yes"] if consent == "--yes" else []
    proc = rgpu_in(env, "toolchain", "install", "ancient", *args, timeout=300)
    assert_clean_failure(proc, ExitCode.TOOLCHAIN)
    command = "rustup toolchain install nightly-1999-01-01 --profile minimal --no-self-update"
    assert f"+ {command} -c rust-src" in proc.stderr
    # One message: rgpu's line quoting rustup's own `error:` line, never a backtrace
    # (RUST_BACKTRACE=1 in the caller's environment included).
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert line.startswith(f"error: `{command} -c rust-src` failed (exit code ")
    assert "): error: " in line
    assert "backtrace" not in proc.stderr.lower()
    assert home.toolchains() == []


def test_an_unknown_toolchain_name_suggests_the_pinned_one(home: RustupState) -> None:
    env = home.env()
    env.pop("RGPU_TOOLCHAINS_DIR", None)
    proc = rgpu_in(env, "toolchain", "show", "nvvn")
    assert_clean_failure(proc, ExitCode.TOOLCHAIN)
    assert "did you mean `nvvm`" in proc.stderr


def test_at_a_terminal_install_asks_and_a_no_installs_nothing(
    home: RustupState, tmp_path: Path
) -> None:
    pins = tmp_path / "pins"
    write_pin(pins, "ancient", "nightly-1999-01-01", "", ["rust-src"])
    env = pins_env(home, pins)
    primary, secondary = pty.openpty()  # a real terminal on stdin: rgpu may ask
    try:
        with os.fdopen(primary, "wb", buffering=0) as keyboard:
            keyboard.write(b"n\n")
            proc = subprocess.run(
                [sys.executable, "-m", "rgpu", "toolchain", "install", "ancient"],
                stdin=secondary, capture_output=True, text=True, env=env, timeout=120,
                check=False,
            )  # fmt: skip
    finally:
        os.close(secondary)
    assert_clean_failure(proc, ExitCode.TOOLCHAIN)
    assert "Run `rustup toolchain install nightly-1999-01-01" in proc.stderr
    assert "did not install the ancient toolchain" in proc.stderr
    assert "+ rustup toolchain install" not in proc.stderr  # nothing ran
    assert home.toolchains() == []
