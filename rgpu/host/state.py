"""What the last successful build made: target/rgpu/build.json.

Backends accumulate: a binary keeps every backend built into it, so choosing one of them
later (`rgpu run --backend cpu` after a cuda build) never rebuilds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.backends import BACKENDS, Backend
from rgpu.util.files import write_text_if_changed

BUILD_STATE = "build.json"


class Target(NamedTuple):
    name: str
    kind: str  # "bin" or "example"
    path: str  # the executable


class State(NamedTuple):
    backends: tuple[Backend, ...]
    profile: str
    features: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "backends": [b.name for b in self.backends],
            "profile": self.profile,
            "features": list(self.features),
            "targets": [t._asdict() for t in self.targets],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> State:
        return cls(
            # A name this rgpu does not know (a newer rgpu wrote it): KeyError, no state.
            backends=tuple(BACKENDS[str(b)] for b in data["backends"]),
            profile=str(data["profile"]),
            features=tuple(str(f) for f in data.get("features", [])),
            targets=tuple(Target(**t) for t in data.get("targets", [])),
        )


def read(rgpu_dir: Path) -> State | None:
    try:
        data = json.loads((rgpu_dir / BUILD_STATE).read_text(encoding="utf-8"))
        return State.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(rgpu_dir: Path, state: State) -> None:
    text = json.dumps(state.to_dict(), indent=2, sort_keys=True) + "\n"
    write_text_if_changed(rgpu_dir / BUILD_STATE, text)
