"""Backends: how the host runs a kernel. Backend -> cargo feature, artifact kind, codegens."""

from __future__ import annotations

from dataclasses import dataclass

from rgpu.errors import UsageError


@dataclass(frozen=True)
class Backend:
    name: str
    feature: str
    artifact: str | None  # "ptx", "spirv", or None when the host needs no kernel artifact
    codegens: tuple[str, ...]
    default_codegen: str | None


BACKENDS: dict[str, Backend] = {
    "cpu": Backend("cpu", "cpu", None, (), None),
    "cuda": Backend("cuda", "cuda", "ptx", ("nvptx", "nvvm"), "nvptx"),
    "wgpu": Backend("wgpu", "wgpu", "spirv", ("spirv",), "spirv"),
    "ash": Backend("ash", "ash", "spirv", ("spirv",), "spirv"),
}

# What the demo binary accepts for --backend; "auto" is decided at run time.
RUN_BACKENDS: tuple[str, ...] = ("auto", *BACKENDS)


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    import difflib  # only on the error path

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        names = ", ".join(BACKENDS)
        raise UsageError(
            f"unknown backend `{name}`{did_you_mean(name, tuple(BACKENDS))}",
            f"use one of: {names}, e.g. `rgpu build --backend cpu`",
        ) from None


def resolve_codegen(backend: Backend, codegen: str | None) -> str | None:
    if codegen is None:
        return backend.default_codegen
    if codegen not in backend.codegens:
        allowed = ", ".join(backend.codegens) or "none (this backend compiles no kernel)"
        raise UsageError(
            f"codegen `{codegen}` cannot build for the {backend.name} backend"
            f"{did_you_mean(codegen, backend.codegens)}",
            f"codegens for {backend.name}: {allowed}",
        )
    return codegen
