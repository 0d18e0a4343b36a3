"""What the last successful build made, and with which settings: target/rgpu/build.json.

Backends accumulate: a binary keeps every backend built into it, so choosing one of them
later (`rgpu run --backend cpu` after a cuda build) never rebuilds. `rgpu test` and
`rgpu run` build again with the last build's settings (`again`): the CUDA archs, codegen,
container and SPIR-V options it was given, so that testing what was built never compiles
other kernels or relinks the program.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.backends import BACKENDS, Backend
from rgpu.config import Options
from rgpu.cuda_archs import CudaArchs
from rgpu.util.files import write_text_if_changed
from rgpu.workspace import Workspace

BUILD_STATE = "build.json"
# The Options fields a build records and `again` restores (profile is State.profile).
SETTINGS = (
    "codegen",
    "cuda_archs",
    "docker",
    "image",
    "spirv_capabilities",
    "require_platforms",
    "target_platforms",
    "spirv_opt",
    "float_contraction",
    "checked",
)


class Target(NamedTuple):
    name: str
    kind: str  # "bin" or "example"
    path: str  # the executable


# The build `rgpu run` and `rgpu test` make first (the programs it built): the command passes
# pipeline.build's, so that host/ imports nothing above it.
Build = Callable[[Workspace, Options, Sequence[Backend]], Sequence[Target]]


class State(NamedTuple):
    backends: tuple[Backend, ...]
    profile: str
    features: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()
    # The build's settings (SETTINGS of its Options), as JSON values.
    settings: Mapping[str, Any] = {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "backends": [b.name for b in self.backends],
            "profile": self.profile,
            "features": list(self.features),
            "targets": [t._asdict() for t in self.targets],
            "settings": dict(self.settings),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> State:
        return cls(
            # A name this rgpu does not know (a newer rgpu wrote it): KeyError, no state.
            backends=tuple(BACKENDS[str(b)] for b in data["backends"]),
            profile=str(data["profile"]),
            features=tuple(str(f) for f in data.get("features", [])),
            targets=tuple(Target(**t) for t in data.get("targets", [])),
            settings=dict(data.get("settings", {})),
        )


def settings_of(options: Options) -> dict[str, Any]:
    """The settings a build records (tuples as lists, archs as their names: JSON)."""
    values = {**options._asdict(), "cuda_archs": options.cuda_archs.names()}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if k in SETTINGS}


def again(options: Options, state: State | None, *, profile_given: bool) -> Options:
    """``options`` with the last build's settings, for `rgpu test` and `rgpu run`: what was
    built is what they build (a no-op when nothing changed). Only their own command line
    (--release/--debug) wins; a build with other settings is `rgpu build`'s to make."""
    if state is None:
        return options
    recorded: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v
        for k, v in state.settings.items()
        if k in SETTINGS and k in options._fields
    }
    if "cuda_archs" in recorded:
        recorded["cuda_archs"] = CudaArchs.parse(recorded["cuda_archs"])
    if "docker" in recorded:
        recorded["docker_source"] = "the last build's (target/rgpu/build.json)"
    if not profile_given:
        recorded["profile"] = state.profile
    return options._replace(**recorded)


def kept_archs(options: Options, state: State | None, *, archs_chosen: bool) -> Options:
    """``options`` for `rgpu build` when the PTX is built only because an earlier build put
    cuda in (backends accumulate) and nothing chose archs this time (no --arch, no
    RGPU_CUDA_ARCHS, no `cuda-archs` in the metadata): the archs that build was given, so
    `rgpu build --backend wgpu` after `rgpu build --backend cuda --arch sm_90` compiles no
    other PTX."""
    if archs_chosen or state is None or any(b.artifact == "ptx" for b in options.backends):
        return options
    recorded = state.settings.get("cuda_archs")
    if not recorded or not any(b.artifact == "ptx" for b in state.backends):
        return options
    return options._replace(cuda_archs=CudaArchs.parse(recorded))


def read(rgpu_dir: Path) -> State | None:
    try:
        data = json.loads((rgpu_dir / BUILD_STATE).read_text(encoding="utf-8"))
        return State.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(rgpu_dir: Path, state: State) -> None:
    text = json.dumps(state.to_dict(), indent=2, sort_keys=True) + "\n"
    write_text_if_changed(rgpu_dir / BUILD_STATE, text)
