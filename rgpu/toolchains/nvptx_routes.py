"""The nvptx codegen's toolchain: which route an nvptx build takes here, and installing one.

Routes, in order: the pinned rustup nightly with the pin's components (rust-src,
llvm-tools, llvm-bitcode-linker); else the system rustc (Debian's rustc-web) with its
library sources, nightly flags through RUSTC_BOOTSTRAP=1 (said in a plan note), LLVM's bin
dir on PATH, and an llvm-bitcode-linker built once from the rustc source package into
rgpu's cache; else, with --yes, rgpu installs one: the pinned nightly through rustup, or
(without rustup, or when rustup fails) the pin's [system] packages through apt-get as root.
In a container: the image's toolchain (IMAGE_TOOLCHAIN). RGPU_NVPTX_TOOLCHAIN=pinned or
=system takes that route only (its install with --yes, else its failing checks): a build that
must be made by one compiler says so, instead of getting whichever this machine has.

`find_toolchain` is the one answer: the codegen (rgpu/codegens/nvptx.py) builds with it,
`rgpu doctor` shows its checks, and `rgpu build --yes` and `rgpu toolchain install nvptx`
run the same `install_toolchain`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from rgpu.check import Check
from rgpu.config import cache_dir
from rgpu.errors import ConfigError, RgpuError, ToolchainError
from rgpu.toolchains import apt, rustup, tools
from rgpu.toolchains.pins import Pin, split_host
from rgpu.util import cmd
from rgpu.util.output import reporter
from rgpu.util.platform import executable

LINKER = "llvm-bitcode-linker"
NEED = ("nvptx",)
# The system toolchain's layout; toolchains/nvptx.toml's [system] table overrides these.
SYSTEM_DEFAULTS = {
    "rustc": "/usr/bin/rustc",
    "cargo": "/usr/bin/cargo",
    "llvm_bin": "/usr/lib/llvm-{major}/bin",
    "bitcode_linker_source": "/usr/src/rustc-{version}/src/tools/llvm-bitcode-linker",
}
LLVM_TOOLS = ("llc", "opt", "llvm-link")
# Which route a build may take: "auto" (the order above), "pinned" or "system" only.
ROUTE_ENV = "RGPU_NVPTX_TOOLCHAIN"
ROUTES = ("auto", "pinned", "system")


class NvptxToolchain(NamedTuple):
    """How to run the nvptx build, and doctor's lines about it (ready: none failed)."""

    kind: str  # "pinned", "system", "image", or "install" (none yet: see installs)
    cargo: tuple[str, ...]  # argv prefix: ("cargo", "+nightly-...") or ("/usr/bin/cargo",)
    rustc_version: str
    env: Mapping[str, str] = MappingProxyType({})
    notes: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    # Set when llvm-bitcode-linker must first be built from this source into linker_root.
    linker_source: Path | None = None
    linker_root: Path | None = None
    # What --yes runs, in order, until the toolchain is ready: the pinned nightly through
    # rustup, then the system packages through apt-get (as root). Empty: nothing to try.
    installs: tuple[tuple[str, ...], ...] = ()

    @property
    def ready(self) -> bool:
        return not any(c.failed for c in self.checks)

    @property
    def route(self) -> str:
        """The route a build takes, in words (doctor's first nvptx line says it too)."""
        if self.kind == "install":
            return "install with --yes: " + ", else ".join(
                f"`{cmd.format_argv(a)}`" for a in self.installs
            )
        return {"pinned": "the pinned rustup nightly", "image": "the image's rustc"}.get(
            self.kind, "the system rustc"
        )

    def require(self) -> None:
        failed = next((c for c in self.checks if c.failed), None)
        if failed is not None:
            raise ToolchainError(
                f"the nvptx codegen cannot run here: {failed.name}: {failed.detail}", failed.fix
            )


def system_layout(pin: Pin) -> dict[str, str]:
    """SYSTEM_DEFAULTS, with the pin's [system] table where it has one."""
    table = pin.table("system")
    return {k: str(table.get(k, v)) for k, v in SYSTEM_DEFAULTS.items()}


def apt_argv(
    pin: Pin, env: Mapping[str, str], *, root: bool | None = None
) -> tuple[str, ...] | None:
    """`apt-get install` of the pin's [system] packages, when this process may run it."""
    packages = [str(p) for p in pin.table("system").get("packages", [])]
    return apt.install_argv(packages, env, root=root)


def install_fix(pin: Pin, found: rustup.Status | None) -> str:
    nightly = found.install_argv() if found is not None else None
    nightly = nightly or rustup.Status(pin, None, {}, pin.components).install_argv() or []
    apt = " ".join(pin.table("system").get("packages", ["rustc-web"]))
    return (
        f"`rgpu toolchain install nvptx --yes` (runs `{cmd.format_argv(nightly)}`; without "
        f"rustup: install it from https://rustup.rs), or on Debian as root `apt-get install {apt}`"
    )


def chosen_route(env: Mapping[str, str]) -> str:
    """RGPU_NVPTX_TOOLCHAIN: auto (unset), pinned or system."""
    value = env.get(ROUTE_ENV, "").strip().lower() or "auto"
    if value not in ROUTES:
        raise ConfigError(
            f"{ROUTE_ENV}={env[ROUTE_ENV]} is not one of {', '.join(ROUTES)}",
            f"set {ROUTE_ENV} to pinned (the pinned rustup nightly), system (the system rustc) "
            "or auto (the pinned nightly when installed, else the system rustc), or unset it",
        )
    return value


def find_toolchain(pin: Pin, env: Mapping[str, str], *, root: bool | None = None) -> NvptxToolchain:
    """The one answer to "how does an nvptx build run here", for build and doctor alike:
    1. the pinned nightly, installed with its components (rustup);
    2. else the system rustc, when it has everything (Debian's rustc-web + llvm-22);
    3. else what --yes would install: the pinned nightly through rustup, then (as root with
       apt-get) the [system] packages; the toolchain is "install" and not ready;
    4. else the system toolchain's failing checks, with both fixes.
    RGPU_NVPTX_TOOLCHAIN=pinned keeps to 1 (and its rustup install), =system to 2 (and its
    apt-get install)."""
    route = chosen_route(env)
    if route == "system":
        return _system_only(pin, env, root)
    try:
        found: rustup.Status | None = rustup.status(pin, env)
        problem = None
    except RgpuError as error:  # rustup is there but failed: say so, try the system rustc
        found, problem = None, error.message
    if found is not None and found.ok and found.toolchain is not None:
        name, _ = split_host(found.toolchain)
        release = found.rustc.get("release", "?")
        comps = ", ".join(pin.components)
        return NvptxToolchain(
            kind="pinned",
            cargo=("cargo", f"+{name}"),
            rustc_version=release,
            checks=(
                Check(
                    "nvptx toolchain",
                    "ok",
                    f"route: the pinned rustup {found.toolchain} ({release})",
                    None,
                    NEED,
                ),
                Check("nvptx rust-src", "ok", "rust-src (for -Zbuild-std=core)", None, NEED),
                Check(
                    "nvptx llvm tools",
                    "ok",
                    f"{comps}, LLVM {found.rustc.get('LLVM version', '?')} of the toolchain",
                    None,
                    NEED,
                ),
            ),
        )
    if problem is None:
        problem = found.summary() if found is not None else f"{pin.channel} is not installed"
    fix = install_fix(pin, found)
    why = f"the pinned {problem}" if pin.channel in problem else f"pinned {pin.channel}: {problem}"
    if route == "pinned":
        return _pinned_missing(pin, found, f"{ROUTE_ENV}=pinned: {why}")
    system = system_toolchain(pin, env, why, fix)
    if system.ready:
        return system
    installs: list[tuple[str, ...]] = []
    if found is not None and not found.rustup_missing and found.hash_ok is not False:
        installs.append(tuple(found.install_argv() or ()))
    apt = apt_argv(pin, env, root=root)
    if apt is not None:
        installs.append(apt)
    if not installs:
        return system
    missing = next(c for c in system.checks if c.failed)
    return _install_plan(pin, f"{why}; system rustc: {missing.detail}", tuple(installs))


def _system_only(pin: Pin, env: Mapping[str, str], root: bool | None) -> NvptxToolchain:
    """RGPU_NVPTX_TOOLCHAIN=system: the system rustc, or its apt-get install (as root)."""
    packages = " ".join(pin.table("system").get("packages", ["rustc-web"]))
    fix = f"on Debian as root `apt-get install {packages}`, or unset {ROUTE_ENV}"
    system = system_toolchain(pin, env, f"{ROUTE_ENV}=system", fix)
    apt = apt_argv(pin, env, root=root)
    if system.ready or apt is None:
        return system
    missing = next(c for c in system.checks if c.failed)
    return _install_plan(pin, f"{ROUTE_ENV}=system: {missing.detail}", (apt,))


def _pinned_missing(pin: Pin, found: rustup.Status | None, why: str) -> NvptxToolchain:
    """RGPU_NVPTX_TOOLCHAIN=pinned and the pinned nightly is not ready: its rustup install,
    or (without a usable rustup) a failing check."""
    argv = found.install_argv() if found is not None and not found.rustup_missing else None
    if argv and found is not None and found.hash_ok is not False:
        return _install_plan(pin, why, (tuple(argv),))
    return NvptxToolchain(
        kind="pinned",
        cargo=("cargo", f"+{pin.channel}"),
        rustc_version="none",
        checks=(
            Check(
                "nvptx toolchain",
                "fail",
                why,
                f"{install_fix(pin, found)}; or unset {ROUTE_ENV}",
                NEED,
            ),
        ),
    )


def _install_plan(pin: Pin, why: str, installs: tuple[tuple[str, ...], ...]) -> NvptxToolchain:
    plan = NvptxToolchain(
        kind="install", cargo=("cargo", f"+{pin.channel}"), rustc_version="none", installs=installs
    )
    return plan._replace(
        checks=(
            Check(
                "nvptx toolchain",
                "fail",
                f"{why}; route: {plan.route}",
                "rgpu build --backend cuda --yes (or `rgpu toolchain install nvptx --yes`) "
                "installs it",
                NEED,
            ),
        ),
    )


def install_toolchain(
    pin: Pin,
    env: Mapping[str, str],
    *,
    yes: bool,
    interactive: bool = False,
    confirm: Callable[[str], bool] = lambda _question: False,
    root: bool | None = None,
    pinned: bool = False,
) -> NvptxToolchain:
    """Make the nvptx toolchain ready: nothing when it is; else each install of
    `find_toolchain` in turn (rustup, then apt-get) until it is, asking first unless
    `yes`. `pinned` (`rgpu toolchain install nvptx`): install the pinned nightly through
    rustup even when the system rustc would do, keeping the system route when rustup is
    not there or fails. Every failure is one message; a tool's own backtrace never is."""
    found = find_toolchain(pin, env, root=root)
    if found.ready and pinned and found.kind == "system":
        pin_install = _rustup_install(pin, env)
        if pin_install is not None:
            found = found._replace(installs=(pin_install,))
            if not (yes or interactive):  # says that rgpu asks first, with the command
                return _run_installs(pin, env, found, yes, interactive, confirm, root)
            try:
                return _run_installs(pin, env, found, yes, interactive, confirm, root)
            except ToolchainError as error:
                reporter().warn(f"{error.message}; the system rustc still builds nvptx")
                return find_toolchain(pin, env, root=root)
    if found.ready:
        return found
    if not found.installs:
        found.require()
    return _run_installs(pin, env, found, yes, interactive, confirm, root)


def _rustup_install(pin: Pin, env: Mapping[str, str]) -> tuple[str, ...] | None:
    """The rustup command that completes the pinned nightly; None without rustup."""
    try:
        status = rustup.status(pin, env)
    except RgpuError:
        return None
    if status.rustup_missing or status.hash_ok is False:
        return None
    argv = status.install_argv()
    return tuple(argv) if argv else None


def _run_installs(
    pin: Pin,
    env: Mapping[str, str],
    found: NvptxToolchain,
    yes: bool,
    interactive: bool,
    confirm: Callable[[str], bool],
    root: bool | None,
) -> NvptxToolchain:
    commands = " , else ".join(f"`{cmd.format_argv(a)}`" for a in found.installs)
    if not yes:
        if not interactive:
            raise ToolchainError(
                f"the nvptx toolchain is not installed here, and rgpu asks before installing "
                f"(no terminal here to ask on): {found.checks[0].detail}",
                f"rerun with --yes (or RGPU_YES=1), or run {commands} yourself",
            )
        if not confirm(f"Install the nvptx toolchain ({commands})?"):
            raise ToolchainError("did not install the nvptx toolchain", f"run {commands}")
    failures: list[str] = []
    for argv in found.installs:
        try:
            if argv[0] == "rustup":
                rustup.run_install(list(argv), env, f"the {pin.name} toolchain")
            else:
                apt.install(argv, env, "the system nvptx toolchain")
        except RgpuError as error:
            failures.append(error.message)
            continue
        after = find_toolchain(pin, env, root=root)
        if after.ready:
            return after
        failed = next(c for c in after.checks if c.failed)
        failures.append(f"after `{cmd.format_argv(argv)}`: {failed.name}: {failed.detail}")
    raise ToolchainError(
        "could not install the nvptx toolchain: " + "; ".join(failures),
        install_fix(pin, None),
    )


def system_toolchain(pin: Pin, env: Mapping[str, str], why: str, fix: str) -> NvptxToolchain:
    layout = system_layout(pin)
    rust = tools.system_rust(layout["rustc"], env)
    if rust is None:
        return NvptxToolchain(
            kind="system",
            cargo=("cargo",),
            rustc_version="none",
            checks=(
                Check(
                    "nvptx toolchain",
                    "fail",
                    f"{why}; no system rustc at {layout['rustc']}",
                    fix,
                    NEED,
                ),
            ),
        )
    checks = [
        Check(
            "nvptx toolchain",
            "ok",
            f"route: the system rustc {rust.release} at {rust.rustc}, used with RUSTC_BOOTSTRAP=1 "
            f"({why})",
            None,
            NEED,
        ),
        Check(
            "nvptx rust-src",
            "ok" if rust.rust_src else "fail",
            f"library sources at {rust.rust_src} (for -Zbuild-std=core)"
            if rust.rust_src
            else f"{rust.rustc} has no library sources under {rust.sysroot}/lib/rustlib/src",
            None if rust.rust_src else fix,
            NEED,
        ),
    ]
    llvm_bin = Path(layout["llvm_bin"].format(major=rust.llvm_major))
    missing = [t for t in LLVM_TOOLS if not (llvm_bin / t).is_file()]
    if rust.llvm_major is None or missing:
        checks.append(
            Check(
                "nvptx llvm tools",
                "fail",
                f"rustc's LLVM is {rust.llvm_major}; {llvm_bin} lacks {', '.join(missing)}",
                f"apt-get install llvm-{rust.llvm_major}, or {fix}",
                NEED,
            )
        )
    else:
        checks.append(
            Check(
                "nvptx llvm tools",
                "ok",
                f"{', '.join(LLVM_TOOLS)} in {llvm_bin}: LLVM {rust.llvm_major}, rustc's major",
                None,
                NEED,
            )
        )
    linker_root = cache_dir(env) / f"{LINKER}-{rust.release}"
    on_path = cmd.which(LINKER, env)
    built = linker_root / "bin" / executable(LINKER)
    source: Path | None = None
    if on_path or built.is_file():
        checks.append(Check("nvptx bitcode linker", "ok", f"{on_path or built}", None, NEED))
    else:
        candidate = Path(layout["bitcode_linker_source"].format(version=rust.release))
        if candidate.is_dir():
            source = candidate
            checks.append(
                Check(
                    "nvptx bitcode linker",
                    "ok",
                    f"not built yet: rgpu builds it once from {candidate} into {linker_root}",
                    None,
                    NEED,
                )
            )
        else:
            checks.append(
                Check(
                    "nvptx bitcode linker",
                    "fail",
                    f"no {LINKER} on PATH and no source at {candidate}",
                    fix,
                    NEED,
                )
            )
    path = os.pathsep.join([str(linker_root / "bin"), str(llvm_bin), env.get("PATH", os.defpath)])
    cargo = layout["cargo"] if Path(layout["cargo"]).is_file() else "cargo"
    return NvptxToolchain(
        kind="system",
        cargo=(cargo,),
        rustc_version=rust.release,
        env={"RUSTC": rust.rustc, "RUSTC_BOOTSTRAP": "1", "PATH": path},
        notes=(
            f"{why}: using the system rustc "
            f"{rust.release} with RUSTC_BOOTSTRAP=1 to allow nightly flags (-Zbuild-std, "
            "abi_ptx); `rgpu toolchain install nvptx --yes` installs the pin",
        ),
        checks=tuple(checks),
        linker_source=source,
        linker_root=linker_root,
    )


# The toolchain inside rgpu's offline image (Dockerfile, stage `offline`): Debian's rustc-web
# and llvm-22, and llvm-bitcode-linker baked into /usr/local/bin. Keep in step with it.
IMAGE_TOOLCHAIN = NvptxToolchain(
    kind="image",
    cargo=("/usr/bin/cargo",),
    rustc_version="image",
    env={
        "RUSTC": SYSTEM_DEFAULTS["rustc"],
        "RUSTC_BOOTSTRAP": "1",
        "PATH": "/usr/local/bin:/usr/lib/llvm-22/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
    },
    notes=(
        "in the container: the image's Debian rustc with RUSTC_BOOTSTRAP=1 to allow nightly "
        f"flags (-Zbuild-std, abi_ptx), and its {LINKER}",
    ),
)
