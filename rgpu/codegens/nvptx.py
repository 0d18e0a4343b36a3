"""Codegen `nvptx`: rustc's own nvptx64-nvidia-cuda target (PTX through LLVM).

One `cargo rustc` per CUDA arch (confirmed with rustc 1.96.0 + LLVM 22.1 here): `--target
nvptx64-nvidia-cuda -Zbuild-std=core --crate-type cdylib`, `-Ctarget-cpu=sm_XX` in
CARGO_ENCODED_RUSTFLAGS (so core is built for the same arch), and the target's default
linker flavor `llbc` (`rustc --print target-spec-json`), which runs `llvm-bitcode-linker`;
that in turn calls `llvm-link`, `opt`, `llc` of rustc's LLVM major. The kernel crate gets
the nightly feature the `#[rgpu::kernel]` entry points use (`abi_ptx` for `extern
"ptx-kernel"`) with `-Zcrate-attr`, so its own source needs no nightly attribute; workgroup
arrays are written by the `rgpu` crate's macros, which allow `asm_experimental_arch` where
they expand.

Toolchain (the "route"), in order: the pinned rustup nightly with the pin's components
(rust-src, llvm-tools, llvm-bitcode-linker); else the system rustc (Debian's rustc-web) with
its library sources, nightly flags through RUSTC_BOOTSTRAP=1 (said in a plan note), LLVM's
bin dir on PATH, and an llvm-bitcode-linker built once from the rustc source package into
rgpu's cache; else, with --yes, rgpu installs one: the pinned nightly through rustup, or
(without rustup, or when rustup fails) the pin's [system] packages through apt-get as root.
`find_toolchain` is the one answer: `rgpu doctor` shows its checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from rgpu.artifacts import ptx
from rgpu.artifacts.manifest import Artifact, describe
from rgpu.codegens import KernelBuild
from rgpu.config import cache_dir
from rgpu.containers.placement import Placement
from rgpu.doctor.check import Check
from rgpu.errors import ArtifactError, RgpuError, ToolchainError
from rgpu.plan import Plan, Step
from rgpu.toolchains import rustup, tools
from rgpu.toolchains.pins import Pin, split_host
from rgpu.util import cmd
from rgpu.util.files import write_bytes_if_changed
from rgpu.util.output import reporter

TARGET = "nvptx64-nvidia-cuda"
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
# Nightly features the generated entry points use, given to the kernel crate only: every
# kernel is an `extern "ptx-kernel"` fn. (Workgroup arrays need asm_experimental_arch, which
# the `rgpu` crate's own macros allow where they expand: a crate-level feature would be
# "declared but not used" in a kernel crate without `Shared`.)
CRATE_FEATURES = ("abi_ptx",)
# Variables that would leak the caller's cargo setup into the nested kernel build.
UNSET_ENV = (
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
)


class NvptxToolchain(NamedTuple):
    """How to run the nvptx build, and doctor's lines about it (ready: none failed)."""

    kind: str  # "rustup-nightly", "system", "image", or "install" (none yet: see installs)
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
        return {"rustup-nightly": "the pinned rustup nightly", "image": "the image's rustc"}.get(
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
    """`apt-get install` of the pin's [system] packages, when this process may run it: as
    root, with apt-get on PATH. None otherwise (no sudo: rgpu never asks for a password)."""
    packages = [str(p) for p in pin.table("system").get("packages", [])]
    if root is None:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not packages or not root or cmd.which("apt-get", env) is None:
        return None
    return ("apt-get", "install", "-y", "--no-install-recommends", *packages)


def install_fix(pin: Pin, found: rustup.Status | None) -> str:
    nightly = found.install_argv() if found is not None else None
    nightly = nightly or rustup.Status(pin, None, {}, pin.components).install_argv() or []
    apt = " ".join(pin.table("system").get("packages", ["rustc-web"]))
    return (
        f"`rgpu toolchain install nvptx --yes` (runs `{cmd.format_argv(nightly)}`; without "
        f"rustup: install it from https://rustup.rs), or on Debian as root `apt-get install {apt}`"
    )


def find_toolchain(pin: Pin, env: Mapping[str, str], *, root: bool | None = None) -> NvptxToolchain:
    """The one answer to "how does an nvptx build run here", for build and doctor alike:
    1. the pinned nightly, installed with its components (rustup);
    2. else the system rustc, when it has everything (Debian's rustc-web + llvm-22);
    3. else what --yes would install: the pinned nightly through rustup, then (as root with
       apt-get) the [system] packages; the toolchain is "install" and not ready;
    4. else the system toolchain's failing checks, with both fixes."""
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
            kind="rustup-nightly",
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
    plan = NvptxToolchain(
        kind="install",
        cargo=("cargo", f"+{pin.channel}"),
        rustc_version="none",
        installs=tuple(installs),
    )
    return plan._replace(
        checks=(
            Check(
                "nvptx toolchain",
                "fail",
                f"{why}; system rustc: {missing.detail}; route: {plan.route}",
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
                run_apt(argv, env)
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


def run_apt(argv: tuple[str, ...], env: Mapping[str, str]) -> None:
    """apt-get install, non-interactive; on a failure, `apt-get update` once and again (a
    fresh machine or container has no package lists yet)."""
    apt_env = {**env, "DEBIAN_FRONTEND": "noninteractive"}
    command = cmd.format_argv(argv)
    with reporter().group(f"installing the system nvptx toolchain: `{command}`"):
        result = cmd.run(argv, env=apt_env, capture=True, check=False)
        if result.returncode != 0:
            cmd.run(("apt-get", "update"), env=apt_env, capture=True, check=False)
            result = cmd.run(argv, env=apt_env, capture=True, check=False)
    if result.returncode != 0:
        detail = cmd.error_line(result.stderr or result.stdout, result.returncode)
        raise ToolchainError(
            f"`{command}` failed (exit code {result.returncode}): {detail}",
            f"run `{command}` and fix what apt-get reports",
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
    built = linker_root / "bin" / LINKER
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
            f"the pinned {pin.channel} is not installed: using the system rustc "
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


def linker_steps(toolchain: NvptxToolchain, cwd: Path) -> tuple[Step, ...]:
    """Build llvm-bitcode-linker once into rgpu's cache. The source is copied out of the
    rustc tree first: inside it, cargo would treat it as a member of rustc's workspace."""
    if toolchain.linker_source is None or toolchain.linker_root is None:
        return ()
    copy = toolchain.linker_root / "src"
    return (
        Step(
            name="bitcode-linker-dir",
            description="make rgpu's cache directory",
            argv=("mkdir", "-p", str(toolchain.linker_root)),
            cwd=cwd,
        ),
        Step(
            name="bitcode-linker-source",
            description=f"copy {LINKER} source",
            argv=("cp", "-rT", str(toolchain.linker_source), str(copy)),
            cwd=cwd,
        ),
        Step(
            name="bitcode-linker",
            description=f"build {LINKER} (once, into {toolchain.linker_root})",
            argv=(
                "cargo",
                "install",
                "--quiet",
                "--path",
                str(copy),
                "--root",
                str(toolchain.linker_root),
                "--target-dir",
                str(toolchain.linker_root / "target"),
            ),
            cwd=cwd,
            unset_env=UNSET_ENV,
        ),
    )


def target_dir(build: KernelBuild, arch: str) -> Path:
    return build.workspace.target_dir / "rgpu-nvptx" / arch


def built_ptx(build: KernelBuild, arch: str) -> Path:
    """Where cargo leaves the PTX (kernels are always built with the release profile)."""
    name = f"{build.workspace.kernel_crate_name}.ptx"
    return target_dir(build, arch) / TARGET / "release" / name


def artifact_path(build: KernelBuild, arch: str) -> Path:
    return build.out_dir / f"{build.workspace.kernel_crate_name}-{arch}.ptx"


def arch_step(build: KernelBuild, toolchain: NvptxToolchain, arch: str) -> Step:
    crate_attrs = tuple(f"-Zcrate-attr=feature({f})" for f in CRATE_FEATURES)
    return Step(
        name=f"nvptx-{arch}",
        description=f"kernel -> PTX for {arch} (rustc nvptx64-nvidia-cuda)",
        argv=(
            *toolchain.cargo,
            "rustc",
            "--release",
            "-p",
            build.workspace.kernel_package,
            "--lib",
            "--target",
            TARGET,
            "-Zbuild-std=core",
            "--crate-type",
            "cdylib",
            "--target-dir",
            str(target_dir(build, arch)),
            "--",
            *crate_attrs,
        ),
        cwd=build.workspace.root,
        env={**toolchain.env, "CARGO_ENCODED_RUSTFLAGS": f"-Ctarget-cpu={arch}"},
        unset_env=UNSET_ENV,
        container_ok=True,
    )


class NvptxCodegen:
    name = "nvptx"
    artifact_kind = "ptx"
    container_as_root = False
    # With --yes a missing toolchain is installed before the build (`install`), not by
    # the plan's own steps.
    installs_toolchain = False
    ci_setup = (("rgpu", "toolchain", "install", "nvptx", "--yes"),)
    ci_build_args = ("--codegen", "nvptx")

    def image(self, pin: Pin, env: Mapping[str, str]) -> str | None:
        return None

    def toolchain(self, pin: Pin, placement: Placement, env: Mapping[str, str]) -> NvptxToolchain:
        """This machine's toolchain, or the image's when the build runs in a container
        (then nothing here is consulted: a machine with only docker can build)."""
        return IMAGE_TOOLCHAIN if placement.in_container else find_toolchain(pin, env)

    def checks(self, pin: Pin, toolchain: NvptxToolchain) -> list[Check]:
        return list(toolchain.checks)

    def install(self, build: KernelBuild, env: Mapping[str, str]) -> NvptxToolchain | None:
        """With consent: the toolchain after installing it, None when nothing to install."""
        toolchain: NvptxToolchain = build.toolchain
        if toolchain.ready or not toolchain.installs:
            return None
        return install_toolchain(build.pin, env, yes=True)

    def install_toolchain(
        self,
        pin: Pin,
        env: Mapping[str, str],
        *,
        yes: bool,
        interactive: bool,
        confirm: Callable[[str], bool],
    ) -> str:
        """`rgpu toolchain install nvptx`: the route, installed if needed; its summary."""
        found = install_toolchain(
            pin, env, yes=yes, interactive=interactive, confirm=confirm, pinned=True
        )
        return found.checks[0].detail

    def dep_infos(self, build: KernelBuild) -> list[Path]:
        archs = ptx.parse_archs(build.options.cuda_archs)
        return [built_ptx(build, arch).with_suffix(".d") for arch in archs]

    def plan(self, build: KernelBuild) -> Plan:
        toolchain: NvptxToolchain = build.toolchain
        archs = ptx.parse_archs(build.options.cuda_archs)
        steps = linker_steps(toolchain, build.workspace.root)
        steps += tuple(arch_step(build, toolchain, arch) for arch in archs)
        notes = (
            *toolchain.notes,
            "kernels are always built with the release profile; PTX goes to "
            f"{build.out_dir}/{build.workspace.kernel_crate_name}-<arch>.ptx",
        )
        return Plan(steps=steps, notes=notes)

    def collect(self, build: KernelBuild) -> list[Artifact]:
        env = os.environ
        ptxas = tools.find_ptxas(env)
        if ptxas is None:
            reporter().warn(f"ptxas not found: PTX not checked ({tools.PTXAS_HINT})")
        produced = []
        for arch in ptx.parse_archs(build.options.cuda_archs):
            source = built_ptx(build, arch)
            if not source.is_file():
                raise ArtifactError(f"cargo did not produce {source}", "rerun with `rgpu --debug`")
            dest = artifact_path(build, arch)
            checked = ptx.check(source, ptxas, env, shown_as=str(source), expect_arch=arch)
            if checked.ptxas != "accepted":
                reporter().warn(f"{dest.name}: ptxas check {checked.ptxas}")
            write_bytes_if_changed(dest, source.read_bytes())
            produced.append(describe_ptx(dest, build.out_dir, checked, codegen=self.name))
        return produced


def describe_ptx(
    file: Path, base: Path, checked: ptx.Checked, *, codegen: str, source: str = "built"
) -> Artifact:
    return describe(
        file,
        base,
        kind="ptx",
        codegen=codegen,
        target=checked.arch,
        entry_points=checked.entry_points,
        source=source,
        extra={"ptx_isa": checked.isa, "ptxas": checked.ptxas},
    )


CODEGEN = NvptxCodegen()
