"""What rustup has for each pinned toolchain, and installing what is missing.

Every fact comes from the real tools: `rustup toolchain list`, `rustup run T rustc -vV`
(the commit hash) and `rustup component list --installed --toolchain T`. Installing runs
`rustup toolchain install <channel> --profile minimal -c ...` (or `rustup component add`
for an installed toolchain), which never changes the user's default toolchain.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import NamedTuple

from rgpu.errors import ToolchainError, ToolMissingError
from rgpu.toolchains.pins import Pin, normalize_component, split_host
from rgpu.toolchains.tools import parse_rustc_vv
from rgpu.util import cmd
from rgpu.util.output import reporter

RUSTUP_HINT = "install rustup from https://rustup.rs, then run `rgpu toolchain install NAME`"


def _rustup(args: list[str], env: Mapping[str, str]) -> cmd.Result:
    """Run rustup; a missing rustup says how to install it, a failing one says what failed."""
    # start-up: ~8 ms to import toolchains.probe_cache; only this path pays it
    from rgpu.toolchains import probe_cache

    argv = ["rustup", *args]
    result = probe_cache.run(
        argv,
        env,
        probe_cache.rustup_watch(env),
        lambda: cmd.run(argv, env=env, capture=True, echo=False, check=False, hint=RUSTUP_HINT),
    )
    if result.returncode != 0:
        command = cmd.format_argv(["rustup", *args])
        detail = cmd.error_line(result.stderr or result.stdout, result.returncode)
        raise ToolchainError(
            f"`{command}` failed: {detail}",
            f"run `{command}` to see rustup's whole message and fix what it reports "
            "(for a damaged toolchain: `rustup toolchain uninstall <name>`, then install again)",
        )
    return result


def rustup_toolchains(env: Mapping[str, str]) -> list[str] | None:
    """Installed rustup toolchains (full names), or None when rustup is not installed."""
    if cmd.which("rustup", env) is None:
        return None
    out = _rustup(["toolchain", "list"], env).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if not n.startswith("no")]  # "no installed toolchains"


def rustc_info(toolchain: str, env: Mapping[str, str]) -> dict[str, str]:
    return parse_rustc_vv(_rustup(["run", toolchain, "rustc", "-vV"], env).stdout)


def installed_components(toolchain: str, env: Mapping[str, str]) -> set[str]:
    out = _rustup(["component", "list", "--installed", "--toolchain", toolchain], env).stdout
    return {normalize_component(line.strip()) for line in out.splitlines() if line.strip()}


class Status(NamedTuple):
    """What rustup has for one pin."""

    pin: Pin
    toolchain: str | None  # the installed rustup toolchain that answers the pin
    rustc: Mapping[str, str]  # its `rustc -vV`
    missing: tuple[str, ...]  # pinned components not installed
    rustup_missing: bool = False

    @property
    def hash_ok(self) -> bool | None:
        """None when nothing to compare (not installed, or the pin has no hash)."""
        if self.toolchain is None or not self.pin.commit_hash:
            return None
        return self.rustc.get("commit-hash") == self.pin.commit_hash

    @property
    def ok(self) -> bool:
        return self.toolchain is not None and not self.missing and self.hash_ok is not False

    def install_argv(self) -> list[str] | None:
        """The rustup command that installs what is missing; None when nothing is."""
        if self.toolchain is None:
            comps = [a for c in self.pin.components for a in ("-c", c)]
            channel = self.pin.channel
            # --no-self-update: installing a toolchain must not update rustup itself (and
            # with CARGO_HOME elsewhere than rustup's own, that update fails with a backtrace).
            return [
                "rustup", "toolchain", "install", channel, "--profile", "minimal",
                "--no-self-update", *comps,
            ]  # fmt: skip
        if self.missing:
            return ["rustup", "component", "add", "--toolchain", self.toolchain, *self.missing]
        return None

    def summary(self) -> str:
        if self.rustup_missing:
            return "rustup is not installed"
        if self.toolchain is None:
            return f"{self.pin.channel} is not installed"
        parts = [f"{self.toolchain} ({self.rustc.get('release', '?')})"]
        if self.missing:
            parts.append(f"missing components: {', '.join(self.missing)}")
        if self.hash_ok is False:
            parts.append(
                f"commit hash {self.rustc.get('commit-hash', '?')} != pinned {self.pin.commit_hash}"
            )
        return "; ".join(parts)


def _matches(pin: Pin, toolchain: str) -> bool:
    channel, _host = split_host(toolchain)
    if pin.any_nightly:
        return channel == "nightly" or channel.startswith("nightly-")
    return channel == pin.channel


def status(pin: Pin, env: Mapping[str, str]) -> Status:
    installed = rustup_toolchains(env)
    if installed is None:
        return Status(pin, None, {}, pin.components, rustup_missing=True)
    best: Status | None = None
    for name in (t for t in installed if _matches(pin, t)):
        have = installed_components(name, env)
        missing = tuple(c for c in pin.components if c not in have)
        found = Status(pin, name, rustc_info(name, env), missing)
        if found.ok:
            return found
        if best is None or len(found.missing) < len(best.missing):
            best = found
    return best or Status(pin, None, {}, pin.components)


def yes_from_env(env: Mapping[str, str]) -> bool:
    return env.get("RGPU_YES", "").strip().lower() in ("1", "true", "yes", "on")


def can_prompt(stdin_is_tty: bool, env: Mapping[str, str]) -> bool:
    """Ask only a person at a terminal: never in CI, never with stdin closed or piped."""
    return stdin_is_tty and env.get("CI", "").strip().lower() not in ("true", "1")


class InstallResult(NamedTuple):
    before: Status
    after: Status
    ran: tuple[str, ...] | None  # the rustup command, None when nothing was missing


def _hash_mismatch_error(found: Status) -> ToolchainError:
    pin = found.pin
    return ToolchainError(
        f"toolchain {found.toolchain} reports commit hash {found.rustc.get('commit-hash')}, "
        f"but the {pin.name} pin ({pin.path.name}) needs {pin.commit_hash}",
        f"reinstall it: `rustup toolchain uninstall {pin.channel} && "
        f"rgpu toolchain install {pin.name} --yes`",
    )


def install(
    pin: Pin,
    env: Mapping[str, str],
    *,
    yes: bool,
    interactive: bool,
    confirm: Callable[[str], bool],
) -> InstallResult:
    """Install only what `status` says is missing; idempotent; checks the hash afterwards."""
    before = status(pin, env)
    if before.rustup_missing:
        raise ToolMissingError("rustup is not installed", RUSTUP_HINT.replace("NAME", pin.name))
    if before.hash_ok is False:
        raise _hash_mismatch_error(before)
    argv = before.install_argv()
    if argv is None:
        return InstallResult(before, before, None)
    command = cmd.format_argv(argv)
    if not yes:
        if not interactive:
            raise ToolchainError(
                f"the {pin.name} toolchain needs `{command}`, and rgpu asks before installing "
                "(no terminal here to ask on)",
                f"run `rgpu toolchain install {pin.name} --yes` (or set RGPU_YES=1), "
                f"or run it yourself: `{command}`",
            )
        if not confirm(f"Run `{command}`?"):
            raise ToolchainError(f"did not install the {pin.name} toolchain", f"run `{command}`")
    run_install(argv, env, f"the {pin.name} toolchain")
    after = status(pin, env)
    if after.hash_ok is False:
        raise _hash_mismatch_error(after)
    if not after.ok:
        raise ToolchainError(
            f"after `{command}` the {pin.name} toolchain is still incomplete: {after.summary()}",
            f"run `{command}` and read rustup's output",
        )
    return InstallResult(before, after, tuple(argv))


def run_install(argv: list[str], env: Mapping[str, str], what: str) -> None:
    """Run one rustup install command; a failure is one line, rustup's own `error:` line,
    never its stack backtrace (RUST_BACKTRACE=0; rustup prints one with RUST_BACKTRACE=1)."""
    command = cmd.format_argv(argv)
    with reporter().group(f"installing {what}: `{command}`"):
        result = cmd.run(argv, env={**env, "RUST_BACKTRACE": "0"}, capture=True, check=False)
    if result.returncode != 0:
        detail = cmd.error_line(result.stderr or result.stdout, result.returncode)
        raise ToolchainError(
            f"`{command}` failed (exit code {result.returncode}): {detail}",
            f"fix what rustup reports (network, disk, channel name), then run `{command}`",
        )


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment rustup probes run with: the caller's, without a toolchain override
    (RUSTUP_TOOLCHAIN would make `rustup run` and `rustc` answer for the wrong toolchain)."""
    base = dict(os.environ if env is None else env)
    base.pop("RUSTUP_TOOLCHAIN", None)
    return base
