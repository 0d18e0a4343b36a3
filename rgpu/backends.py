"""The one table of backends and codegens, and the one place their names are checked.

A backend is how the host runs a kernel (its cargo feature, the kind of kernel artifact it
embeds); a codegen is a compiler from Rust to that artifact (its module under
rgpu/codegens/). A name typed by the user (`--backend`, `backend` in
[workspace.metadata.rgpu], RGPU_BUILD_BACKEND, `--codegen`, ...) is checked here once, where
it enters, and carried as a `Backend` from then on. Help texts are made from these tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from rgpu.errors import RgpuError, UsageError, did_you_mean


class Backend(NamedTuple):
    """What a backend is, everywhere rgpu asks: building it, `rgpu doctor`, `rgpu ci init`."""

    name: str
    feature: str | None  # the host feature that builds it in; None: always built in
    artifact: str | None  # "ptx", "spirv", "wgsl", or None when the host needs no kernel artifact
    # The Rust target its host programs are built for; None: this machine's (cargo's
    # default). webgpu builds them for the browser (rgpu/web/build.py).
    host_target: str | None = None
    # What it runs on, in words, for help texts.
    runs_on: str = ""
    # What running its programs needs, as `rgpu doctor` checks it (the key its checks list
    # in `needed_for`); None: the CPU, nothing to check.
    run_key: str | None = None
    # The devices `rgpu doctor` lists for it ("cuda", "vulkan", "cpu"); None: none listed
    # (webgpu's is the browser's one adapter).
    devices: str | None = None
    # Its job in the workflow `rgpu ci init` writes: the setup it gets ("cpu", "vulkan",
    # "cuda", "web"); where its programs run there ("runner": lavapipe is a real Vulkan
    # device on the runner's CPU; "browser": the runner's headless Chrome with WebGPU on
    # SwiftShader; None: the runners have no GPU, the job compiles and checks the PTX with
    # ptxas); whether the workflow has it when --backends does not say; and its jobs on
    # other platforms' runners, (platform, runner).
    ci_setup: str = "cpu"
    ci_runs: str | None = "runner"
    ci_default: bool = False
    ci_platforms: tuple[tuple[str, str], ...] = ()


BACKENDS: dict[str, Backend] = {
    "cpu": Backend("cpu", None, None, runs_on="the CPU", devices="cpu", ci_default=True),
    "cuda": Backend(
        "cuda",
        "cuda",
        "ptx",
        runs_on="CUDA",
        run_key="cuda-run",
        devices="cuda",
        ci_setup="cuda",
        ci_runs=None,
        ci_default=True,
    ),
    "wgpu": Backend(
        "wgpu",
        "wgpu",
        "spirv",
        runs_on="Vulkan (and Metal, DX12) through wgpu",
        run_key="vulkan-run",
        devices="vulkan",
        ci_setup="vulkan",
        ci_default=True,
        # wgpu also reaches the GPU through Metal (macOS: the runner's Apple GPU) and DX12
        # (Windows: WARP, Microsoft's DirectX on the CPU), its kernels through naga (MSL,
        # HLSL). NOT RUN BY rgpu's DEVELOPERS (no macOS or Windows machine): written to
        # GitHub's documented runners, checked by actionlint.
        ci_platforms=(("metal", "macos-latest"), ("dx12", "windows-latest")),
    ),
    "ash": Backend(
        "ash",
        "ash",
        "spirv",
        runs_on="Vulkan through ash",
        run_key="vulkan-run",
        devices="vulkan",
        ci_setup="vulkan",
        ci_default=True,
    ),
    # webgpu is asked for by name in CI (`--backends ...,webgpu`): its kernels need WGSL
    # from rust-gpu's SPIR-V that browsers accept (docs/reference.md, WebGPU).
    "webgpu": Backend(
        "webgpu",
        "webgpu",
        "wgsl",
        "wasm32-unknown-unknown",
        runs_on="WebGPU in a browser",
        run_key="browser-run",
        ci_setup="web",
        ci_runs="browser",
    ),
}


def run_keys() -> dict[str, tuple[str, ...]]:
    """Each run key (`Backend.run_key`) and the backends whose programs it is about."""
    keys: dict[str, tuple[str, ...]] = {}
    for b in BACKENDS.values():
        if b.run_key:
            keys[b.run_key] = (*keys.get(b.run_key, ()), b.name)
    return keys


def of_artifact(kind: str) -> tuple[str, ...]:
    """The backends whose host embeds kernels of `kind` ("ptx", "spirv", "wgsl")."""
    return tuple(b.name for b in BACKENDS.values() if b.artifact == kind)


class Entry(NamedTuple):
    name: str
    module: str
    backends: tuple[str, ...]  # the backends it compiles for


# The codegens, one line each. A backend's default codegen is the first entry that lists it.
REGISTRY: tuple[Entry, ...] = (
    Entry("nvptx", "rgpu.codegens.nvptx", ("cuda",)),
    Entry("nvvm", "rgpu.codegens.nvvm", ("cuda",)),
    Entry("spirv", "rgpu.codegens.spirv", ("wgpu", "ash", "webgpu")),
)


def split_names(values: Iterable[str]) -> list[str]:
    """`--backend a,b --backend c` -> [a, b, c] (order kept, duplicates dropped)."""
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return list(dict.fromkeys(names))


def names_help(names: Sequence[str] | None = None) -> str:
    """ "cpu, cuda, wgpu, ash or webgpu", for help texts."""
    names = list(BACKENDS) if names is None else list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def summary() -> str:
    """What the backends run on, in one phrase: "the CPU, CUDA, ... and WebGPU in a browser"."""
    parts = [b.runs_on for b in BACKENDS.values()]
    return f"{', '.join(parts[:-1])} and {parts[-1]}"


def get_backend(name: str, where: str = "", error: type[RgpuError] = UsageError) -> Backend:
    """The backend called ``name``; else ``error`` naming ``where`` it came from, with the
    nearest name."""
    try:
        return BACKENDS[name]
    except KeyError:
        origin = f"{where} names an unknown backend" if where else "unknown backend"
        raise error(
            f"{origin} `{name}`{did_you_mean(name, tuple(BACKENDS))}",
            f"backend names: {', '.join(BACKENDS)} (e.g. `rgpu build --backend cpu`)",
        ) from None


def parse_backends(
    values: Iterable[str], where: str = "", error: type[RgpuError] = UsageError
) -> tuple[Backend, ...]:
    """Names as typed (each may be "a,b") -> Backends, in order, once each."""
    return tuple(get_backend(n, where, error) for n in split_names(values))


def codegen_names() -> tuple[str, ...]:
    return tuple(e.name for e in REGISTRY)


def codegen_choices() -> str:
    """The codegens per backend, for help texts: "cuda: nvptx, nvvm; wgpu/ash: spirv"."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for e in REGISTRY:
        groups.setdefault(e.backends, []).append(e.name)
    return "; ".join(f"{'/'.join(b)}: {', '.join(n)}" for b, n in groups.items())


def codegens_for(backend: str) -> tuple[str, ...]:
    return tuple(e.name for e in REGISTRY if backend in e.backends)


def backends_of(codegen: str) -> tuple[str, ...]:
    return next((e.backends for e in REGISTRY if e.name == codegen), ())


def check_codegen(name: str, where: str = "", error: type[RgpuError] = UsageError) -> str:
    """``name`` when it is a codegen; else ``error`` with the nearest name."""
    if name not in codegen_names():
        origin = f"{where} names an unknown codegen" if where else "unknown codegen"
        forms = " or ".join(f"{e.name} ({', '.join(e.backends)})" for e in REGISTRY)
        raise error(
            f"{origin} `{name}`{did_you_mean(name, codegen_names())}",
            f"available codegens: {forms}",
        )
    return name


def resolve_codegen(backend: str, codegen: str | None) -> str | None:
    """The codegen that builds `backend`: the one asked for, else its default, the first
    REGISTRY entry that lists it (None for a backend that needs no kernel artifact, like
    cpu). The one place that rule is written."""
    allowed = codegens_for(backend)
    if codegen is not None and not allowed:
        raise UsageError(
            f"codegen `{codegen}` cannot build for the {backend} backend",
            f"the {backend} backend compiles no kernel: drop --codegen",
        )
    if codegen is None:
        return allowed[0] if allowed else None
    if codegen not in allowed:
        raise UsageError(
            f"codegen `{codegen}` cannot build for the {backend} backend"
            f"{did_you_mean(codegen, allowed)}",
            f"codegens for {backend}: {', '.join(allowed)}",
        )
    return codegen
