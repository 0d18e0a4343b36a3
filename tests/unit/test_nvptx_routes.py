"""Which route an nvptx build takes (toolchains.nvptx_routes.find_toolchain, the one answer
build and doctor share), and what `--yes` installs: each machine state made here with FAKE programs
(a rustup, an apt-get, a system rustc as /bin/sh scripts), never this machine's toolchains.
The real rustup install of the pinned nightly is in tests/integration/test_nvptx_install.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.errors import ConfigError, ToolchainError
from rgpu.toolchains import nvptx_routes
from rgpu.toolchains.pins import Pin
from tests.unit.projects import fake_program, pin
from tests.unit.test_nvptx import system_pin
from tests.unit.test_toolchains import HOST, fake_rustup

PIN = pin("nvptx")
ALL = ["rust-src", "llvm-tools", "llvm-bitcode-linker"]


def no_system(base: Pin, tmp_path: Path) -> Pin:
    """The pin with its system rustc somewhere that does not exist."""
    table = {**base.table("system"), "rustc": str(tmp_path / "no" / "rustc")}
    return base._replace(tables={**base.tables, "system": table})


def machine(tmp_path: Path, toolchains: dict[str, list[str]] | None) -> dict[str, str]:
    """PATH with a fake rustup holding `toolchains` (None: no rustup at all)."""
    if toolchains is None:
        (tmp_path / "bin").mkdir(parents=True, exist_ok=True)
        env = {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path)}
    else:
        env = fake_rustup(tmp_path, toolchains, commit=PIN.commit_hash)
    return {**env, "RGPU_CACHE_DIR": str(tmp_path / "cache"), "RGPU_NO_PROBE_CACHE": "1"}


def test_the_pinned_nightly_missing_a_component_is_installed_by_rustup_with_yes(
    tmp_path: Path,
) -> None:
    env = machine(tmp_path, {f"nightly-2026-10-30-{HOST}": ["rust-src", "llvm-tools"]})
    found = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=False)
    assert found.kind == "install" and not found.ready
    assert found.installs == (
        ("rustup", "component", "add", "--toolchain", f"nightly-2026-10-30-{HOST}",
         "llvm-bitcode-linker"),
    )  # fmt: skip
    (check,) = found.checks
    assert "lacks" not in check.detail and "missing components: llvm-bitcode-linker" in check.detail
    assert "route: install with --yes: `rustup component add" in check.detail
    assert check.fix is not None and "--yes" in check.fix


def test_no_pinned_nightly_is_installed_with_every_component_and_no_self_update(
    tmp_path: Path,
) -> None:
    env = machine(tmp_path, {f"nightly-{HOST}": ALL})  # another nightly does not count
    (argv,) = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=False).installs
    assert argv == (
        "rustup", "toolchain", "install", "nightly-2026-10-30", "--profile", "minimal",
        "--no-self-update", "-c", "rust-src", "-c", "llvm-tools", "-c", "llvm-bitcode-linker",
    )  # fmt: skip


def test_a_ready_system_toolchain_is_used_before_installing_anything(tmp_path: Path) -> None:
    env = machine(tmp_path, {})
    found = nvptx_routes.find_toolchain(system_pin(tmp_path), env, root=True)  # type: ignore[arg-type]
    assert found.kind == "system" and found.ready and found.installs == ()
    assert found.checks[0].detail.startswith("route: the system rustc 1.96.0")
    assert "nightly-2026-10-30 is not installed" in found.checks[0].detail


def test_without_rustup_root_with_apt_get_takes_the_debian_packages(tmp_path: Path) -> None:
    env = machine(tmp_path, None)
    fake_program(tmp_path / "bin", "apt-get", "exit 0\n")
    found = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=True)
    assert found.installs == (
        ("apt-get", "install", "-y", "--no-install-recommends", "rustc-web", "cargo-web",
         "rust-web-src", "llvm-22"),
    )  # fmt: skip
    assert "rustup is not installed" in found.checks[0].detail
    # With rustup too, rustup comes first and apt-get is the fallback.
    env = machine(tmp_path / "r", {})
    fake_program(tmp_path / "r" / "bin", "apt-get", "exit 0\n")
    found = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=True)
    assert [a[0] for a in found.installs] == ["rustup", "apt-get"]


@pytest.mark.parametrize("root", [False, True])
def test_no_rustup_and_no_apt_is_one_message_with_both_fixes(tmp_path: Path, root: bool) -> None:
    env = machine(tmp_path, None)  # no apt-get on PATH, or not root
    if not root:
        fake_program(tmp_path / "bin", "apt-get", "exit 0\n")
    found = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=root)
    assert found.kind == "system" and not found.ready and found.installs == ()
    with pytest.raises(ToolchainError) as raised:
        nvptx_routes.install_toolchain(no_system(PIN, tmp_path), env, yes=True, root=root)
    error = raised.value
    assert "no system rustc" in error.message and "rustup is not installed" in error.message
    assert error.hint is not None
    assert "https://rustup.rs" in error.hint and "apt-get install rustc-web" in error.hint


def test_without_consent_nothing_is_installed_and_the_commands_are_named(tmp_path: Path) -> None:
    env = machine(tmp_path, {})
    with pytest.raises(ToolchainError) as raised:
        nvptx_routes.install_toolchain(no_system(PIN, tmp_path), env, yes=False, root=False)
    assert "asks before installing" in raised.value.message
    assert raised.value.hint is not None and "--yes" in raised.value.hint
    assert not (tmp_path / "rustup-home" / "toolchains" / f"nightly-2026-10-30-{HOST}").exists()


def test_yes_installs_the_pinned_nightly_and_the_build_uses_it(tmp_path: Path) -> None:
    env = machine(tmp_path, {})
    found = nvptx_routes.install_toolchain(no_system(PIN, tmp_path), env, yes=True, root=False)
    assert found.kind == "pinned" and found.ready
    assert found.cargo == ("cargo", "+nightly-2026-10-30")


FAILING_RUSTUP = """
case "$1 $2" in
  "toolchain list") echo "stable-{host}" ;;
  "toolchain install")
    echo "error: could not download file from 'https://static.rust-lang.org/x.toml.sha256'" >&2
    echo "Stack backtrace:" >&2
    echo "   0: rustup::dist::download" >&2
    exit 1 ;;
  *) echo "error: unexpected: $*" >&2; exit 1 ;;
esac
"""


def test_a_failing_rustup_falls_back_to_apt_and_its_backtrace_is_never_the_message(
    tmp_path: Path,
) -> None:
    env = machine(tmp_path, None)
    fake_program(tmp_path / "bin", "rustup", FAILING_RUSTUP.format(host=HOST))
    # apt-get "installs" the system toolchain: afterwards the pin's [system] rustc exists.
    base = system_pin(tmp_path / "sys")
    table = {**base.table("system"), "packages": ["rustc-web"]}  # type: ignore[attr-defined]
    target = base._replace(tables={**base.tables, "system": table})
    rustc = Path(target.table("system")["rustc"])  # type: ignore[attr-defined]
    hidden = rustc.with_name("rustc.later")
    rustc.rename(hidden)
    fake_program(tmp_path / "bin", "apt-get", f'/bin/mv "{hidden}" "{rustc}"\n')
    found = nvptx_routes.install_toolchain(target, env, yes=True, root=True)  # type: ignore[arg-type]
    assert found.kind == "system" and found.ready
    # The same machine without apt-get: one message, rustup's own error line, no backtrace.
    rustc.rename(hidden)
    (tmp_path / "bin" / "apt-get").unlink()
    with pytest.raises(ToolchainError) as raised:
        nvptx_routes.install_toolchain(target, env, yes=True, root=True)  # type: ignore[arg-type]
    message = raised.value.message
    assert "could not download file" in message
    assert "backtrace" not in message.lower() and "rustup::" not in message


def test_toolchain_install_installs_the_pin_even_where_the_system_rustc_would_do(
    tmp_path: Path,
) -> None:
    env = machine(tmp_path, {})
    target = system_pin(tmp_path)
    assert nvptx_routes.find_toolchain(target, env, root=False).kind == "system"  # type: ignore[arg-type]
    with pytest.raises(ToolchainError, match="asks before installing"):
        nvptx_routes.install_toolchain(target, env, yes=False, root=False, pinned=True)  # type: ignore[arg-type]
    found = nvptx_routes.install_toolchain(target, env, yes=True, root=False, pinned=True)  # type: ignore[arg-type]
    assert found.kind == "pinned" and found.cargo == ("cargo", "+nightly-2026-10-30")
    # A build (pinned=False) on the same machine uses what is there and installs nothing.
    again = machine(tmp_path / "b", {})
    assert nvptx_routes.install_toolchain(target, again, yes=True, root=False).kind == "system"  # type: ignore[arg-type]


# --- RGPU_NVPTX_TOOLCHAIN: one route, chosen -----------------------------------------------


def test_the_system_route_chosen_is_taken_even_with_the_pinned_nightly_installed(
    tmp_path: Path,
) -> None:
    env = machine(tmp_path, {f"nightly-2026-10-30-{HOST}": ALL})
    both = system_pin(tmp_path)
    assert nvptx_routes.find_toolchain(both, env).kind == "pinned"  # type: ignore[arg-type]
    env[nvptx_routes.ROUTE_ENV] = "system"
    found = nvptx_routes.find_toolchain(both, env)  # type: ignore[arg-type]
    assert found.kind == "system" and found.ready
    assert "RGPU_NVPTX_TOOLCHAIN=system" in found.checks[0].detail


def test_the_system_route_chosen_without_a_system_rustc_installs_packages_or_fails(
    tmp_path: Path,
) -> None:
    env = {
        **machine(tmp_path, {f"nightly-2026-10-30-{HOST}": ALL}),
        "RGPU_NVPTX_TOOLCHAIN": "system",
    }
    bare = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=False)
    assert bare.kind == "system" and not bare.ready and bare.installs == ()
    assert "apt-get install rustc-web" in (bare.checks[0].fix or "")
    fake_program(tmp_path / "bin", "apt-get", "exit 0\n")
    as_root = nvptx_routes.find_toolchain(no_system(PIN, tmp_path), env, root=True)
    assert as_root.kind == "install"
    assert [a[:2] for a in as_root.installs] == [("apt-get", "install")]  # never rustup


def test_the_pinned_route_chosen_never_takes_the_system_rustc(tmp_path: Path) -> None:
    env = {**machine(tmp_path, {}), "RGPU_NVPTX_TOOLCHAIN": "pinned"}
    system = system_pin(tmp_path)  # a complete system toolchain, not taken
    found = nvptx_routes.find_toolchain(system, env)  # type: ignore[arg-type]
    assert found.kind == "install" and not found.ready
    (argv,) = found.installs
    assert argv[:4] == ("rustup", "toolchain", "install", "nightly-2026-10-30")
    assert "RGPU_NVPTX_TOOLCHAIN=pinned" in found.checks[0].detail
    no_rustup = {**machine(tmp_path / "none", None), "RGPU_NVPTX_TOOLCHAIN": "pinned"}
    missing = nvptx_routes.find_toolchain(system, no_rustup)  # type: ignore[arg-type]
    assert missing.kind == "pinned" and not missing.ready and missing.installs == ()
    assert "https://rustup.rs" in (missing.checks[0].fix or "")


def test_an_unknown_route_is_a_configuration_error(tmp_path: Path) -> None:
    env = {**machine(tmp_path, {}), "RGPU_NVPTX_TOOLCHAIN": "nightly"}
    with pytest.raises(ConfigError, match="RGPU_NVPTX_TOOLCHAIN=nightly is not one of"):
        nvptx_routes.find_toolchain(PIN, env)
