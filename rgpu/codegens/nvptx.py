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

Which toolchain (the "route") builds here, and installing one, is
rgpu/toolchains/nvptx_routes.py: this module only plans with the route it is given.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from rgpu.artifacts import ptx, sass
from rgpu.artifacts.manifest import Artifact, describe
from rgpu.check import Check
from rgpu.checked import rustc_args as checked_args
from rgpu.codegens import KernelBuild
from rgpu.containers.placement import Placement
from rgpu.cuda_archs import Arch
from rgpu.errors import ArtifactError
from rgpu.plan import Plan, Step
from rgpu.scaffold import vendor
from rgpu.toolchains import tools
from rgpu.toolchains.nvptx_routes import (
    IMAGE_TOOLCHAIN,
    LINKER,
    NvptxToolchain,
    find_toolchain,
    install_toolchain,
)
from rgpu.toolchains.pins import Pin
from rgpu.util import platform
from rgpu.util.files import write_bytes_if_changed
from rgpu.util.output import reporter

TARGET = "nvptx64-nvidia-cuda"
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


def target_dir(build: KernelBuild, arch: Arch) -> Path:
    return build.workspace.target_dir / "rgpu-nvptx" / arch.name


# rgpu's linker for the kernel crate (`-Clinker`): rustc's llvm-bitcode-linker itself, run
# with an `opt` in front of the real one. llvm-bitcode-linker links the kernel crate with
# everything it depends on (all of core) and runs `opt --passes=default<O3>,internalize,
# globaldce`: the whole O3 pipeline over all of core, then it drops what the kernels do not
# reach. That was 12 of the 12.5 s of CPU a one-line kernel edit cost per arch. The `opt`
# shim moves `internalize,globaldce` to the front (the order LTO runs them in), so O3 sees
# only the kernels and what they call. Measured on the sort demo's and SAXPY's kernels
# (BENCHMARKS.md, the edit loop): the same PTX, byte for byte, in 0.3 s instead of 11.4.
# Arguments, llvm-link, llc and every other flag stay llvm-bitcode-linker's, found where
# rustc finds them (it puts its sysroot's tool directories first on the linker's PATH).
LINKER_DIR = "linker"
LINKER_NAME = "rgpu-bitcode-linker"
LINKER_SCRIPT = """#!/bin/sh
# Written by rgpu (rgpu/codegens/nvptx.py): llvm-bitcode-linker with the `opt` beside this
# script first on its PATH.
RGPU_LINKER_PATH=$PATH
PATH="$(dirname "$0")/bin:$PATH"
export RGPU_LINKER_PATH PATH
exec llvm-bitcode-linker "$@"
"""
OPT_SCRIPT = """#!/bin/sh
# Written by rgpu (rgpu/codegens/nvptx.py): llvm-bitcode-linker's `opt`, with its
# `--passes=default<On>,internalize,globaldce` run as internalize,globaldce,default<On>,
# internalize,globaldce: the optimizer then sees the kernels and what they call, not all of
# core. Every other argument goes to the real opt unchanged.
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  case $a in
    "--passes=default<"*">,internalize,globaldce")
      a="--passes=internalize,globaldce,${a#--passes=}" ;;
  esac
  set -- "$@" "$a"
done
PATH=${RGPU_LINKER_PATH:?run through rgpu-bitcode-linker}
export PATH
exec opt "$@"
"""


def linker_path(build: KernelBuild) -> Path | None:
    """rgpu's linker script for the kernel crate; None on Windows (no /bin/sh: rustc's own
    llvm-bitcode-linker, slower, with the same result)."""
    if platform.system() == "windows":
        return None
    return build.workspace.target_dir / "rgpu-nvptx" / LINKER_DIR / LINKER_NAME


def linker_step(build: KernelBuild) -> tuple[Step, ...]:
    """Writes rgpu's linker and its `opt` (executable: they start with #!), only when
    their text changed."""
    path = linker_path(build)
    if path is None:
        return ()
    return (
        Step(
            name="nvptx-linker",
            description="write rgpu's bitcode linker (internalize before opt's O3)",
            argv=(),
            cwd=path.parent,
            files={LINKER_NAME: LINKER_SCRIPT, "bin/opt": OPT_SCRIPT},
        ),
    )


# libm's interface on the GPU's instructions (crates/rgpu-libm, package `libm`): the kernel
# build patches crates.io's libm with it, so libm calls inside the kernel's dependencies
# (glam, num-traits) become `sqrt.rn` and friends, not libm's software routines. The patch
# resolves against a copy of the workspace's Cargo.lock in the arch's target directory
# (cargo's `resolver.lockfile-path`): the user's lock never sees it.
LIBM_CRATE = "rgpu-libm"
LIBM_VERSION = "0.2.16"  # crates/rgpu-libm/Cargo.toml's
LOCK_COPY = "Cargo.lock"
# cargo resolves core's own workspace (-Zbuild-std) with the same [patch], where no crate
# uses libm, and says so on every fresh resolve: a warning rgpu causes, hidden.
LIBM_PATCH_NOTES = (
    r"warning: patch `libm v[^`]+ \([^)]*rgpu-libm\)` was not used in the crate graph",
    r"help: Check that the patched package version and available features are compatible",
    r"\s+with the dependency requirements\. If the patch has a different version from",
    r"\s+what is locked in the Cargo\.lock file, run `cargo update` to use the new",
    r"\s+version\. This may also occur with an optional dependency that is not enabled\.",
    # A cargo of 1.97 or later whose version rgpu could not read before the build.
    r"warning: flag `-Z lockfile-path` has been stabilized in the [\d.]+ release, and is no "
    r"longer necessary",
    r"\s+The `lockfile-path` config key is now always available",
)


def libm_patch(build: KernelBuild) -> Path | None:
    """The patch's crate: the workspace's vendored copy (`rgpu new`/`rgpu vendor` put it
    beside the `rgpu` crate), else, building here, the one in rgpu's own data (a workspace
    using rgpu's crates by path); None when neither is there (libm stays crates.io's)."""
    vendored = build.workspace.root / vendor.vendor_dir() / LIBM_CRATE
    if (vendored / "Cargo.toml").is_file():
        return vendored
    if build.placement.in_container:
        return None
    packaged = vendor.crates_source() / LIBM_CRATE
    return packaged if (packaged / "Cargo.toml").is_file() else None


def lockfile_path_is_stable(rustc_version: str) -> bool:
    """Whether the toolchain's cargo takes `resolver.lockfile-path` without
    `-Zlockfile-path` (stable since 1.97, which warns about the flag); unknown versions
    ("none", "image") get the flag, and its warning is hidden."""
    found = re.match(r"(\d+)\.(\d+)", rustc_version)
    return found is not None and (int(found.group(1)), int(found.group(2))) >= (1, 97)


def libm_args(build: KernelBuild, arch: Arch, rustc_version: str = "none") -> tuple[str, ...]:
    """cargo's options for the patch (before `--`), or none."""
    patch = libm_patch(build)
    if patch is None:
        return ()
    lock = target_dir(build, arch) / LOCK_COPY
    unstable = () if lockfile_path_is_stable(rustc_version) else ("-Zlockfile-path",)
    return (
        *unstable,
        "--config",
        f"resolver.lockfile-path={json.dumps(str(lock))}",
        "--config",
        f"patch.crates-io.libm.path={json.dumps(str(patch))}",
    )


def lock_for_patch(lock: str) -> str:
    """The workspace's Cargo.lock as the patched build reads it: a libm 0.2 locked at
    another version than the patch's is left out (cargo then locks the patch in its place;
    a locked different version would keep crates.io's)."""
    blocks = lock.split("\n[[package]]\n")
    kept = [
        b
        for b in blocks
        if not (b.startswith('name = "libm"\nversion = "0.2.') and
                not b.startswith(f'name = "libm"\nversion = "{LIBM_VERSION}"\n'))
    ]  # fmt: skip
    return "\n[[package]]\n".join(kept)


def lock_steps(
    build: KernelBuild, toolchain: NvptxToolchain, archs: tuple[Arch, ...]
) -> tuple[Step, ...]:
    """The workspace's Cargo.lock copied beside each arch's build (written only when it
    changed), for the libm patch to resolve against. A workspace without one yet gets it
    first, as an unpatched kernel build made it (`cargo generate-lockfile`): the patched
    build then resolves on its own, and the no-op stamp, which watches the workspace's lock,
    sees it before the kernels are recorded."""
    if libm_patch(build) is None:
        return ()
    if build.cargo_lock is None:
        return (
            Step(
                name="nvptx-lockfile",
                description="write the workspace's Cargo.lock (cargo generate-lockfile)",
                argv=(*toolchain.cargo, "generate-lockfile"),
                cwd=build.workspace.root,
                env=dict(toolchain.env),
                unset_env=UNSET_ENV,
                container_ok=True,
                keyed=False,
            ),
        )
    lock = lock_for_patch(build.cargo_lock)
    return tuple(
        Step(
            name=f"nvptx-lock-{arch}",
            description=f"copy Cargo.lock for the kernel build ({arch}; libm patched)",
            argv=(),
            cwd=target_dir(build, arch),
            files={LOCK_COPY: lock},
            keyed=False,
        )
        for arch in archs
    )


def built_ptx(build: KernelBuild, arch: Arch) -> Path:
    """Where cargo leaves the PTX (kernels are always built with the release profile)."""
    name = f"{build.workspace.kernel_crate_name}.ptx"
    return target_dir(build, arch) / TARGET / "release" / name


def artifact_path(build: KernelBuild, arch: Arch) -> Path:
    return build.out_dir / f"{build.workspace.kernel_crate_name}-{arch}.ptx"


def linker_args(build: KernelBuild) -> tuple[str, ...]:
    """The kernel crate's link (the cdylib: PTX) goes through rgpu's linker; only the
    kernel crate's own rustc gets it, so core's build is shared with the plain build."""
    path = linker_path(build)
    return () if path is None else (f"-Clinker={path}",)


def rustflags(arch: Arch, checked: bool = False) -> tuple[str, ...]:
    """Every crate's flags (core's too, so it is built for the same arch). MIR's jump
    threading is off: it copies the code between two branches on the same condition into
    both (`if i < n { load }` ... `if i < n { store }`), and with it the warp's shuffles and
    barriers, so a warp split by the condition runs two different `shfl.sync`s and waits
    forever (found on the H100: a scan whose last round covers part of a warp hung). MIR
    knows nothing of convergence; LLVM's passes respect it for NVVM's intrinsics. A checked
    build (rgpu/checked.py) adds its cfg, which the `rgpu` crate's panic handler reads."""
    return (
        f"-Ctarget-cpu={arch}",
        "-Zmir-enable-passes=-JumpThreading",
        *checked_args(checked),
    )


def arch_step(build: KernelBuild, toolchain: NvptxToolchain, arch: Arch) -> Step:
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
            *libm_args(build, arch, toolchain.rustc_version),
            "--",
            *crate_attrs,
            *linker_args(build),
        ),
        cwd=build.workspace.root,
        env={
            **toolchain.env,
            "CARGO_ENCODED_RUSTFLAGS": "\x1f".join(rustflags(arch, build.options.checked)),
        },
        unset_env=UNSET_ENV,
        container_ok=True,
        keep_output=True,
        hide=LIBM_PATCH_NOTES,
        # The archs build at the same time (each its own target dir): on two cores a
        # one-line kernel edit's PTX for three archs takes the time of two.
        together="nvptx-archs",
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
        archs = build.options.cuda_archs.exact
        return [built_ptx(build, arch).with_suffix(".d") for arch in archs]

    def plan(self, build: KernelBuild) -> Plan:
        toolchain: NvptxToolchain = build.toolchain
        archs = build.options.cuda_archs.exact
        steps = linker_steps(toolchain, build.workspace.root) + linker_step(build)
        steps += lock_steps(build, toolchain, archs)
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
        warn_without_ptxas(ptxas)
        release = sass.ptxas_release(ptxas, env)
        produced = []
        for arch in build.options.cuda_archs.exact:
            source = built_ptx(build, arch)
            if not source.is_file():
                raise ArtifactError(
                    f"cargo did not produce {source}", "rerun with `rgpu --traceback build`"
                )
            dest = artifact_path(build, arch)
            # The entries' directives (`registers = R`) go in before ptxas makes the SASS; the
            # file checked sits beside cargo's, so a refused PTX never reaches the kernels.
            built = ptx.read(source, str(source))
            text = ptx.entry_directives(built)
            checked_file = source
            if text != built:
                checked_file = source.with_name(f"{source.stem}.directives.ptx")
                checked_file.write_text(text, encoding="utf-8")
            checked = ptx.check(
                checked_file, ptxas, env, shown_as=str(source), expect_arch=arch, keep_sass=True
            )
            write_bytes_if_changed(dest, text.encode("utf-8"))
            artifact = describe_ptx(dest, build.out_dir, checked, codegen=self.name)
            artifact.extra.update(built_by(build, arch))
            produced += with_sass(artifact, checked, build.out_dir, release)
        return produced


def warn_without_ptxas(ptxas: str | None) -> None:
    if ptxas is None:
        reporter().warn(
            f"ptxas not found: PTX not checked and no SASS (cubin) built; {sass.JIT_NOTE} "
            f"({tools.PTXAS_HINT})"
        )


def with_sass(artifact: Artifact, checked: ptx.Checked, base: Path, release: str) -> list[Artifact]:
    """The PTX's entry and its cubin's, or the PTX's alone with a warning naming the file
    the build wrote and why it has no SASS."""
    cubin = sass.embed(checked, artifact, base, release=release)
    if cubin is not None:
        return [artifact, cubin]
    reporter().warn(f"{Path(artifact.path).name}: {sass.without_sass(checked)}")
    return [artifact]


def built_by(build: KernelBuild, arch: Arch) -> dict[str, str]:
    """Which route built this PTX (`pinned`, `system` or `image`: toolchains/nvptx_routes.py)
    and the rustc that did, as cargo recorded it in the kernel target directory
    (`.rustc_info.json`, its cache of `rustc -vV`): the manifest says which compiler made
    each PTX, wherever it ran."""
    toolchain: NvptxToolchain = build.toolchain
    found = {"route": toolchain.kind}
    try:
        info = json.loads((target_dir(build, arch) / ".rustc_info.json").read_text("utf-8"))
        outputs = [o.get("stdout", "") for o in info["outputs"].values()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return found
    for text in outputs:
        if text.startswith("rustc ") and "\nrelease: " in text:
            fields = dict(ln.split(": ", 1) for ln in text.splitlines()[1:] if ": " in ln)
            llvm = fields.get("LLVM version")
            found["rustc"] = text.splitlines()[0] + (f", LLVM {llvm}" if llvm else "")
    return found


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
