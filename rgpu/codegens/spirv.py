"""The spirv codegen: rust-gpu (rustc_codegen_spirv) driven by cargo-gpu.

NOT EXECUTED on rgpu's own machines or CI: cargo-gpu installs a pinned nightly with the
`rustc-dev` component through rustup, which cannot be downloaded there. What is tested is
the exact plan below (commands, environment), checked against cargo-gpu's source at the
rev pinned in toolchains/spirv.toml; the Vulkan hosts are proven with a GLSL twin of the
kernel (a test fixture) passed as `--kernel-artifact`.

The plan:
1. once per rev: `cargo install --locked --git <rust-gpu> --rev <rev> cargo-gpu --root
   <rgpu cache>/cargo-gpu/<rev>`: rgpu's own cache, never the user's ~/.cargo/bin;
2. `<that>/bin/cargo-gpu gpu build --shader-crate kernel/spirv --output-dir
   target/rgpu/spirv --target <target> [--auto-install-rust-toolchain]`, the last flag only
   with the user's consent (`--yes` or RGPU_YES=1): cargo-gpu cannot ask without a TTY
   and exits 1 ("No TTY detected ...").

kernel/spirv/ is the shader crate: it compiles kernel/src with `spirv-std` at the pinned rev
and is kept out of the workspace (its own `[workspace]`), so the host never sees the git
dependency (cargo would clone rust-gpu for every plain `cargo build` otherwise).
cargo-gpu finds the rust-gpu source and rev from that spirv-std dependency (`cargo metadata`,
crates/cargo-gpu-install/src/spirv_source.rs), reads the nightly from rustc_codegen_spirv's
build.rs at that rev, and caches the built codegen in its own cache
(`~/.cache/rust-gpu/codegen/<source+rev8>`, crates/cargo-gpu-install/src/lib.rs; rgpu does
not move it: the only knob is XDG_CACHE_HOME, which other tools read too).
cargo-gpu writes `.spv` files and `manifest.json`, a list of `{source_path, entry_point,
wgsl_entry_point}` (crates/cargo-gpu/src/linkage.rs); `collect` turns it into artifacts.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu import artifacts, spirv_module
from rgpu.codegens import KernelBuild
from rgpu.config import cache_dir
from rgpu.errors import ArtifactError, ToolchainError
from rgpu.plan import Plan, Step
from rgpu.resources import toolchains_dir

OUTPUT_SUBDIR = "spirv"
SHADER_CRATE_SUBDIR = "spirv"  # under the kernel crate
CARGO_GPU_MANIFEST = "manifest.json"
# The nested cargo must not inherit these (REFERENCE.md section 1: spirv-builder strips
# them too); RUSTUP_TOOLCHAIN would override the pinned nightly cargo-gpu selects.
UNSET_ENV = ("RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR")


@dataclass(frozen=True, kw_only=True)
class Pin:
    source: str
    rev: str
    channel: str
    components: tuple[str, ...]
    target: str


def load_pin(path: Path | None = None) -> Pin:
    path = path or toolchains_dir() / "spirv.toml"
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    extra = data.get("cargo-gpu", {}).get("extra_components", [])
    return Pin(
        source=str(data["source"]["repository"]),
        rev=str(data["source"]["rev"]),
        channel=str(data["channel"]),
        components=tuple(str(c) for c in [*data["components"], *extra]),
        target=str(data["build"]["target"]),
    )


def cargo_gpu_root(pin: Pin, env: Mapping[str, str]) -> Path:
    return cache_dir(env) / "cargo-gpu" / pin.rev


def cargo_gpu_binary(pin: Pin, env: Mapping[str, str]) -> Path:
    return cargo_gpu_root(pin, env) / "bin" / "cargo-gpu"


def install_step(pin: Pin, env: Mapping[str, str], cwd: Path) -> Step:
    return Step(
        name="install-cargo-gpu",
        description=f"install cargo-gpu {pin.rev[:8]} into rgpu's cache",
        argv=(
            "cargo",
            "install",
            "--locked",
            "--git",
            pin.source,
            "--rev",
            pin.rev,
            "cargo-gpu",
            "--root",
            str(cargo_gpu_root(pin, env)),
        ),
        cwd=cwd,
        unset_env=UNSET_ENV,
    )


def toolchain_hint(pin: Pin) -> str:
    components = ",".join(pin.components)
    return (
        "if cargo-gpu stopped at \"No TTY detected so can't ask for consent to install Rust "
        'toolchain", allow the install: rerun the same `rgpu build` with --yes (or '
        f"RGPU_YES=1), or install it yourself: `rustup toolchain install {pin.channel} -c "
        f"{components}`"
    )


def build_step(pin: Pin, build: KernelBuild, env: Mapping[str, str]) -> Step:
    consent = ("--auto-install-rust-toolchain",) if build.options.yes else ()
    return Step(
        name="spirv-kernel",
        description=f"kernel -> SPIR-V ({pin.target}) with rust-gpu {pin.rev[:8]}",
        argv=(
            str(cargo_gpu_binary(pin, env)),
            "gpu",
            "build",
            "--shader-crate",
            str(shader_crate(build)),
            "--output-dir",
            str(output_dir(build)),
            "--target",
            pin.target,
            *consent,
        ),
        cwd=build.project.root,
        unset_env=UNSET_ENV,
        hint=None if build.options.yes else toolchain_hint(pin),
    )


def shader_crate(build: KernelBuild) -> Path:
    return build.project.kernel_dir / SHADER_CRATE_SUBDIR


def output_dir(build: KernelBuild) -> Path:
    return build.out_dir / OUTPUT_SUBDIR


def consent_note(pin: Pin) -> str:
    return (
        f"cargo-gpu installs toolchain {pin.channel} ({', '.join(pin.components)}) through "
        "rustup if it is missing; rgpu allows that only with --yes (or RGPU_YES=1)"
    )


class SpirvCodegen:
    name = "spirv"
    artifact_kind = "spirv"

    def plan(self, build: KernelBuild) -> Plan:
        env = os.environ
        pin = load_pin()
        if not (shader_crate(build) / "Cargo.toml").is_file():
            raise ToolchainError(
                f"{shader_crate(build)} (the rust-gpu shader crate) is missing",
                "create the workspace with `rgpu new` from rgpu >= this version, or copy "
                "kernel/spirv/ from a fresh `rgpu new` workspace",
            )
        steps: list[Step] = []
        if not cargo_gpu_binary(pin, env).is_file():
            steps.append(install_step(pin, env, build.project.root))
        steps.append(build_step(pin, build, env))
        notes: tuple[str, ...] = (
            "the spirv codegen (rust-gpu via cargo-gpu) is not exercised on rgpu's CI: it "
            "needs rustup and the rustc-dev component of a pinned nightly",
        )
        if not build.options.yes:
            notes += (consent_note(pin),)
        return Plan(steps=tuple(steps), notes=notes)

    def collect(self, build: KernelBuild) -> list[artifacts.Artifact]:
        return collect_from(output_dir(build), build.out_dir, shader_crate(build), load_pin())


def read_cargo_gpu_manifest(directory: Path) -> list[dict[str, str]]:
    path = directory / CARGO_GPU_MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = [
            {"source_path": str(e["source_path"]), "entry_point": str(e["entry_point"])}
            for e in data
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(
            f"cargo-gpu's {path} is missing or not what rgpu expects: {exc}",
            "rebuild with `rgpu build --backend wgpu --yes`",
        ) from exc
    return entries


def collect_from(
    directory: Path, base: Path, crate_dir: Path, pin: Pin
) -> list[artifacts.Artifact]:
    """cargo-gpu's manifest.json -> one artifact per .spv, with its entry points."""
    by_file: dict[Path, list[str]] = {}
    for entry in read_cargo_gpu_manifest(directory):
        # source_path is relative to the shader crate when the file lies under it
        # (crates/cargo-gpu/src/build.rs), else absolute.
        spv = Path(entry["source_path"])
        spv = spv if spv.is_absolute() else crate_dir / spv
        by_file.setdefault(spv, []).append(entry["entry_point"])
    found = []
    for spv, entry_points in sorted(by_file.items()):
        info = spirv_module.inspect(spv)
        missing = sorted(set(entry_points) - set(info.compute_entry_points))
        if missing:
            raise ArtifactError(
                f"{spv} lacks entry points cargo-gpu listed: {', '.join(missing)}",
                "rebuild with `rgpu build --backend wgpu --yes`",
            )
        validated = spirv_module.validate(spv, pin.target)
        found.append(
            artifacts.describe(
                spv,
                base,
                kind="spirv",
                codegen="spirv",
                target=pin.target,
                entry_points=entry_points,
                extra={"spirv_val": validated, "rust_gpu_rev": pin.rev},
            )
        )
    return found


CODEGEN = SpirvCodegen()
