"""The build pipeline: kernel compile (per codegen) then host build, joined by artifacts."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rgpu.artifacts import MANIFEST_ENV, MANIFEST_NAME
from rgpu.backends import BACKENDS, Backend, get_backend, resolve_codegen
from rgpu.config import Options
from rgpu.plan import Plan, Step
from rgpu.project import Project
from rgpu.runner import run_plan
from rgpu.util.files import atomic_write_text

if TYPE_CHECKING:
    # Codegens are imported only by builds that compile kernels, to keep the no-op CPU
    # build's start-up short.
    from rgpu.artifacts import Artifact
    from rgpu.codegens import Codegen, KernelBuild


BUILD_STATE = "build.json"


@dataclass(frozen=True, kw_only=True)
class BuildResult:
    backends: tuple[str, ...]
    features: tuple[str, ...]
    profile: str
    binary: Path
    plan: Plan
    artifacts: tuple[Artifact, ...]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "backends": list(self.backends),
            "features": list(self.features),
            "profile": self.profile,
            "binary": str(self.binary),
            "plan": self.plan.to_dict(),
            "artifacts": [a.to_dict() for a in self.artifacts],
            "seconds": round(self.seconds, 3),
        }


def features_for(backends: Sequence[Backend]) -> tuple[str, ...]:
    """The CPU backend is always in: it is the fallback and the reference."""
    names = ["cpu", *(b.feature for b in backends if b.feature != "cpu")]
    return tuple(dict.fromkeys(names))


def cargo_profile_args(profile: str) -> list[str]:
    return ["--release"] if profile == "release" else []


def host_env(project: Project, features: Sequence[str]) -> dict[str, str]:
    """Point the host's build.rs at the manifest when a backend needs kernel artifacts."""
    if any(b.artifact for b in BACKENDS.values() if b.feature in features):
        return {MANIFEST_ENV: str(project.rgpu_dir / MANIFEST_NAME)}
    return {}


def host_step(project: Project, features: Sequence[str], profile: str) -> Step:
    return Step(
        name="host-build",
        description=f"host build ({', '.join(features)}, {profile})",
        argv=(
            "cargo",
            "build",
            *cargo_profile_args(profile),
            "-p",
            project.host_package,
            "--bin",
            project.host_binary,
            "--features",
            ",".join(features),
        ),
        cwd=project.root,
        env=host_env(project, features),
    )


def kernel_builds(
    project: Project,
    options: Options,
    backends: Sequence[Backend],
    external_kinds: frozenset[str] = frozenset(),
) -> list[tuple[Codegen, KernelBuild]]:
    if not any(b.codegens for b in backends):
        return []
    from rgpu import codegens

    chosen: dict[str, Codegen] = {}
    for backend in backends:
        if backend.artifact in external_kinds:
            continue  # an external --kernel-artifact stands in for this codegen's output
        name = resolve_codegen(backend, options.codegen if backend.codegens else None)
        if name is not None and name not in chosen:
            chosen[name] = codegens.get(name)
    build = codegens.KernelBuild(project=project, options=options, out_dir=project.rgpu_dir)
    return [(codegen, build) for codegen in chosen.values()]


@dataclass(frozen=True)
class BuildPlan:
    kernels: list[tuple[Codegen, KernelBuild]]
    kernel_plan: Plan
    host_plan: Plan

    @property
    def whole(self) -> Plan:
        return self.kernel_plan + self.host_plan


def plan_build(
    project: Project,
    options: Options,
    backends: Sequence[Backend],
    external_kinds: frozenset[str] = frozenset(),
) -> BuildPlan:
    kernels = kernel_builds(project, options, backends, external_kinds)
    kernel_plan = Plan(steps=())
    for codegen, kernel_build in kernels:
        kernel_plan = kernel_plan + codegen.plan(kernel_build)
    host_plan = Plan(steps=(host_step(project, features_for(backends), options.profile),))
    return BuildPlan(kernels, kernel_plan, host_plan)


def build(
    project: Project,
    options: Options,
    backend_names: Sequence[str],
    *,
    dry_run: bool = False,
    kernel_artifacts: Sequence[Path] = (),
) -> BuildResult:
    from rgpu import external

    started = time.perf_counter()
    backends = [get_backend(n) for n in backend_names]
    features = features_for(backends)
    parts = plan_build(project, options, backends, frozenset(external.kinds(kernel_artifacts)))
    produced: list[Artifact] = []
    if not dry_run:
        run_plan(parts.kernel_plan)
        for codegen, kernel_build in parts.kernels:
            produced += codegen.collect(kernel_build)
        produced += external.collect(kernel_artifacts, project.rgpu_dir)
        if produced:
            from rgpu.artifacts import write_manifest

            write_manifest(project.rgpu_dir, produced)
        run_host(project, parts.host_plan, options.profile)
        write_state(project, [b.name for b in backends], features, options.profile)
    return BuildResult(
        backends=tuple(b.name for b in backends),
        features=features,
        profile=options.profile,
        binary=project.binary_path(options.profile),
        plan=parts.whole,
        artifacts=tuple(produced),
        seconds=time.perf_counter() - started,
    )


def run_host(project: Project, host_plan: Plan, profile: str) -> None:
    """Run the host build unless the stamp proves cargo would find nothing to do."""
    import os

    from rgpu import stamp
    from rgpu.util.output import reporter

    (step,) = host_plan.steps
    env = step.child_env(os.environ)
    binary = project.binary_path(profile)
    key = stamp.request_key(step.argv, env, [str(step.cwd)])
    if stamp.is_fresh(project.rgpu_dir, key, binary, project.root, env):
        reporter().info(f"{step.description}: up to date, cargo not started")
        return
    stamp.forget(project.rgpu_dir)
    run_plan(host_plan)
    stamp.record(project.rgpu_dir, key, binary, project.root, env)


def write_state(
    project: Project, backends: Sequence[str], features: Sequence[str], profile: str
) -> None:
    state = {"backends": list(backends), "features": list(features), "profile": profile}
    if read_state(project) != state:
        atomic_write_text(
            project.rgpu_dir / BUILD_STATE, json.dumps(state, indent=2, sort_keys=True) + "\n"
        )


def read_state(project: Project) -> dict[str, Any] | None:
    path = project.rgpu_dir / BUILD_STATE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
