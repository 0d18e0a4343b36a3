"""Backends: how the host runs a kernel. Backend -> cargo feature and artifact kind.

Which codegens compile for a backend is said by the codegen registry (codegens.REGISTRY).
"""

from __future__ import annotations

from typing import NamedTuple

from rgpu.errors import UsageError


class Backend(NamedTuple):
    name: str
    feature: str | None  # the host feature that builds it in; None: always built in
    artifact: str | None  # "ptx", "spirv", "wgsl", or None when the host needs no kernel artifact
    # The Rust target its host programs are built for; None: this machine's (cargo's
    # default). webgpu builds them for the browser (rgpu/web/build.py).
    host_target: str | None = None


BACKENDS: dict[str, Backend] = {
    "cpu": Backend("cpu", None, None),
    "cuda": Backend("cuda", "cuda", "ptx"),
    "wgpu": Backend("wgpu", "wgpu", "spirv"),
    "ash": Backend("ash", "ash", "spirv"),
    "webgpu": Backend("webgpu", "webgpu", "wgsl", "wasm32-unknown-unknown"),
}


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
