"""Codegen `nvptx`: rustc's own nvptx64-nvidia-cuda target (PTX through LLVM).

One `cargo rustc` per CUDA arch (REFERENCE.md section 3, confirmed with rustc 1.96.0 +
LLVM 22.1 here): `--target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type cdylib`,
`-Ctarget-cpu=sm_XX` in CARGO_ENCODED_RUSTFLAGS (so core is built for the same arch), and
the target's default linker flavor `llbc` (`rustc --print target-spec-json`), which runs
`llvm-bitcode-linker`; that in turn calls `llvm-link`, `opt`, `llc` of rustc's LLVM major.

Toolchain, in order: a rustup nightly with rust-src and llvm-bitcode-linker; else the system
rustc (Debian's rustc-web) with its library sources, nightly flags through RUSTC_BOOTSTRAP=1
(said in a plan note), LLVM's bin dir on PATH, and an llvm-bitcode-linker built once from
the rustc source package into rgpu's cache. `find_toolchain` is what `rgpu doctor` calls.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rgpu import ptx
from rgpu.artifacts import Artifact, describe
from rgpu.codegens import KernelBuild
from rgpu.config import cache_dir
from rgpu.errors import ArtifactError, ToolchainError
from rgpu.plan import Plan, Step
from rgpu.util import cmd
from rgpu.util.output import reporter

TARGET = "nvptx64-nvidia-cuda"
LINKER = "llvm-bitcode-linker"
# The system toolchain's layout; toolchains/nvptx.toml's [system] table overrides these.
SYSTEM_DEFAULTS = {
    "rustc": "/usr/bin/rustc",
    "cargo": "/usr/bin/cargo",
    "llvm_bin": "/usr/lib/llvm-{major}/bin",
    "bitcode_linker_source": "/usr/src/rustc-{version}/src/tools/llvm-bitcode-linker",
}
# Variables that would leak the caller's cargo setup into the nested kernel build.
UNSET_ENV = (
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
)
INSTALL_HINT = (
    "install a nightly with `rustup toolchain install nightly --component rust-src "
    "llvm-bitcode-linker llvm-tools`, or on Debian `apt-get install rustc-web cargo-web "
    "rust-web-src llvm-22`"
)


@dataclass(frozen=True, kw_only=True)
class NvptxToolchain:
    """How to run the nvptx build; `problems` lists what is missing (empty: ready)."""

    kind: str  # "rustup-nightly" or "system"
    cargo: tuple[str, ...]  # argv prefix: ("cargo", "+nightly") or ("/usr/bin/cargo",)
    rustc_version: str
    env: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    # Set when llvm-bitcode-linker must first be built from this source into linker_root.
    linker_source: Path | None = None
    linker_root: Path | None = None

    @property
    def ready(self) -> bool:
        return not self.problems


def _rustup_nightly(env: Mapping[str, str]) -> Path | None:
    """A rustup nightly that has rust-src and llvm-bitcode-linker; looked up on disk."""
    home = Path(env.get("RUSTUP_HOME") or Path(env.get("HOME", str(Path.home()))) / ".rustup")
    for toolchain in sorted((home / "toolchains").glob("nightly-*"), reverse=True):
        rustlib = toolchain / "lib" / "rustlib"
        has_src = (rustlib / "src" / "rust" / "library" / "core").is_dir()
        has_linker = any(rustlib.glob(f"*/bin/{LINKER}"))
        if has_src and has_linker:
            return toolchain
    return None


def _llvm_major(rustc: Path, env: Mapping[str, str]) -> tuple[str, str | None]:
    """(rustc release, LLVM major) from `rustc -vV`."""
    result = cmd.run([str(rustc), "-vV"], env=env, capture=True, check=False, echo=False)
    release = re.search(r"^release: (\S+)", result.stdout, re.M)
    llvm = re.search(r"^LLVM version: (\d+)", result.stdout, re.M)
    return (release.group(1) if release else "unknown", llvm.group(1) if llvm else None)


def find_toolchain(env: Mapping[str, str]) -> NvptxToolchain:
    nightly = _rustup_nightly(env)
    if nightly is not None:
        name = nightly.name.removesuffix("-x86_64-unknown-linux-gnu")
        return NvptxToolchain(
            kind="rustup-nightly", cargo=("cargo", f"+{name}"), rustc_version=name
        )
    return _system_toolchain(env)


def system_layout(env: Mapping[str, str]) -> dict[str, str]:
    """SYSTEM_DEFAULTS, with the [system] table of toolchains/nvptx.toml where it exists."""
    from rgpu import toolchains
    from rgpu.errors import RgpuError

    try:
        table = toolchains.load("nvptx", env).tables.get("system", {})
    except (RgpuError, OSError):
        table = {}
    return {k: str(table.get(k, v)) for k, v in SYSTEM_DEFAULTS.items()}


def _system_toolchain(env: Mapping[str, str]) -> NvptxToolchain:
    problems: list[str] = []
    layout = system_layout(env)
    rustc = Path(layout["rustc"])
    if not rustc.is_file():
        return NvptxToolchain(
            kind="system",
            cargo=("cargo",),
            rustc_version="none",
            problems=(f"no nightly with rust-src + {LINKER} and no {rustc}",),
        )
    release, llvm = _llvm_major(rustc, env)
    sysroot = rustc.parent.parent
    if not (sysroot / "lib/rustlib/src/rust/library/core").is_dir():
        problems.append("the system rustc has no library sources (Debian: rust-web-src)")
    llvm_bin = Path(layout["llvm_bin"].format(major=llvm))
    if llvm is None or not (llvm_bin / "llc").is_file():
        problems.append(f"LLVM {llvm} tools (llc, opt, llvm-link) not found in {llvm_bin}")
    linker_root = cache_dir(env) / f"{LINKER}-{release}"
    path_dirs = [str(linker_root / "bin"), str(llvm_bin)]
    linker_source: Path | None = None
    if cmd.which(LINKER, env) is None and not (linker_root / "bin" / LINKER).is_file():
        source = Path(layout["bitcode_linker_source"].format(version=release))
        if source.is_dir():
            linker_source = source
        else:
            problems.append(f"no {LINKER} on PATH and no rustc source at {source}")
    path = os.pathsep.join([*path_dirs, env.get("PATH", os.defpath)])
    cargo = layout["cargo"] if Path(layout["cargo"]).is_file() else "cargo"
    return NvptxToolchain(
        kind="system",
        cargo=(cargo,),
        rustc_version=release,
        env={"RUSTC": str(rustc), "RUSTC_BOOTSTRAP": "1", "PATH": path},
        notes=(
            f"no rustup nightly with rust-src and {LINKER}: using the system rustc {release} "
            "with RUSTC_BOOTSTRAP=1 to allow nightly flags (-Zbuild-std, abi_ptx)",
        ),
        problems=tuple(problems),
        linker_source=linker_source,
        linker_root=linker_root,
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
    return build.project.target_dir / "rgpu-nvptx" / arch


def built_ptx(build: KernelBuild, arch: str) -> Path:
    """Where cargo leaves the PTX (kernels are always built with the release profile)."""
    name = f"{build.project.kernel_crate_name}.ptx"
    return target_dir(build, arch) / TARGET / "release" / name


def artifact_path(build: KernelBuild, arch: str) -> Path:
    return build.out_dir / f"{build.project.kernel_crate_name}-{arch}.ptx"


def arch_step(build: KernelBuild, toolchain: NvptxToolchain, arch: str) -> Step:
    return Step(
        name=f"nvptx-{arch}",
        description=f"kernel -> PTX for {arch} (rustc nvptx64-nvidia-cuda)",
        argv=(
            *toolchain.cargo,
            "rustc",
            "--release",
            "-p",
            build.project.kernel_package,
            "--target",
            TARGET,
            "-Zbuild-std=core",
            "--crate-type",
            "cdylib",
            "--target-dir",
            str(target_dir(build, arch)),
        ),
        cwd=build.project.root,
        env={**toolchain.env, "CARGO_ENCODED_RUSTFLAGS": f"-Ctarget-cpu={arch}"},
        unset_env=UNSET_ENV,
        container_ok=True,
    )


# The toolchain inside rgpu's offline image (Dockerfile, stage `offline`): Debian's rustc-web
# and llvm-22, and llvm-bitcode-linker baked into /usr/local/bin. Keep in step with it.
IMAGE_TOOLCHAIN = NvptxToolchain(
    kind="system",
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


class NvptxCodegen:
    name = "nvptx"
    artifact_kind = "ptx"

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env

    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def plan(self, build: KernelBuild) -> Plan:
        toolchain = self.toolchain(build)
        if not toolchain.ready:
            raise ToolchainError("cannot build PTX: " + "; ".join(toolchain.problems), INSTALL_HINT)
        archs = ptx.parse_archs(build.options.cuda_archs)
        steps = linker_steps(toolchain, build.project.root)
        steps += tuple(arch_step(build, toolchain, arch) for arch in archs)
        notes = (
            *toolchain.notes,
            "kernels are always built with the release profile; "
            f"PTX goes to {build.out_dir}/{build.project.kernel_crate_name}-<arch>.ptx",
        )
        return Plan(steps=steps, notes=notes)

    def toolchain(self, build: KernelBuild) -> NvptxToolchain:
        """This machine's toolchain, or the image's when the build runs in a container
        (then nothing here is consulted: a machine with only docker can build)."""
        from rgpu.placement import decide

        if decide(self.name, build.options, self.env()).in_container:
            return IMAGE_TOOLCHAIN
        return find_toolchain(self.env())

    def collect(self, build: KernelBuild) -> list[Artifact]:
        ptxas = ptx.find_ptxas(self.env())
        if ptxas is None:
            reporter().warn("ptxas not found: PTX not checked (pip install nvidia-cuda-nvcc)")
        produced = []
        for arch in ptx.parse_archs(build.options.cuda_archs):
            produced.append(self._collect_arch(build, arch, ptxas))
        return produced

    def _collect_arch(self, build: KernelBuild, arch: str, ptxas: str | None) -> Artifact:
        source = built_ptx(build, arch)
        if not source.is_file():
            raise ArtifactError(f"cargo did not produce {source}", "rerun with `rgpu --debug`")
        dest = artifact_path(build, arch)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        return check_and_describe(dest, build.out_dir, ptxas, self.env(), codegen=self.name)


def check_and_describe(
    file: Path,
    base: Path,
    ptxas: str | None,
    env: Mapping[str, str],
    *,
    codegen: str,
    source: str = "built",
) -> Artifact:
    """ptxas-check a PTX file for its own `.target` and describe it for the manifest."""
    text = file.read_text(encoding="utf-8", errors="replace")
    arch, entries = ptx.target_of(text), ptx.entry_points(text)
    if arch is None or not entries:
        raise ArtifactError(f"{file} is not PTX with a .target and .entry functions")
    checked = "not run: no ptxas found"
    if ptxas is not None:
        checked = ptx.check_with_ptxas(ptxas, file, arch, env)
    if checked != "accepted":
        reporter().warn(f"{file.name}: ptxas check {checked}")
    extra = {
        "ptx_isa": ptx.isa_version(text),
        "ptxas": checked,
        "tile_memory": ptx.tile_memory(text),
    }
    return describe(
        file,
        base,
        kind="ptx",
        codegen=codegen,
        target=arch,
        entry_points=entries,
        source=source,
        extra=extra,
    )


CODEGEN = NvptxCodegen()
