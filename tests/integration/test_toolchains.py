"""`rgpu toolchain` against rustup's real state on this machine.

Pins are written into a temporary RGPU_TOOLCHAINS_DIR so that each test names a real state:
an installed toolchain with its real commit hash, a component that toolchain lacks, a
commit hash it does not report, a channel that does not exist. stdin is never a terminal
here (run_rgpu closes it), which is the "no terminal" case. rustup can reach its server
from some machines and not from others; no test depends on which: nothing here installs
anything that exists.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.toolchains import normalize_component, split_host
from tests.conftest import run_rgpu

pytestmark = pytest.mark.skipif(shutil.which("rustup") is None, reason="rustup is not installed")
# Components a minimal toolchain usually lacks; the tests pick one this toolchain lacks.
OPTIONAL = ("rustc-dev", "llvm-bitcode-linker", "miri", "rust-src", "llvm-tools", "rust-analyzer")


def rustup(*args: str) -> str:
    return subprocess.run(["rustup", *args], capture_output=True, text=True, check=True).stdout


def default_toolchain() -> str:
    return rustup("default").split()[0]


def installed_toolchains() -> list[str]:
    return [line.split()[0] for line in rustup("toolchain", "list").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def real_toolchain() -> tuple[str, str, set[str]]:
    """(channel, commit hash, installed components) of the first installed toolchain."""
    names = installed_toolchains()
    if not names or names[0].startswith("no "):
        pytest.skip("rustup has no toolchain installed")
    name = names[0]
    vv = rustup("run", name, "rustc", "-vV")
    commit = next(ln.split(": ")[1] for ln in vv.splitlines() if ln.startswith("commit-hash"))
    comps = {normalize_component(c) for c in rustup("component", "list", "--installed",
                                                    "--toolchain", name).split()}  # fmt: skip
    return split_host(name)[0], commit, comps


def write_pin(directory: Path, name: str, channel: str, commit: str, components: list[str]) -> Path:
    directory.mkdir(exist_ok=True)
    text = (
        f'name = "{name}"\ndescription = "test pin"\nchannel = "{channel}"\n'
        f'commit_hash = "{commit}"\ncomponents = {json.dumps(components)}\n'
        'exercised_in_ci = true\n[source]\nrepository = "https://github.com/rust-lang/rust"\n'
        'rev = "test"\nfile = "none"\nconfirmed = "2026-11-22"\n'
    )
    path = directory / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def show(pins: Path, name: str) -> dict[str, object]:
    proc = run_rgpu("toolchain", "show", name, "--json", env={"RGPU_TOOLCHAINS_DIR": str(pins)})
    toolchain: dict[str, object] = json.loads(proc.stdout)["toolchain"]
    return toolchain


def test_list_matches_rustups_real_toolchain_list() -> None:
    rows = json.loads(run_rgpu("toolchain", "list", "--json").stdout)["toolchains"]
    channels = {split_host(t)[0] for t in installed_toolchains()}
    by_name = {row["name"]: row for row in rows}
    assert set(by_name) == {"spirv", "nvvm", "nvptx"}
    for name in ("spirv", "nvvm"):
        row = by_name[name]
        if row["channel"] not in channels:
            assert row["state"] == "missing"
            assert row["install_command"].startswith(
                f"rustup toolchain install {row['channel']} --profile minimal -c "
            )


def test_installed_toolchain_with_its_real_hash_is_ok_and_install_is_a_no_op(
    tmp_path: Path, real_toolchain: tuple[str, str, set[str]]
) -> None:
    channel, commit, comps = real_toolchain
    pins = tmp_path / "pins"
    write_pin(pins, "real", channel, commit, sorted(comps & {"cargo", "rustc"}))
    row = show(pins, "real")
    assert row["state"] == "ok", row
    before, default = installed_toolchains(), default_toolchain()
    for _ in range(2):  # safe to run twice, with no terminal and no --yes
        proc = run_rgpu("toolchain", "install", "real", env={"RGPU_TOOLCHAINS_DIR": str(pins)})
        assert "already installed, nothing to do" in proc.stderr
        assert "+ rustup" not in proc.stderr  # nothing was run
    assert installed_toolchains() == before
    assert default_toolchain() == default


def test_missing_component_without_terminal_fails_with_the_exact_command(
    tmp_path: Path, real_toolchain: tuple[str, str, set[str]]
) -> None:
    channel, commit, comps = real_toolchain
    absent = next((c for c in OPTIONAL if c not in comps), None)
    if absent is None:
        pytest.skip("this toolchain has every optional component installed")
    pins = tmp_path / "pins"
    write_pin(pins, "partial", channel, commit, ["rustc", absent])
    row = show(pins, "partial")
    assert row["state"] == "incomplete" and row["missing_components"] == [absent]
    env = {"RGPU_TOOLCHAINS_DIR": str(pins), "CI": "true"}
    proc = run_rgpu("toolchain", "install", "partial", env=env, check=False)
    assert proc.returncode == 11, proc.stderr
    assert f"rustup component add --toolchain {channel}" in proc.stderr
    assert absent in proc.stderr and "--yes" in proc.stderr


def test_wrong_commit_hash_is_reported_and_install_refuses_to_touch_it(
    tmp_path: Path, real_toolchain: tuple[str, str, set[str]]
) -> None:
    channel, commit, _comps = real_toolchain
    pins = tmp_path / "pins"
    write_pin(pins, "wronghash", channel, "0" * 40, ["rustc"])
    row = show(pins, "wronghash")
    assert row["state"] == "wrong commit hash"
    env = {"RGPU_TOOLCHAINS_DIR": str(pins)}
    proc = run_rgpu("toolchain", "install", "wronghash", "--yes", env=env, check=False)
    assert proc.returncode == 11
    assert f"reports commit hash {commit}" in proc.stderr
    assert f"rustup toolchain uninstall {channel}" in proc.stderr


@pytest.mark.parametrize("consent", [["--yes"], []], ids=["--yes", "RGPU_YES=1"])
def test_install_with_consent_reports_rustups_own_failure(
    tmp_path: Path, consent: list[str]
) -> None:
    pins = tmp_path / "pins"
    write_pin(pins, "ancient", "nightly-1999-01-01", "", ["rust-src"])
    env = {"RGPU_TOOLCHAINS_DIR": str(pins), **({} if consent else {"RGPU_YES": "1"})}
    before, default = installed_toolchains(), default_toolchain()
    proc = run_rgpu("toolchain", "install", "ancient", *consent, env=env, check=False)
    assert proc.returncode == 11, proc.stderr
    assert "+ rustup toolchain install nightly-1999-01-01 --profile minimal -c rust-src" in (
        proc.stderr
    )
    assert "failed with exit code" in proc.stderr
    # rustup's own error (no such release, or no network) is passed through above rgpu's.
    assert proc.stderr.index("error:") < proc.stderr.index("error: `rustup toolchain install")
    assert installed_toolchains() == before
    assert default_toolchain() == default


def test_unknown_toolchain_name_suggests_the_pinned_one() -> None:
    proc = run_rgpu("toolchain", "show", "nvvn", check=False)
    assert proc.returncode == 11
    assert "did you mean `nvvm`" in proc.stderr


def test_at_a_terminal_install_asks_and_a_no_installs_nothing(tmp_path: Path) -> None:
    import os
    import pty
    import sys

    pins = tmp_path / "pins"
    write_pin(pins, "ancient", "nightly-1999-01-01", "", ["rust-src"])
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "RGPU_YES")}
    env["RGPU_TOOLCHAINS_DIR"] = str(pins)
    primary, secondary = pty.openpty()  # a real terminal on stdin: rgpu may ask
    with os.fdopen(primary, "wb", buffering=0) as keyboard:
        keyboard.write(b"n\n")
        proc = subprocess.run(
            [sys.executable, "-m", "rgpu", "toolchain", "install", "ancient"],
            stdin=secondary, capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
    os.close(secondary)
    assert proc.returncode == 11, proc.stderr
    assert "Run `rustup toolchain install nightly-1999-01-01" in proc.stderr
    assert "did not install the ancient toolchain" in proc.stderr
    assert "+ rustup toolchain install" not in proc.stderr  # nothing ran
