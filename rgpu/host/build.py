"""The host build: plain `cargo build` of the whole workspace (every binary, example and test
target) with the kernel crate's backend features, on the user's own toolchain.

rgpu sets no environment variable for it: the kernel crate's `rgpu::embed_kernels!()` finds
the artifacts by the workspace's layout, so a plain `cargo build` with the same features is
the same build (and after `rgpu build`, a no-op). Cargo's JSON messages tell rgpu which
executables it made and which dep-info files describe them (the no-op stamp).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rgpu.backends import Backend
from rgpu.errors import CommandFailedError
from rgpu.host import missing_kernels, stamp
from rgpu.host.state import Target
from rgpu.plan import Plan, Step
from rgpu.util import cmd
from rgpu.util.output import in_github_actions, reporter
from rgpu.workspace import Workspace

if TYPE_CHECKING:
    from rgpu.ci.diagnostics import CargoMessages

STAMP = "host"
TARGETS = ("--bins", "--examples", "--tests")


def features(ws: Workspace, backends: Sequence[Backend]) -> tuple[str, ...]:
    """The kernel crate's features for the backends (cpu needs none: always built in).
    Backends whose programs are built for another target (webgpu: the browser) are built
    by their own step (rgpu/web/build.py), not into this machine's programs."""
    return tuple(
        dict.fromkeys(
            ws.feature(b.feature) for b in backends if b.feature and b.host_target is None
        )
    )


def profile_args(profile: str) -> list[str]:
    return ["--release"] if profile == "release" else []


def feature_args(names: Sequence[str]) -> list[str]:
    return ["--features", ",".join(names)] if names else []


def host_step(
    ws: Workspace,
    backends: Sequence[Backend],
    profile: str,
    feature_names: Sequence[str] | None = None,
) -> Step:
    """The host build's cargo command; ``feature_names``: `features(ws, backends)` when the
    caller has it already."""
    names = [b.name for b in backends]
    if feature_names is None:
        feature_names = features(ws, backends)
    return Step(
        name="host-build",
        description=f"host build ({', '.join(names)}; {profile})",
        argv=(
            "cargo",
            "build",
            *profile_args(profile),
            "--workspace",
            *TARGETS,
            *feature_args(feature_names),
        ),
        cwd=ws.root,
    )


def host_plan(
    ws: Workspace,
    backends: Sequence[Backend],
    profile: str,
    feature_names: Sequence[str] | None = None,
) -> Plan:
    return Plan(steps=(host_step(ws, backends, profile, feature_names),))


class ArtifactMessages:
    """Cargo's stdout in JSON: remembers the workspace's build outputs; passes everything
    else on (to the GitHub annotation handler under Actions)."""

    def __init__(self, root: Path, inner: Callable[[str], None] | None) -> None:
        self.root = root
        self.real_root = root.resolve()  # the workspace reached through a symlink
        self.inner = inner
        self.outputs: list[Path] = []
        self.targets: list[Target] = []

    def __call__(self, line: str) -> None:
        record = _json(line)
        if record is not None and record.get("reason") == "compiler-artifact":
            self._artifact(record)
            return
        if self.inner is not None:
            self.inner(line)
        elif record is None:
            print(line, flush=True)

    def _artifact(self, record: Mapping[str, Any]) -> None:
        manifest = Path(str(record.get("manifest_path", "")))
        if not (
            manifest.is_relative_to(self.root) or manifest.resolve().is_relative_to(self.real_root)
        ):
            return  # a registry or git crate: immutable, pinned by Cargo.lock
        files = [Path(f) for f in record.get("filenames") or []]
        executable = record.get("executable")
        if executable:
            files.append(Path(executable))
            target = record.get("target") or {}
            kinds = target.get("kind") or []
            profile = record.get("profile") or {}
            if ("bin" in kinds or "example" in kinds) and not profile.get("test"):
                kind = "bin" if "bin" in kinds else "example"
                self.targets.append(
                    Target(name=str(target["name"]), kind=kind, path=str(executable))
                )
        self.outputs += files


def _json(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def dep_infos(outputs: Sequence[Path]) -> list[Path]:
    """Each output's dep-info file: `foo.d` beside an executable, `deps/name-hash.d` for
    `deps/libname-hash.rlib` (cargo writes them; some outputs, like .rmeta, share one)."""
    found: list[Path] = []
    for output in outputs:
        stem = output.name.split(".", 1)[0] if output.suffix else output.name
        candidates = [output.with_name(stem + ".d")]
        if stem.startswith("lib"):
            candidates.append(output.with_name(stem[3:] + ".d"))
        found += [c for c in candidates if c.is_file()]
    return list(dict.fromkeys(found))


def run(ws: Workspace, step: Step, env: Mapping[str, str]) -> list[Target] | None:
    """Run the host build unless the stamp proves cargo would find nothing to do. Returns
    the binaries and examples built, or None when cargo was not started."""
    child = step.child_env(env)
    key = stamp.request_key(step.argv, child, [str(step.cwd)])
    if stamp.is_fresh(ws.rgpu_dir, STAMP, key, ws.root, child):
        reporter().info(f"{step.description}: up to date, cargo not started")
        return None
    stamp.forget(ws.rgpu_dir, STAMP)
    inner: CargoMessages | None = None
    message_format = "--message-format=json-render-diagnostics"
    if in_github_actions(child):
        # start-up: ~3 ms to import ci.diagnostics; only this path pays it
        from rgpu.ci.diagnostics import CargoMessages

        inner = CargoMessages(step.cwd, child)
        ansi = "-diagnostic-rendered-ansi" if inner.colour else ""
        message_format = f"--message-format=json{ansi}"
    messages = ArtifactMessages(ws.root, inner)
    argv = [*step.argv, message_format]
    with reporter().group(step.description):
        detail = inner.first_error if inner is not None else (lambda: "")
        try:
            cmd.stream(
                argv, messages, cwd=step.cwd, env=child, hint=step.hint, failure_detail=detail
            )
        except CommandFailedError as error:
            error.hint = missing_kernels.hint(ws) or error.hint or _failure_hint(step, inner)
            raise
    outputs = list(dict.fromkeys(messages.outputs))
    stamp.record(ws.rgpu_dir, STAMP, key, outputs, dep_infos(outputs), ws.root, child)
    return messages.targets


def _failure_hint(step: Step, inner: CargoMessages | None) -> str:
    first = next(
        (d for d in (inner.diagnostics if inner else ()) if d.level == "error" and d.file), None
    )
    if first is not None:
        return f"fix the error at {first.location()} (shown above), then run again"
    return step.failure_hint
