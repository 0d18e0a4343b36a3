"""Codegen `nvvm`: Rust-CUDA's rustc_codegen_nvvm (PTX through libNVVM), via cuda_builder.

NOT EXERCISED IN rgpu's CI: it needs the pinned nightly's rustc-dev, LLVM 7 and CUDA's
libNVVM, none of which our machines can install. The commands and the generated crates are
unit-tested against Rust-CUDA's sources at the pinned rev (toolchains/nvvm.toml):
- crates/cuda_builder/src/lib.rs: `CudaBuilder::new(crate).arch(NvvmArch::ComputeXX)
  .release(true).copy_to(file).build()`, meant for a build script (it finds the backend
  dylib from OUT_DIR/PROFILE, then runs `cargo build --lib -Zbuild-std=core,alloc
  --target=nvptx64-nvidia-cuda` in the kernel crate with `--target-dir <target>/cuda-builder`);
  `pub use nvvm::*` re-exports `NvvmArch` (crates/nvvm/src/lib.rs: Compute50..Compute121).
- crates/cuda_builder/Cargo.toml: feature `rustc_codegen_nvvm` builds the backend.
- crates/rustc_codegen_nvvm/build.rs: LLVM_CONFIG, else `llvm-config` on PATH, version 7.x.
- guide/src/guide/getting_started.md: git deps with `rev`, kernel crate `crate-type =
  ["cdylib", "rlib"]`, `LD_LIBRARY_PATH=<cuda>/nvvm/lib64`.
- container/*/Dockerfile: LLVM 7.1 in /opt/llvm-7, CUDA in /usr/local/cuda, rustup as root.

rgpu generates two crates in its cache (cargo-gpu does the same for spirv): an *entry* crate
whose library root is the template's kernel/nvvm/kernels.rs, with `cuda_std` and the
workspace's kernel crate as dependencies (so the user's workspace never depends on a git
crate), and a *builder* crate whose build script runs CudaBuilder once per arch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.artifacts import Artifact
from rgpu.codegens import KernelBuild
from rgpu.config import cache_dir
from rgpu.errors import ArtifactError, ConfigError
from rgpu.plan import Plan, Step

# Fallbacks; toolchains/nvvm.toml is the source of truth (confirmed there).
REPOSITORY = "https://github.com/Rust-GPU/rust-cuda"
REV = "946c91f080770f30d42d7c706ac8185969274073"
CHANNEL = "nightly-2026-04-02"
COMPONENTS = ("rust-src", "rustc-dev", "llvm-tools")
IMAGES = {
    "12": "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda12:latest",
    "13": "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda13:latest",
}
# Where Rust-CUDA's images (and rgpu's full image) keep LLVM 7 and CUDA.
IMAGE_LLVM_CONFIG = "/opt/llvm-7/bin/llvm-config"
IMAGE_CUDA = "/usr/local/cuda"
CUDA_ROOT_ENV = ("CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR")
CUDA_DEFAULT_ROOTS = ("/usr/lib/cuda", "/usr/local/cuda", "/opt/cuda")
# NvvmArch variants without suffix (crates/nvvm/src/lib.rs at REV).
NVVM_ARCHS = frozenset(
    "50 52 53 60 61 62 70 72 73 75 80 86 87 88 89 90 100 101 103 110 120 121".split()
)
# The caller's cargo setup must not leak into the nested builds.
UNSET_ENV = (
    "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "RUSTC", "RUSTC_WRAPPER",
    "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET",
)  # fmt: skip
ENTRY_SOURCE = Path("nvvm") / "kernels.rs"  # relative to the kernel crate
NOT_IN_CI = (
    "the nvvm codegen (Rust-CUDA) is not exercised in rgpu's CI: it needs the pinned "
    "nightly's rustc-dev, LLVM 7 and CUDA, which our CI machines cannot install"
)


@dataclass(frozen=True, kw_only=True)
class Pins:
    repository: str = REPOSITORY
    rev: str = REV
    channel: str = CHANNEL
    components: tuple[str, ...] = COMPONENTS


def pins(table: Mapping[str, object] | None = None) -> Pins:
    """The pins from toolchains/nvvm.toml, with the confirmed fallbacks above."""
    if table is None:
        from rgpu.placement import toolchain_table

        table = toolchain_table("nvvm")
    source = table.get("source")
    source = source if isinstance(source, dict) else {}
    comps = table.get("components")
    return Pins(
        repository=str(source.get("repository", REPOSITORY)),
        rev=str(source.get("rev", REV)),
        channel=str(table.get("channel", CHANNEL)),
        components=tuple(str(c) for c in comps) if isinstance(comps, list) else COMPONENTS,
    )


def nvvm_arch(arch: str) -> str:
    """`sm_80` -> `Compute80` (the NvvmArch variant)."""
    match = re.fullmatch(r"(?:sm_|compute_)(\d+)", arch)
    if match is None or match.group(1) not in NVVM_ARCHS:
        raise ConfigError(
            f"CUDA arch `{arch}` is not one rustc_codegen_nvvm can target",
            "use sm_XX with XX one of " + ", ".join(sorted(NVVM_ARCHS, key=int)),
        )
    return f"Compute{match.group(1)}"


@dataclass(frozen=True, kw_only=True)
class BuilderSpec:
    """What the generated crates need; JSON-able so a plan step can carry it."""

    workspace: str
    kernel_dir: str
    kernel_package: str
    shared_dir: str
    shared_package: str
    out_dir: str
    kernel_crate_name: str
    archs: tuple[str, ...]
    repository: str
    rev: str

    def outputs(self) -> list[tuple[str, str]]:
        return [(a, f"{self.out_dir}/{self.kernel_crate_name}-{a}.ptx") for a in self.archs]


def rust_str(value: str) -> str:
    if any(ord(c) < 0x20 for c in value):
        raise ConfigError(f"path {value!r} has control characters", "rename the directory")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _git_dep(spec: BuilderSpec, name: str, extra: str = "") -> str:
    return f"{name} = {{ git = {toml_str(spec.repository)}, rev = {toml_str(spec.rev)}{extra} }}"


def entry_manifest(spec: BuilderSpec) -> str:
    entry = f"{spec.kernel_dir}/{ENTRY_SOURCE.as_posix()}"
    return "\n".join([
        f"# Generated by rgpu {__version__} for {spec.workspace}; rewritten on every build.",
        "# The Rust-CUDA entry crate: its library root is the workspace's kernel/nvvm/kernels.rs.",
        "[package]", 'name = "rgpu-nvvm-kernels"', 'version = "0.0.0"', 'edition = "2021"',
        "publish = false", "",
        "[lib]", f"path = {toml_str(entry)}",
        "# cdylib: the nvptx target's only output; rlib: what cuda_builder expects.",
        'crate-type = ["cdylib", "rlib"]', "",
        "[dependencies]", _git_dep(spec, "cuda_std"),
        f"kernel = {{ package = {toml_str(spec.kernel_package)}, "
        f"path = {toml_str(spec.kernel_dir)}, features = [\"nvvm\"] }}",
        f"shared = {{ package = {toml_str(spec.shared_package)}, "
        f"path = {toml_str(spec.shared_dir)} }}", "",
        "# Its own workspace: the user's Cargo.lock never sees cuda_std.", "[workspace]", "",
    ])  # fmt: skip


def builder_manifest(spec: BuilderSpec) -> str:
    return "\n".join([
        f"# Generated by rgpu {__version__}: builds {spec.kernel_package} with rustc_codegen_nvvm.",
        "[package]", 'name = "rgpu-nvvm-builder"', 'version = "0.0.0"', 'edition = "2021"',
        "publish = false", 'build = "build.rs"', "",
        "[build-dependencies]",
        _git_dep(spec, "cuda_builder", ', features = ["rustc_codegen_nvvm"]'), "",
        "[workspace]", "",
    ])  # fmt: skip


def builder_build_rs(spec: BuilderSpec, entry_dir: str) -> str:
    watch = [spec.kernel_dir, spec.shared_dir, entry_dir]
    rows = [f"    (NvvmArch::{nvvm_arch(a)}, {rust_str(p)})," for a, p in spec.outputs()]
    return "\n".join([
        f"// Generated by rgpu {__version__}. One rustc_codegen_nvvm build per CUDA arch, as",
        "// Rust-CUDA's guide does it from a build script (cuda_builder finds the backend it",
        "// built from OUT_DIR and PROFILE, so it must run here, not from a binary).",
        "use cuda_builder::{CudaBuilder, NvvmArch};", "",
        f"const ENTRY_CRATE: &str = {rust_str(entry_dir)};",
        "const WATCH: &[&str] = &[" + ", ".join(rust_str(w) for w in watch) + "];",
        "const OUTPUTS: &[(NvvmArch, &str)] = &[", *rows, "];", "",
        "fn main() {",
        "    for path in WATCH {",
        '        println!("cargo::rerun-if-changed={path}");',
        "    }",
        "    for &(arch, ptx) in OUTPUTS {",
        "        // A missing output counts as changed, so a deleted PTX is rebuilt.",
        '        println!("cargo::rerun-if-changed={ptx}");',
        "        if let Err(err) = CudaBuilder::new(ENTRY_CRATE)",
        "            .arch(arch)",
        "            .release(true)",
        "            .copy_to(ptx)",
        "            .build()",
        "        {",
        '            panic!("rustc_codegen_nvvm could not build {ENTRY_CRATE} for {arch}: {err}");',
        "        }",
        "    }",
        "}", "",
    ])  # fmt: skip


def builder_files(spec: BuilderSpec, root: Path) -> dict[Path, str]:
    """Every file of the two generated crates, by absolute path."""
    entry = root / "entry"
    builder = root / "builder"
    return {
        entry / "Cargo.toml": entry_manifest(spec),
        builder / "Cargo.toml": builder_manifest(spec),
        builder / "build.rs": builder_build_rs(spec, str(entry)),
        builder / "src" / "main.rs": "// The work happens in build.rs.\nfn main() {}\n",
    }


def write_builder(spec: BuilderSpec, root: Path) -> None:
    for path, text in builder_files(spec, root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")  # unchanged files keep their mtime


def package_name(crate_dir: Path) -> str:
    import tomllib

    try:
        with (crate_dir / "Cargo.toml").open("rb") as f:
            return str(tomllib.load(f)["package"]["name"])
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"cannot read the package name of {crate_dir}", f"check {crate_dir}/Cargo.toml"
        ) from exc


def make_spec(build: KernelBuild, p: Pins) -> BuilderSpec:
    project = build.project
    shared_package = package_name(project.shared_dir)
    return BuilderSpec(
        workspace=str(project.root),
        kernel_dir=str(project.kernel_dir),
        kernel_package=project.kernel_package,
        shared_dir=str(project.shared_dir),
        shared_package=shared_package,
        out_dir=str(build.out_dir),
        kernel_crate_name=project.kernel_crate_name,
        archs=tuple(build.options.cuda_archs),
        repository=p.repository,
        rev=p.rev,
    )


def builder_root(build: KernelBuild, p: Pins, env: Mapping[str, str]) -> Path:
    """One builder per (Rust-CUDA rev, workspace): the crates hold absolute paths."""
    ws = hashlib.sha256(str(build.project.root).encode()).hexdigest()[:12]
    return cache_dir(env) / "nvvm" / p.rev[:12] / ws


def cuda_root(env: Mapping[str, str]) -> Path | None:
    """Rust-CUDA's search order (crates/cust_raw/build/cuda_sdk.rs)."""
    for name in CUDA_ROOT_ENV:
        if env.get(name):
            return Path(env[name])
    return next((Path(r) for r in CUDA_DEFAULT_ROOTS if Path(r).is_dir()), None)


def cuda_major(root: Path | None) -> str | None:
    try:
        data = json.loads((root / "version.json").read_text()) if root else {}
    except (OSError, ValueError):
        return None
    version = data.get("cuda", {}).get("version", "") if isinstance(data, dict) else ""
    return version.split(".")[0] or None


def toolchain_env(in_container: bool, env: Mapping[str, str]) -> dict[str, str]:
    """LLVM_CONFIG, CUDA_PATH and LD_LIBRARY_PATH (nvvm/lib64) for the build."""
    from rgpu.placement import llvm7_config

    if in_container:
        llvm, cuda, rest = IMAGE_LLVM_CONFIG, IMAGE_CUDA, ""
    else:
        llvm, root, rest = llvm7_config(env) or "", cuda_root(env), env.get("LD_LIBRARY_PATH", "")
        cuda = str(root) if root else IMAGE_CUDA
    out = {
        "CUDA_PATH": cuda,
        "LD_LIBRARY_PATH": ":".join(p for p in (f"{cuda}/nvvm/lib64", rest) if p),
    }
    if llvm:
        out["LLVM_CONFIG"] = llvm
    return out


def steps(build: KernelBuild, p: Pins, root: Path, tool_env: Mapping[str, str]) -> list[Step]:
    spec = make_spec(build, p)
    cwd = build.project.root
    return [
        Step(
            name="nvvm-toolchain",
            description=f"install {p.channel} with {', '.join(p.components)} (once)",
            argv=("rustup", "toolchain", "install", p.channel, "--profile", "minimal",
                  "--component", ",".join(p.components)),
            cwd=cwd,
            container_ok=True,
        ),
        Step(
            name="nvvm-builder-crate",
            description=f"write the cuda_builder crate ({p.rev[:8]}) into {root}",
            argv=(sys.executable, "-m", "rgpu.codegens.nvvm", "write-builder", str(root),
                  json.dumps(asdict(spec), sort_keys=True)),
            cwd=cwd,
        ),
        Step(
            name="nvvm-build",
            description=f"kernel -> PTX for {', '.join(spec.archs)} (rustc_codegen_nvvm)",
            argv=("cargo", f"+{p.channel}", "build", "--release", "--manifest-path",
                  str(root / "builder" / "Cargo.toml")),
            cwd=cwd,
            env=dict(tool_env),
            unset_env=UNSET_ENV,
            container_ok=True,
        ),
    ]  # fmt: skip


class NvvmCodegen:
    name = "nvvm"
    artifact_kind = "ptx"
    # Rust-CUDA's images keep rustup under /root: steps run as root there, then rgpu gives
    # what they wrote back to the invoking user (container.py, `chown_back`).
    container_as_root = True

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env

    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def container_image(self, env: Mapping[str, str]) -> str:
        """Rust-CUDA's image for this machine's CUDA major (12 when none is installed)."""
        from rgpu.placement import toolchain_table

        images = toolchain_table("nvvm").get("images")
        images = images if isinstance(images, dict) else IMAGES
        major = cuda_major(cuda_root(env)) or "12"
        return str(images.get(major, images.get("12", IMAGES["12"])))

    def plan(self, build: KernelBuild) -> Plan:
        from rgpu.placement import decide

        env = self.env()
        for arch in build.options.cuda_archs:
            nvvm_arch(arch)  # fail early on archs NvvmArch does not have
        p = pins()
        where = decide(self.name, build.options, env, image_for_codegen=self.container_image(env))
        root = builder_root(build, p, env)
        notes = (
            NOT_IN_CI,
            f"Rust-CUDA {p.repository} at {p.rev}, toolchain {p.channel}",
            f"PTX goes to {build.out_dir}/{build.project.kernel_crate_name}-<arch>.ptx",
        )
        tool_env = toolchain_env(where.in_container, env)
        return Plan(steps=tuple(steps(build, p, root, tool_env)), notes=notes)

    def collect(self, build: KernelBuild) -> list[Artifact]:
        from rgpu import ptx
        from rgpu.codegens.nvptx import check_and_describe

        ptxas = ptx.find_ptxas(self.env())
        produced = []
        for arch, path in make_spec(build, pins()).outputs():
            file = Path(path)
            if not file.is_file():
                raise ArtifactError(f"rustc_codegen_nvvm did not produce {file} ({arch})")
            produced.append(
                check_and_describe(file, build.out_dir, ptxas, self.env(), codegen=self.name)
            )
        return produced


CODEGEN = NvvmCodegen()


def main(argv: Sequence[str]) -> int:
    """`python -m rgpu.codegens.nvvm write-builder ROOT SPEC_JSON` (the plan's step)."""
    if len(argv) != 3 or argv[0] != "write-builder":
        print("usage: python -m rgpu.codegens.nvvm write-builder ROOT SPEC_JSON", file=sys.stderr)
        return 2
    data = json.loads(argv[2])
    data["archs"] = tuple(data["archs"])
    write_builder(BuilderSpec(**data), Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
