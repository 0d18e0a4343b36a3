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
    name: str
    feature: str | None  # the host feature that builds it in; None: always built in
    artifact: str | None  # "ptx", "spirv", "wgsl", or None when the host needs no kernel artifact
    # The Rust target its host programs are built for; None: this machine's (cargo's
    # default). webgpu builds them for the browser (rgpu/web/build.py).
    host_target: str | None = None
    # What it runs on, in words, for help texts.
    runs_on: str = ""


BACKENDS: dict[str, Backend] = {
    "cpu": Backend("cpu", None, None, runs_on="the CPU"),
    "cuda": Backend("cuda", "cuda", "ptx", runs_on="CUDA"),
    "wgpu": Backend("wgpu", "wgpu", "spirv", runs_on="Vulkan (and Metal, DX12) through wgpu"),
    "ash": Backend("ash", "ash", "spirv", runs_on="Vulkan through ash"),
    "webgpu": Backend(
        "webgpu", "webgpu", "wgsl", "wasm32-unknown-unknown", runs_on="WebGPU in a browser"
    ),
}


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
