"""The spirv codegen: rust-gpu (rustc_codegen_spirv) driven by cargo-gpu, both from crates.io.

cargo-gpu installs the pinned nightly with `rustc-dev` through rustup (only with the user's
consent), builds rustc_codegen_spirv once into its own cache (~8 minutes on 2 cores), then
compiles the shader crate below.

The plan:
1. once per version: `cargo install --locked cargo-gpu --version V --no-default-features
   --root <rgpu cache>/cargo-gpu/V`: rgpu's own cache, never the user's ~/.cargo/bin (the
   default `cargo-generate` feature's locked dependencies need a newer rustc than stable);
2. write the shader crate: the kernel crate restated as a standalone package
   (codegens/standalone.py) with `rgpu`'s `spirv` feature (which brings spirv-std) and a
   direct spirv-std dependency of the pinned version (cargo-gpu reads rust-gpu's version
   from it), under target/rgpu/spirv/crate;
3. `cargo-gpu gpu build --shader-crate <it> --output-dir target/rgpu/spirv/out --target
   <target> --capabilities C ... [--auto-install-rust-toolchain]`, the last flag only with
   the user's consent (`--yes` or RGPU_YES=1): without a TTY cargo-gpu cannot ask and
   exits 1 ("No TTY detected ...");
   with RUSTGPU_CODEGEN_ARGS=--no-spirv-opt (rust-gpu's own optimizer would fuse a*b+c);
4. read cargo-gpu's manifest.json (a list of {source_path, entry_point, wgsl_entry_point}),
   post-process each .spv (spirv_post.py: NoContraction, spirv-opt -O, spirv-val), drop
   the dead pointer-holding values naga rejects (spirv/pointer_values.py), move
   its 8- and 16-bit integers in memory into 32-bit words (spirv/narrow_memory.py)
   and compute their values in 32 bits (spirv/narrow_ints.py), copy the operands
   naga's reader loses across blocks into their users' blocks
   (spirv/naga_scopes.py): rgpu/spirv/passes.py's FOR_NAGA, in that order; spirv-val
   again and embed it;
5. the portability check (artifacts/portability.py): rgpu-naga (toolchains/naga.py,
   installed into rgpu's cache by its own plan step) translates each kernel into WGSL, MSL
   and HLSL and validates each; the files join the manifest, the failures are warnings.

The capabilities passed to cargo-gpu follow the kernels (artifacts/capabilities.py): the
device API's, those the source's scalar types need, and `spirv-capabilities` from the
workspace's config.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rgpu.artifacts import (
    capabilities,
    manifest,
    portability,
)
from rgpu.check import Check
from rgpu.checked import rustc_args as checked_args
from rgpu.codegens import KernelBuild, spirv_post, standalone
from rgpu.config import cache_dir
from rgpu.containers.placement import Placement
from rgpu.errors import ArtifactError, RgpuError, ToolMissingError
from rgpu.plan import CARGO_INSTALL_NOTES, Plan, Step
from rgpu.spirv import faults, passes
from rgpu.spirv import module as spirv_module
from rgpu.toolchains import naga, rustup
from rgpu.toolchains.pins import Pin
from rgpu.util import cmd
from rgpu.util.files import write_bytes_if_changed
from rgpu.util.platform import executable

CARGO_GPU_MANIFEST = "manifest.json"
# spirv-builder passes this variable to rustc_codegen_spirv as its codegen args (it takes
# precedence over the builder's own extra args); `--no-spirv-opt` skips the linker's spirv-opt.
CODEGEN_ARGS_ENV = "RUSTGPU_CODEGEN_ARGS"
NO_SPIRV_OPT = "--no-spirv-opt"
# A checked build (rgpu/checked.py): each panic becomes a DebugPrintf of its place, message
# and the inlined calls that led there, which spirv/faults.py turns into the fault record;
# and the kernel crates get the checked cfg (spirv-builder appends RUSTGPU_RUSTFLAGS to the
# rustflags of the shader build).
CHECKED_ABORTS = "--abort-strategy=debug-printf+backtrace"
RUSTFLAGS_ENV = "RUSTGPU_RUSTFLAGS"
# The extension a module with DebugPrintf declares (rust-gpu's spirv-val refuses it without).
CHECKED_EXTENSIONS = ("--extensions", "SPV_KHR_non_semantic_info")


def codegen_env(checked: bool) -> dict[str, str]:
    """The environment of the shader build: rust-gpu's codegen args and extra rustflags."""
    if not checked:
        return {CODEGEN_ARGS_ENV: NO_SPIRV_OPT}
    return {
        CODEGEN_ARGS_ENV: f"{NO_SPIRV_OPT} {CHECKED_ABORTS}",
        RUSTFLAGS_ENV: " ".join(checked_args(True)),
    }


# The nested cargo must not inherit these (spirv-builder strips them too: cargo_cmd.rs);
# RUSTUP_TOOLCHAIN would override the pinned nightly cargo-gpu selects.
UNSET_ENV = ("RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR")


# rust-gpu's warning that its own optimizer is off: rgpu turned it off (NO_SPIRV_OPT) and runs
# spirv-opt itself, so the warning, and cargo's count of it when it is the only one, would be
# a warning rgpu causes on every build.
HIDDEN_WARNINGS = (
    r"warning: `spirv-opt` should have ran .* but was disabled by `--no-spirv-opt`",
    r"warning: `[^`]+` \(lib\) generated 1 warning",
)


# spirv-val on an f64 GLSL.std.450 instruction that takes 16/32-bit floats only.
_F64_GLSL = re.compile(r"GLSL\.std\.450 (\w+): expected Result Type to be a 16 or 32-bit")


@dataclass(frozen=True, kw_only=True)
class SpirvPin:
    version: str  # rust-gpu's crates.io version: spirv-std, cargo-gpu, rustc_codegen_spirv
    channel: str
    components: tuple[str, ...]
    target: str
    capabilities: tuple[str, ...]


def spirv_pin(pin: Pin) -> SpirvPin:
    build = pin.table("build")
    extra = pin.table("cargo-gpu").get("extra_components", [])
    return SpirvPin(
        version=str(pin.table("cargo-gpu").get("version", pin.source.rev)),
        channel=pin.channel,
        components=tuple(str(c) for c in [*pin.components, *extra]),
        target=str(build.get("target", "spirv-unknown-vulkan1.2")),
        capabilities=tuple(str(c) for c in build.get("capabilities", [])),
    )


@dataclass(frozen=True)
class SpirvToolchain:
    pin: SpirvPin
    cargo_gpu: Path  # where rgpu keeps (or will install) cargo-gpu
    status: rustup.Status | None
    problem: str | None  # rustup failed to answer
    problem_fix: str | None = None  # and how to make it answer
    translator: naga.NagaTool | None = None  # rgpu-naga, for the portability check
    # No C++ compiler, and rust-gpu's compiler not built yet (cxx_missing): its first build
    # compiles SPIRV-Tools' C++ (spirv-tools-sys), and fails after minutes without one.
    cxx_missing: str | None = None


CXX_FIX = (
    "install a C++ compiler (Debian/Ubuntu: `sudo apt-get install g++`; or set CXX), then "
    "run the same rgpu command again"
)


def cxx_missing(p: SpirvPin, env: Mapping[str, str]) -> str | None:
    """Why the first spirv build would fail for want of a C++ compiler; None when one is
    there (CXX, c++, g++, clang++) or rust-gpu's compiler is built already. cargo-gpu keeps
    it in `<cache>/rust-gpu/codegen/<version>/` (Linux: XDG_CACHE_HOME, else ~/.cache)."""
    import sys

    if not sys.platform.startswith("linux"):
        return None  # cargo-gpu's cache is elsewhere there; cc-rs says what it lacks
    cxx = env.get("CXX", "").split()
    if any(cmd.which(c, env) for c in (cxx[:1] or []) + ["c++", "g++", "clang++"]):
        return None
    home = env.get("HOME") or str(Path.home())
    cache = Path(env.get("XDG_CACHE_HOME") or Path(home) / ".cache")
    built = cache / "rust-gpu" / "codegen" / p.version.replace(".", "_")
    if (built / "librustc_codegen_spirv.so").is_file():
        return None
    return (
        "no C++ compiler (c++, g++ or CXX): the first spirv build compiles rust-gpu's "
        f"rustc_codegen_spirv {p.version}, which builds SPIRV-Tools' C++"
    )


def toolchain_installed(tc: SpirvToolchain) -> bool:
    """Whether rustup has the pin's toolchain with every component: then cargo-gpu installs
    nothing, and the note about its installs does not apply."""
    return tc.status is not None and tc.status.ok


def cargo_gpu_root(p: SpirvPin, env: Mapping[str, str]) -> Path:
    return cache_dir(env) / "cargo-gpu" / p.version


def crate_dir(build: KernelBuild) -> Path:
    return build.workspace.rgpu_dir / "spirv" / "crate"


def output_dir(build: KernelBuild) -> Path:
    return build.workspace.rgpu_dir / "spirv" / "out"


def toolchain_hint(p: SpirvPin) -> str:
    return (
        "if cargo-gpu stopped at \"No TTY detected so can't ask for consent to install Rust "
        'toolchain", allow the install: rerun the same `rgpu build` with --yes (or '
        f"RGPU_YES=1), or install it yourself: `rgpu toolchain install spirv --yes` "
        f"(`rustup toolchain install {p.channel} -c {','.join(p.components)}`)"
    )


def shader_crate(build: KernelBuild, p: SpirvPin) -> dict[str, str]:
    """The shader crate's files (relative path -> text)."""
    data = standalone.manifest(
        build.workspace,
        package=f"{build.workspace.kernel_package}-spirv",
        feature="spirv",
        crate_types=("rlib", "dylib"),
        extra_dependencies={"spirv-std": {"version": f"={p.version}"}},
    )
    data["lints"] = {
        "rust": {
            "unexpected_cfgs": {
                "level": "allow",
                "check-cfg": ['cfg(target_arch, values("spirv"))'],
            }
        }
    }
    return {"Cargo.toml": standalone.render(data, "rust-gpu (cargo-gpu)")}


def write_step(directory: Path, files: Mapping[str, str], what: str) -> Step:
    """A plan step that writes generated files under ``directory`` (only those that
    changed; rgpu writes them itself, runner.py)."""
    return Step(
        name="write-crate",
        description=f"write the {what} into {directory}",
        argv=(),
        cwd=directory,
        files=dict(files),
    )


class SpirvCodegen:
    name = "spirv"
    artifact_kind = "spirv"
    container_as_root = False
    installs_toolchain = True
    ci_setup = (("rgpu", "toolchain", "install", "spirv", "--yes"),)
    ci_build_args: tuple[str, ...] = ()

    def image(self, pin: Pin, env: Mapping[str, str]) -> str | None:
        return None

    def toolchain(self, pin: Pin, placement: Placement, env: Mapping[str, str]) -> SpirvToolchain:
        p = spirv_pin(pin)
        try:
            status, problem, fix = rustup.status(pin, env), None, None
        except RgpuError as error:
            status, problem, fix = None, error.message, error.hint
        cargo_gpu = cargo_gpu_root(p, env) / "bin" / executable("cargo-gpu")
        return SpirvToolchain(
            p, cargo_gpu, status, problem, fix, naga.find(pin, env), cxx_missing(p, env)
        )

    def install(self, build: KernelBuild, env: Mapping[str, str]) -> None:
        """Nothing to install before the plan runs (cargo-gpu installs what it needs), but
        a C++ compiler rgpu cannot install: without one, stop now, not minutes later."""
        problem = cxx_missing(spirv_pin(build.pin), env)
        if problem is not None:
            raise ToolMissingError(f"{problem}; stopped before compiling", CXX_FIX)

    def checks(self, pin: Pin, toolchain: SpirvToolchain) -> list[Check]:
        # start-up: <1 ms to import doctor.pins; only this path pays it
        from rgpu.doctor.pins import pin_checks

        found = toolchain
        checks = pin_checks(pin, found.status, found.problem, found.problem_fix)
        if found.cargo_gpu.is_file():
            checks.append(Check("spirv cargo-gpu", "ok", str(found.cargo_gpu), None, ("spirv",)))
        else:
            checks.append(
                Check(
                    "spirv cargo-gpu",
                    "ok",
                    f"not installed yet: the first spirv build installs cargo-gpu "
                    f"{found.pin.version} into {found.cargo_gpu.parent.parent}",
                    None,
                    ("spirv",),
                )
            )
        if found.cxx_missing is not None:
            checks.append(
                Check("spirv C++ compiler", "fail", found.cxx_missing, CXX_FIX, ("spirv",))
            )
        tool = found.translator
        if tool is not None:
            detail = (
                str(tool.binary)
                if tool.installed
                else f"not installed yet: the first spirv build installs rgpu-naga (naga "
                f"{tool.version}) into {tool.root}"
            )
            checks.append(Check("spirv rgpu-naga", "ok", detail, None, ("spirv",)))
        return checks

    def capabilities(self, build: KernelBuild) -> tuple[str, ...]:
        """What cargo-gpu declares: the device API's, the source's types', the config's."""
        p: SpirvPin = build.toolchain.pin
        return capabilities.combined(
            p.capabilities,
            capabilities.from_types(build.kernel_types),
            build.options.spirv_capabilities,
        )

    def explain_failure(self, output: str) -> RgpuError | None:
        """rust-gpu's missing-capability error as one rgpu line with the config key; an f64
        float function Vulkan does not have (spirv-val's word) as what it is."""
        missing = capabilities.missing(output)
        if missing is not None:
            return RgpuError(missing.message(), missing.hint())
        if m := _F64_GLSL.search(output):
            return RgpuError(
                f"a kernel calls an f64 float function Vulkan does not have (GLSL.std.450 "
                f"`{m.group(1)}`: spirv-val wants a 16- or 32-bit float): GLSL.std.450's Exp, "
                "Exp2, Log, Log2, Sin, Cos, Tan, Tanh and Pow take no f64",
                "call exp, ln, sin, cos, tan, tanh, powf (and x.powi, which spirv-std makes Pow) "
                "on f32 in kernels for wgpu and ash (cuda and the cpu have them in f64), or "
                "build only --backend cuda,cpu; docs/kernel-api.md lists each function per "
                "backend",
            )
        return None

    def plan(self, build: KernelBuild) -> Plan:
        tc: SpirvToolchain = build.toolchain
        p, root = tc.pin, build.workspace.root
        steps: list[Step] = []
        if not tc.cargo_gpu.is_file():
            steps.append(
                Step(
                    name="install-cargo-gpu",
                    description=f"install cargo-gpu {p.version} into rgpu's cache (once)",
                    # Without its default `cargo-generate` feature (whose locked
                    # dependencies need a newer rustc than stable) cargo-gpu installs with
                    # the user's own cargo.
                    argv=(
                        "cargo",
                        "install",
                        "--locked",
                        "cargo-gpu",
                        "--version",
                        p.version,
                        "--no-default-features",
                        "--root",
                        str(tc.cargo_gpu.parent.parent),
                    ),
                    cwd=root,
                    unset_env=UNSET_ENV,
                    keep_output=True,
                    hide=CARGO_INSTALL_NOTES,
                )
            )
        tool = tc.translator
        if tool is not None and not tool.installed:
            steps.append(
                Step(
                    name="install-rgpu-naga",
                    description=f"install rgpu-naga (naga {tool.version}) into rgpu's cache "
                    "(once): the portability check",
                    argv=tool.install_argv(),
                    cwd=root,
                    unset_env=UNSET_ENV,
                    keep_output=True,
                    hide=CARGO_INSTALL_NOTES,
                )
            )
        steps.append(write_step(crate_dir(build), shader_crate(build, p), "shader crate"))
        caps = tuple(a for c in self.capabilities(build) for a in ("--capabilities", c))
        consent = ("--auto-install-rust-toolchain",) if build.options.yes else ()
        checked = CHECKED_EXTENSIONS if build.options.checked else ()
        steps.append(
            Step(
                name="spirv-kernel",
                description=f"kernel -> SPIR-V ({p.target}) with rust-gpu {p.version}",
                argv=(
                    str(tc.cargo_gpu),
                    "gpu",
                    "build",
                    "--shader-crate",
                    str(crate_dir(build)),
                    "--output-dir",
                    str(output_dir(build)),
                    "--target",
                    p.target,
                    *caps,
                    *checked,
                    *consent,
                ),
                cwd=root,
                # rust-gpu's linker runs its own bundled spirv-opt -O on release builds, which
                # folds a*b+c into one Fma before rgpu could mark it NoContraction: rgpu runs
                # the optimizer itself, after the decorations (spirv_post.py).
                env=codegen_env(build.options.checked),
                unset_env=UNSET_ENV,
                hint=None if build.options.yes else toolchain_hint(p),
                keep_output=True,
                hide=HIDDEN_WARNINGS,
            )
        )
        notes: list[str] = []
        if not build.options.yes and not toolchain_installed(tc):
            notes.append(
                f"cargo-gpu installs toolchain {p.channel} ({', '.join(p.components)}) through "
                "rustup if it is missing; rgpu allows that only with --yes (or RGPU_YES=1)"
            )
        return Plan(steps=tuple(steps), notes=tuple(notes))

    def collect(self, build: KernelBuild) -> list[manifest.Artifact]:
        tc: SpirvToolchain = build.toolchain
        translator = tc.translator.binary if tc.translator is not None else None
        return collect_from(
            output_dir(build),
            build.out_dir,
            crate_dir(build),
            tc.pin,
            translator,
            opt=build.options.spirv_opt,
            contraction=build.options.float_contraction,
            checked=build.options.checked,
            root=build.workspace.root,
        )

    def dep_infos(self, build: KernelBuild) -> None:
        return None  # cargo-gpu decides itself what to rebuild


def read_cargo_gpu_manifest(directory: Path) -> list[dict[str, str]]:
    path = directory / CARGO_GPU_MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [
            {"source_path": str(e["source_path"]), "entry_point": str(e["entry_point"])}
            for e in data
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(
            f"cargo-gpu's {path} is missing or not what rgpu expects: {exc}",
            "rebuild with `rgpu build --backend wgpu --yes`",
        ) from exc


def _for_naga(spv: Path, data: bytes) -> tuple[bytes, dict[str, object]]:
    """rust-gpu's post-processed ``spv`` (``data``) as naga takes it, and the passes' reports
    (spirv/passes.py's FOR_NAGA): without the dead pointer-holding values rust-gpu leaves,
    which naga (wgpu on Metal and DX12, the MSL/HLSL/WGSL translations) rejects (what runs
    is unchanged); then 8- and 16-bit integers in memory moved into 32-bit words and their
    values computed in 32 bits (naga reads no 8-bit types, WebGPU has no 16-bit ones); then
    the operands naga's reader loses across blocks copied into their users' blocks."""
    try:
        return passes.run(passes.FOR_NAGA, data)
    except ValueError as exc:
        raise ArtifactError(
            f"{spv} is not a readable SPIR-V module: {exc}",
            "rebuild with `rgpu build --backend wgpu --yes`",
        ) from exc


def collect_from(
    directory: Path,
    base: Path,
    crate: Path,
    p: SpirvPin,
    translator: Path | None = None,
    *,
    opt: bool = True,
    contraction: bool = False,
    checked: bool = False,
    root: Path | None = None,
) -> list[manifest.Artifact]:
    """cargo-gpu's manifest.json -> one artifact per .spv, post-processed (spirv_post.py:
    NoContraction, spirv-opt, spirv-val; then narrow integers in 32 bits and without the dead
    pointer-holding values naga rejects, spirv-val) into the kernels dir, and (with
    ``translator``) each kernel's WGSL, MSL and HLSL beside it."""
    by_file: dict[Path, list[str]] = {}
    for entry in read_cargo_gpu_manifest(directory):
        # source_path is relative to the shader crate when the file lies under it, else
        # absolute (crates/cargo-gpu/src/build.rs).
        spv = Path(entry["source_path"])
        spv = spv if spv.is_absolute() else crate / spv
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
        validated = spirv_module.validate(spv, p.target)
        work = directory / f"{spv.stem}.opt.spv"
        data, post = spirv_post.process(
            spv, work, p.target, opt=opt, contraction=contraction, checked=checked
        )
        if "checked_faults" in post:
            base_dir = str(root) if root is not None else None
            sites = post["checked_faults"]["sites"]
            post["checked_faults"]["sites"] = [faults.compact(s, base_dir) for s in sites]
        dest = base / spv.name
        data, for_naga = _for_naga(spv, data)
        write_bytes_if_changed(dest, data)
        if validated:
            spirv_module.validate(dest, p.target)
        extra: dict[str, object] = {
            "spirv_val": "accepted" if validated else "not run: no spirv-val",
            "rust_gpu": p.version,
            **post,
            **for_naga,
        }
        if translator is not None:
            ported = portability.check(
                dest,
                entry_points,
                translator,
                directory / "naga" / spv.stem,
                base,
                codegen="spirv",
                raw=spv,
                root=root,
            )
            found += ported.artifacts
            if "checked_faults" in post:
                # The WGSL keeps the module's fault record (binding and sites) for webgpu.
                for each in ported.artifacts:
                    if each.kind == "wgsl":
                        each.extra["checked_faults"] = post["checked_faults"]
            extra["naga"] = ported.naga
            extra["portability"] = ported.table
            if ported.sources:
                extra["sources"] = ported.sources
        found.append(
            manifest.describe(
                dest,
                base,
                kind="spirv",
                codegen="spirv",
                target=p.target,
                entry_points=entry_points,
                extra=extra,
            )
        )
    return found


CODEGEN = SpirvCodegen()
