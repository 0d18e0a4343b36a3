"""Plans are plain data: a list of commands, printed by --dry-run, run by runner.py."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

# `cargo install --root R` ends with this note when R/bin is not on PATH: rgpu installs its
# tools (cargo-gpu, rgpu-naga, wasm-bindgen) into its own cache and calls them by full path,
# so the note would tell the user to do something they need not do. Steps hide it.
CARGO_INSTALL_NOTES = (
    r"warning: be sure to add `.+` to your PATH to be able to run the installed binaries",
)


class Step(NamedTuple):
    """One command of a build: what it runs, where, and with which environment changes."""

    name: str
    description: str
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = MappingProxyType({})
    unset_env: tuple[str, ...] = ()
    # Where the step may run: "local" only, or also inside a container.
    container_ok: bool = False
    # What to tell the user when the command fails (the exact command that fixes it).
    hint: str | None = None
    # Keep what it prints (also shown as it comes), so its codegen can explain a failure.
    keep_output: bool = False
    # Lines of its output not shown (regular expressions, whole line): warnings rgpu causes
    # itself. They stay in the kept output, and the blank line after one goes with it.
    hide: tuple[str, ...] = ()
    # A step that writes generated files (relative path -> text) under `cwd`, each only when
    # it changed, instead of running a command (argv is empty): rgpu writes them itself.
    files: Mapping[str, str] = MappingProxyType({})
    # Steps next to each other with the same non-empty `together` run at the same time when
    # they run here (runner.py; in a container or under GitHub Actions, one after another):
    # independent commands, e.g. one cargo per CUDA arch, each with its own target dir.
    together: str = ""
    # Part of the no-op stamp's key (kernel_build._key). False for a step whose input the
    # stamp already watches by itself: the copy of Cargo.lock nvptx writes (the stamp stats
    # the workspace's Cargo.lock).
    keyed: bool = True

    @property
    def failure_hint(self) -> str:
        """What to do when the command fails: its own hint, else the general one (what
        the program printed says what is wrong)."""
        if self.hint:
            return self.hint
        program = Path(self.argv[0]).name if self.argv else "the command"
        return f"fix what {program} reported above, then run the same rgpu command again"

    def child_env(self, base: Mapping[str, str]) -> dict[str, str]:
        merged = {k: v for k, v in base.items() if k not in self.unset_env}
        merged.update(self.env)
        return merged

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "name": self.name,
            "description": self.description,
            "argv": list(self.argv),
            "cwd": str(self.cwd),
            "env": dict(sorted(self.env.items())),
            "unset_env": list(self.unset_env),
        }
        if self.files:
            found["files"] = dict(sorted(self.files.items()))
        return found

    def written(self) -> str:
        """What a files step writes, for people: the paths and sizes, not the text."""
        sizes = ", ".join(f"{rel} ({len(text.encode())} bytes)" for rel, text in self.files.items())
        return f"write {self.cwd}/: {sizes}"

    def render(self) -> str:
        if self.files:
            return f"# {self.description}\n({self.written()})"
        env = " ".join(f"{k}={v}" for k, v in sorted(self.env.items()))
        unset = " ".join(f"-u {k}" for k in self.unset_env)
        prefix = " ".join(p for p in ("env" if env or unset else "", unset, env) if p)
        command = f"{prefix} {shlex.join(self.argv)}" if prefix else shlex.join(self.argv)
        return f"# {self.description}\n(cd {self.cwd} && {command})"


@dataclass(frozen=True, kw_only=True)
class Plan:
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"steps": [s.to_dict() for s in self.steps], "notes": list(self.notes)}

    def render(self) -> str:
        lines = [f"# note: {n}" for n in self.notes]
        lines += [s.render() for s in self.steps]
        return "\n".join(lines)

    def __add__(self, other: Plan) -> Plan:
        return Plan(steps=self.steps + other.steps, notes=self.notes + other.notes)
