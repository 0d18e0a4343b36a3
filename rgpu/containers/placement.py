"""Where a codegen's kernel compile runs: locally, or in a container of which image.

Decided once per build (pipeline.py) and carried to the codegen's plan. The default comes
from the codegen's pin file (`[container] default`):
- "local": here;
- "container": in the image of `[container] image` (else rgpu's own image);
- "unless-llvm": here when an `llvm-config` of the pin's `[llvm] major` is found (the rule
  of Rust-CUDA's build script), else in a container ("unless-llvm7" is the same word).
`--docker/--no-docker` (or RGPU_DOCKER / `docker` in [workspace.metadata.rgpu]) overrides
it; `--image` / RGPU_IMAGE overrides the image.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from rgpu.config import Options
from rgpu.containers.engine import DEFAULT_IMAGE
from rgpu.toolchains import tools
from rgpu.toolchains.pins import Pin

DEFAULT_WORDS = ("local", "container", "unless-llvm", "unless-llvm7")


class Placement(NamedTuple):
    in_container: bool
    image: str | None
    why: str

    @staticmethod
    def local(why: str) -> Placement:
        return Placement(False, None, why)


def default_word(pin: Pin) -> str:
    word = pin.table("container").get("default")
    return str(word) if word in DEFAULT_WORDS else "local"


def local_llvm(pin: Pin, env: Mapping[str, str]) -> tools.LlvmConfig | None:
    """The llvm-config of the pin's `[llvm] major`, when this machine has one."""
    major = str(pin.table("llvm").get("major", ""))
    found = tools.llvm_config(env)
    return found if found is not None and major and found.major == major else None


def decide(
    pin: Pin, options: Options, env: Mapping[str, str], *, image: str | None = None
) -> Placement:
    """`image`: the codegen's own choice of image (nvvm picks one by CUDA major)."""
    chosen = options.image or image or str(pin.table("container").get("image") or DEFAULT_IMAGE)
    if options.docker is not None:
        why = f"{'--docker' if options.docker else '--no-docker'} ({options.docker_source})"
        return Placement(options.docker, chosen if options.docker else None, why)
    word = default_word(pin)
    if word == "container":
        return Placement(True, chosen, f"the {pin.name} codegen builds in a container by default")
    if word in ("unless-llvm", "unless-llvm7"):
        found = local_llvm(pin, env)
        if found is not None:
            return Placement.local(f"LLVM {found.version} found here ({found.program})")
        major = pin.table("llvm").get("major", "?")
        return Placement(True, chosen, f"no LLVM {major} here (LLVM_CONFIG or llvm-config)")
    return Placement.local(f"the {pin.name} codegen builds locally by default")
