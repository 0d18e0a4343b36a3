"""Codegen `nvvm`: Rust-CUDA's rustc_codegen_nvvm (PTX through libNVVM), via cuda_builder.

NOT EXERCISED IN rgpu's CI: it needs the pinned nightly's rustc-dev, LLVM 7 and CUDA's
libNVVM, none of which our machines can install. The commands and the generated crates are
unit-tested against Rust-CUDA's sources at the pinned rev (toolchains/nvvm.toml):
- crates/cuda_builder/src/lib.rs: `CudaBuilder::new(crate).arch(NvvmArch::ComputeXX)
  .release(true).copy_to(file).build()`, meant for a build script (it finds the backend
  from OUT_DIR/PROFILE, then runs `cargo build --lib -Zbuild-std=core,alloc
  --target=nvptx64-nvidia-cuda` in the kernel crate with `-Zcrate-attr=no_std` and
  `register_tool(nvvm_internal)` for every crate); `pub use nvvm::*` re-exports `NvvmArch`
  (crates/nvvm/src/lib.rs: Compute50..Compute121).
- crates/cuda_builder/Cargo.toml: feature `rustc_codegen_nvvm` builds the backend.
- crates/rustc_codegen_nvvm/build.rs: LLVM_CONFIG, else `llvm-config` on PATH, version 7.x.
- crates/cuda_std: the kernel crate must be built as `cdylib`; cuda_std brings the panic
  handler; `#[kernel]` entry points take `Copy` parameters (raw pointers, not `&mut`).

rgpu generates two packages: the *kernel* package (codegens/standalone.py: the kernel crate
with `rgpu`'s `nvvm` feature, which turns on the nvvm entry points and brings cuda_std, and
cuda_std patched to the pinned git rev, so the user's workspace never depends on a git
crate), under target/rgpu/nvvm/kernel; and a *builder* crate in rgpu's cache whose build
script runs CudaBuilder once per arch (one rustc_codegen_nvvm build per rev, shared).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.artifacts import manifest, ptx
from rgpu.check import Check
from rgpu.codegens import KernelBuild, standalone
from rgpu.codegens.spirv import write_step
from rgpu.config import cache_dir
from rgpu.containers.placement import Placement, local_llvm
from rgpu.cuda_archs import Arch
from rgpu.errors import ArtifactError, ConfigError, RgpuError
from rgpu.plan import Plan, Step
from rgpu.toolchains import rustup, tools
from rgpu.toolchains.pins import Pin
from rgpu.util.files import write_bytes_if_changed

# Where Rust-CUDA's images (and rgpu's full image) keep LLVM 7 and CUDA.
IMAGE_LLVM_CONFIG = "/opt/llvm-7/bin/llvm-config"
IMAGE_CUDA = "/usr/local/cuda"
NEED = ("nvvm",)
# The caller's cargo setup must not leak into the nested builds.
UNSET_ENV = (
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC",
    "RUSTC_WRAPPER",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
)
NOT_IN_CI = (
    "the nvvm codegen (Rust-CUDA) is not exercised in rgpu's CI: it needs the pinned "
    "nightly's rustc-dev, LLVM 7 and CUDA, which our CI machines cannot install"
)


@dataclass(frozen=True, kw_only=True)
class NvvmPin:
    repository: str
    rev: str
    channel: str
    components: tuple[str, ...]
    archs: frozenset[str]  # NvvmArch variants without suffix, as numbers
    images: Mapping[str, str]  # CUDA major -> image
    root_env: tuple[str, ...]  # the [cuda] table: where Rust-CUDA looks for the toolkit
    default_roots: tuple[str, ...]
    min_cuda: str
    libnvvm: str


def nvvm_pin(pin: Pin) -> NvvmPin:
    archs = pin.table("nvvm").get("archs", [])
    cuda = pin.table("cuda")
    return NvvmPin(
        repository=pin.source.repository,
        rev=pin.source.rev,
        channel=pin.channel,
        components=pin.components,
        archs=frozenset(str(a) for a in archs),
        images={str(k): str(v) for k, v in pin.table("images").items()},
        root_env=tuple(str(v) for v in cuda.get("root_env", tools.CUDA_ROOT_ENV)),
        default_roots=tuple(str(v) for v in cuda.get("default_roots", tools.CUDA_DEFAULT_ROOTS)),
        min_cuda=str(cuda.get("min_version", "12.0")),
        libnvvm=str(cuda.get("libnvvm", "libnvvm.so.4")),
    )


def nvvm_arch(arch: Arch, p: NvvmPin) -> str:
    """`sm_80` -> `Compute80` (the NvvmArch variant)."""
    if arch.suffix or str(arch.number) not in p.archs:
        raise ConfigError(
            f"CUDA arch `{arch}` is not one rustc_codegen_nvvm can target",
            "use sm_XX with XX one of " + ", ".join(sorted(p.archs, key=int)),
        )
    return f"Compute{arch.number}"


@dataclass(frozen=True)
class NvvmToolchain:
    pin: NvvmPin
    env: Mapping[str, str]  # the environment with LLVM_CONFIG, CUDA_PATH, LD_LIBRARY_PATH
    checks: tuple[Check, ...] = ()  # what a local build needs (empty in a container)


def cuda_root(p: NvvmPin, env: Mapping[str, str]) -> Path | None:
    return tools.cuda_root(env, p.root_env, p.default_roots)


def toolchain_env(pin: Pin, placement: Placement, env: Mapping[str, str]) -> dict[str, str]:
    """The variables the build runs with: the toolkit doctor finds (cuda_root) and the
    llvm-config it accepts; none for what is not found here (doctor says so, and a build
    stops on that check before it runs)."""
    p = nvvm_pin(pin)
    if placement.in_container:
        llvm, cuda, rest = IMAGE_LLVM_CONFIG, IMAGE_CUDA, ""
    else:
        found = local_llvm(pin, env)
        llvm = found.program if found else ""
        root = cuda_root(p, env)
        cuda, rest = (str(root) if root else ""), env.get("LD_LIBRARY_PATH", "")
    out = {}
    if cuda:
        out["CUDA_PATH"] = cuda
        out["LD_LIBRARY_PATH"] = ":".join(x for x in (f"{cuda}/nvvm/lib64", rest) if x)
    if llvm:
        out["LLVM_CONFIG"] = llvm
    return out


def rust_str(value: str) -> str:
    if any(ord(c) < 0x20 for c in value):
        raise ConfigError(f"path {value!r} has control characters", "rename the directory")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def kernel_dir(build: KernelBuild) -> Path:
    return build.workspace.rgpu_dir / "nvvm" / "kernel"


def out_path(build: KernelBuild, arch: Arch) -> Path:
    return (
        build.workspace.rgpu_dir
        / "nvvm"
        / "out"
        / f"{build.workspace.kernel_crate_name}-{arch}.ptx"
    )


def builder_root(build: KernelBuild, p: NvvmPin) -> Path:
    """One builder per (Rust-CUDA rev, workspace); their target dir is shared per rev, so
    rustc_codegen_nvvm itself is built once."""
    ws = hashlib.sha256(str(build.workspace.root).encode()).hexdigest()[:12]
    return cache_dir(build.toolchain.env) / "nvvm" / p.rev[:12] / ws


def shared_target(build: KernelBuild, p: NvvmPin) -> Path:
    return cache_dir(build.toolchain.env) / "nvvm" / p.rev[:12] / "target"


def kernel_files(build: KernelBuild, p: NvvmPin) -> dict[str, str]:
    git = {"git": p.repository, "rev": p.rev}
    data = standalone.manifest(
        build.workspace,
        package=f"{build.workspace.kernel_package}-nvvm",
        feature="nvvm",
        crate_types=("cdylib", "rlib"),
        patch={"cuda_std": git},
    )
    return {"Cargo.toml": standalone.render(data, "rustc_codegen_nvvm (cuda_builder)")}


def builder_files(build: KernelBuild, p: NvvmPin, archs: Sequence[Arch]) -> dict[str, str]:
    entry = str(kernel_dir(build))
    watch = [str(build.workspace.kernel_dir), entry]
    rows = [
        f"    (NvvmArch::{nvvm_arch(a, p)}, {rust_str(str(out_path(build, a)))})," for a in archs
    ]
    manifest_text = "\n".join(
        [
            f"# Generated by rgpu {__version__}: builds {build.workspace.kernel_package} with "
            "rustc_codegen_nvvm.",
            "[package]",
            'name = "rgpu-nvvm-builder"',
            'version = "0.0.0"',
            'edition = "2021"',
            "publish = false",
            'build = "build.rs"',
            "",
            "[build-dependencies]",
            f'cuda_builder = {{ git = "{p.repository}", rev = "{p.rev}", '
            'features = ["rustc_codegen_nvvm"] }',
            "",
            "[workspace]",
            "",
        ]
    )
    build_rs = "\n".join(
        [
            f"// Generated by rgpu {__version__}. One rustc_codegen_nvvm build per CUDA arch, as",
            "// Rust-CUDA's guide does it from a build script (cuda_builder finds the backend it",
            "// built from OUT_DIR and PROFILE, so it must run here, not from a binary).",
            "use cuda_builder::{CudaBuilder, NvvmArch};",
            "",
            f"const KERNEL: &str = {rust_str(entry)};",
            "const WATCH: &[&str] = &[" + ", ".join(rust_str(w) for w in watch) + "];",
            "const OUTPUTS: &[(NvvmArch, &str)] = &[",
            *rows,
            "];",
            "",
            "fn main() {",
            "    for path in WATCH {",
            '        println!("cargo::rerun-if-changed={path}");',
            "    }",
            "    for &(arch, ptx) in OUTPUTS {",
            "        // A missing output counts as changed, so a deleted PTX is rebuilt.",
            '        println!("cargo::rerun-if-changed={ptx}");',
            "        if let Err(err) = CudaBuilder::new(KERNEL)",
            "            .arch(arch)",
            "            .release(true)",
            "            .copy_to(ptx)",
            "            .build()",
            "        {",
            '            panic!("rustc_codegen_nvvm could not build {KERNEL} for {arch}: {err}");',
            "        }",
            "    }",
            "}",
            "",
        ]
    )
    return {
        "Cargo.toml": manifest_text,
        "build.rs": build_rs,
        "src/main.rs": "// The work happens in build.rs.\nfn main() {}\n",
    }


class NvvmCodegen:
    name = "nvvm"
    artifact_kind = "ptx"
    # Rust-CUDA's images keep rustup under /root: steps run as root there, then rgpu gives
    # what they wrote back to the invoking user (containers/runner.py, `chown_back`).
    container_as_root = True
    installs_toolchain = False
    ci_setup: tuple[tuple[str, ...], ...] = ()
    # rustc_codegen_nvvm needs LLVM 7 and libNVVM: in CI it runs in the Rust-CUDA image.
    ci_build_args = ("--codegen", "nvvm", "--docker")

    def image(self, pin: Pin, env: Mapping[str, str]) -> str | None:
        """Rust-CUDA's image for this machine's CUDA major (12 when none is installed)."""
        p = nvvm_pin(pin)
        major = tools.cuda_major(cuda_root(p, env)) or "12"
        return p.images.get(major, p.images.get("12"))

    def toolchain(self, pin: Pin, placement: Placement, env: Mapping[str, str]) -> NvvmToolchain:
        full = {**env, **toolchain_env(pin, placement, env)}
        if placement.in_container:
            return NvvmToolchain(nvvm_pin(pin), full)
        # start-up: <1 ms to import doctor.pins; only this path pays it
        from rgpu.doctor.pins import pin_checks

        try:
            status, problem, fix = rustup.status(pin, env), None, None
        except RgpuError as error:
            status, problem, fix = None, error.message, error.hint
        checks = (*pin_checks(pin, status, problem, fix), *native_checks(pin, env))
        return NvvmToolchain(nvvm_pin(pin), full, checks)

    def install(self, build: KernelBuild, env: Mapping[str, str]) -> None:
        return None  # nothing to install before the plan runs

    def checks(self, pin: Pin, toolchain: NvvmToolchain) -> list[Check]:
        return list(toolchain.checks)

    def dep_infos(self, build: KernelBuild) -> None:
        return None  # cuda_builder's own build script decides what to rebuild

    def plan(self, build: KernelBuild) -> Plan:
        tc: NvvmToolchain = build.toolchain
        p = tc.pin
        archs = build.options.cuda_archs.exact
        for arch in archs:
            nvvm_arch(arch, p)  # fail early on archs NvvmArch does not have
        root, cwd = builder_root(build, p), build.workspace.root
        tool_env = {
            k: v for k, v in tc.env.items() if k in ("LLVM_CONFIG", "CUDA_PATH", "LD_LIBRARY_PATH")
        }
        steps = (
            Step(
                name="nvvm-toolchain",
                description=f"install {p.channel} with {', '.join(p.components)} (once)",
                argv=(
                    "rustup",
                    "toolchain",
                    "install",
                    p.channel,
                    "--profile",
                    "minimal",
                    "--component",
                    ",".join(p.components),
                ),
                cwd=cwd,
                container_ok=True,
            ),
            write_step(kernel_dir(build), kernel_files(build, p), "nvvm kernel package"),
            write_step(root, builder_files(build, p, archs), "cuda_builder crate"),
            Step(
                name="nvvm-build",
                description=f"kernel -> PTX for {', '.join(map(str, archs))} (rustc_codegen_nvvm)",
                argv=(
                    "cargo",
                    f"+{p.channel}",
                    "build",
                    "--release",
                    "--manifest-path",
                    str(root / "Cargo.toml"),
                    "--target-dir",
                    str(shared_target(build, p)),
                ),
                cwd=cwd,
                env=tool_env,
                unset_env=UNSET_ENV,
                container_ok=True,
            ),
        )
        notes = (
            NOT_IN_CI,
            f"Rust-CUDA {p.repository} at {p.rev}, toolchain {p.channel}",
            f"PTX goes to {build.out_dir}/{build.workspace.kernel_crate_name}-<arch>.ptx",
        )
        return Plan(steps=steps, notes=notes)

    def collect(self, build: KernelBuild) -> list[manifest.Artifact]:
        # start-up: ~65 ms to import artifacts.sass, codegens.nvptx; only this path pays it
        from rgpu.artifacts import sass
        from rgpu.codegens.nvptx import describe_ptx, warn_without_ptxas, with_sass

        tc: NvvmToolchain = build.toolchain
        ptxas = tools.find_ptxas(tc.env)
        warn_without_ptxas(ptxas)
        release = sass.ptxas_release(ptxas, tc.env)
        produced = []
        for arch in build.options.cuda_archs.exact:
            file = out_path(build, arch)
            if not file.is_file():
                raise ArtifactError(f"rustc_codegen_nvvm did not produce {file} ({arch})")
            checked = ptx.check(
                file, ptxas, tc.env, shown_as=str(file), expect_arch=arch, keep_sass=True
            )
            dest = build.out_dir / file.name
            write_bytes_if_changed(dest, file.read_bytes())
            artifact = describe_ptx(dest, build.out_dir, checked, codegen=self.name)
            produced += with_sass(artifact, checked, build.out_dir, release)
        return produced


def native_checks(pin: Pin, env: Mapping[str, str]) -> list[Check]:
    """LLVM 7, the CUDA toolkit and libNVVM, for a build here (not in a container)."""
    p = nvvm_pin(pin)
    container_fix = f"or build in a Rust-CUDA container image (`rgpu toolchain show {pin.name}`)"
    major = pin.table("llvm").get("major", 7)
    found = tools.llvm_config(env)
    checks: list[Check]
    if local_llvm(pin, env) is not None and found is not None:
        checks = [
            Check(f"{pin.name} llvm", "ok", f"{found.program} reports {found.version}", None, NEED)
        ]
    else:
        seen = f"{found.program} reports {found.version}" if found else "no llvm-config on PATH"
        checks = [
            Check(
                f"{pin.name} llvm",
                "fail",
                f"needs LLVM {major}.x via LLVM_CONFIG or llvm-config; {seen}",
                f"set LLVM_CONFIG to an LLVM {major} llvm-config, {container_fix}",
                NEED,
            )
        ]
    root = cuda_root(p, env)
    if root is None:
        min_cuda, roots = p.min_cuda, ", ".join(p.default_roots)
        return [
            *checks,
            Check(
                "cuda toolkit",
                "fail",
                f"no CUDA toolkit (>= {min_cuda}) in CUDA_PATH or {roots}",
                f"install CUDA >= {min_cuda} and set CUDA_PATH, {container_fix}",
                NEED,
            ),
            Check(
                "libnvvm",
                "fail",
                "no CUDA toolkit, so no libNVVM",
                f"install CUDA, {container_fix}",
                NEED,
            ),
        ]
    checks.append(Check("cuda toolkit", "ok", str(root), None, NEED))
    soname = p.libnvvm
    lib_dir = root / "nvvm" / "lib64"
    if not (lib_dir / soname).exists():
        checks.append(
            Check(
                "libnvvm",
                "fail",
                f"{lib_dir / soname} not found (CUDA 12+ ships it)",
                "install a CUDA toolkit >= 12.0 that includes nvvm",
                NEED,
            )
        )
    else:
        # rustc loads the codegen, which loads libNVVM: the build step puts lib_dir first
        # on LD_LIBRARY_PATH itself (toolchain_env), so the caller's value does not matter.
        checks.append(
            Check(
                "libnvvm",
                "ok",
                f"{lib_dir / soname} (rgpu puts {lib_dir} on the build's LD_LIBRARY_PATH)",
                None,
                NEED,
            )
        )
    return checks


CODEGEN = NvvmCodegen()
