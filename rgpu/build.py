"""The build pipeline: kernel compile (per codegen) then host build, joined by artifacts."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
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
from rgpu.util.output import reporter

if TYPE_CHECKING:
    # Codegens are imported only by builds that compile kernels, to keep the no-op CPU
    # build's start-up short.
    from rgpu.artifacts import Artifact
    from rgpu.codegens import Codegen, KernelBuild
    from rgpu.placement import Placement
    from rgpu.runner import StepRunner


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
    provided_kinds: Sequence[str] = (),
) -> list[tuple[Codegen, KernelBuild]]:
    """The codegens the backends need; none for an artifact kind given with
    --kernel-artifact (the external artifact replaces the build)."""
    if not any(b.codegens for b in backends):
        return []
    from rgpu import codegens

    chosen: dict[str, Codegen] = {}
    for backend in backends:
        if backend.artifact in provided_kinds:
            continue  # an external --kernel-artifact stands in for this codegen's output
        name = resolve_codegen(backend, options.codegen if backend.codegens else None)
        if name is not None and name not in chosen:
            chosen[name] = codegens.get(name)
    build = codegens.KernelBuild(project=project, options=options, out_dir=project.rgpu_dir)
    return [(codegen, build) for codegen in chosen.values()]


@dataclass(frozen=True)
class KernelPlan:
    """One codegen's plan and where it runs."""

    codegen: Codegen
    build: KernelBuild
    plan: Plan
    placement: Placement


@dataclass(frozen=True)
class BuildPlan:
    kernels: list[KernelPlan]
    host_plan: Plan
    notes: tuple[str, ...] = ()

    @property
    def kernel_plan(self) -> Plan:
        whole = Plan(steps=(), notes=self.notes)
        for kernel in self.kernels:
            whole = whole + kernel.plan
        return whole

    @property
    def whole(self) -> Plan:
        return self.kernel_plan + self.host_plan


def place(codegen: Codegen, options: Options, env: Mapping[str, str]) -> Placement:
    from rgpu import placement

    # A codegen may pick its own image (nvvm: by CUDA major); the toolchain file otherwise.
    chooser = getattr(codegen, "container_image", None)
    own = chooser(env) if callable(chooser) else None
    return placement.decide(codegen.name, options, env, image_for_codegen=own)


def with_placement_note(plan: Plan, where: Placement) -> Plan:
    if not where.in_container:
        return plan
    note = f"container-capable steps run in a container of {where.image} ({where.why})"
    return Plan(steps=plan.steps, notes=(*plan.notes, note))


def plan_build(
    project: Project,
    options: Options,
    backends: Sequence[Backend],
    external: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> BuildPlan:
    env = os.environ if env is None else env
    kinds: list[str] = []
    notes: tuple[str, ...] = ()
    if external:
        from rgpu.external import kind_of

        kinds = [kind_of(p) for p in external]
        notes = tuple(f"embedding external {kind_of(p)} {p} (checked, not built)" for p in external)
    kernels = []
    for codegen, kernel_build in kernel_builds(project, options, backends, kinds):
        where = place(codegen, options, env)
        plan = with_placement_note(codegen.plan(kernel_build), where)
        kernels.append(KernelPlan(codegen, kernel_build, plan, where))
    host_plan = Plan(steps=(host_step(project, features_for(backends), options.profile),))
    return BuildPlan(kernels, host_plan, notes)


def container_runner(
    project: Project, kernel: KernelPlan, env: Mapping[str, str]
) -> StepRunner | None:
    """None: run here. Else a runner for the kernel's image, after checking that the
    engine answers and the image exists (each with its own message)."""
    where = kernel.placement
    if not where.in_container or where.image is None:
        return None
    from rgpu import container
    from rgpu.config import cache_dir

    engine = container.detect(env)
    hint = (
        container.BUILD_IMAGE_HINT
        if where.image == container.DEFAULT_IMAGE
        else f"fetch it: `{os.path.basename(engine.program)} pull {where.image}`, or pick "
        "another image with --image / RGPU_IMAGE, or build without a container: "
        "`rgpu build --no-docker`"
    )
    container.require_image(engine, where.image, env, hint)
    as_root = bool(getattr(kernel.codegen, "container_as_root", False))
    return container.ContainerRunner(
        engine, where.image, project.root, cache_dir(env), env, as_root=as_root
    )


def require_local_codegen(kernel: KernelPlan, options: Options) -> None:
    """Before compiling here, stop with doctor's one-line reason and fix if the codegen
    cannot run on this machine. Not for container builds (the image brings the toolchain),
    nor for spirv with consent to install (cargo-gpu installs the pinned toolchain)."""
    if kernel.placement.in_container or (kernel.codegen.name == "spirv" and options.yes):
        return
    from rgpu import doctor

    doctor.require_codegen(kernel.codegen.name)


def build(
    project: Project,
    options: Options,
    backend_names: Sequence[str],
    *,
    dry_run: bool = False,
    kernel_artifacts: Sequence[Path] = (),
) -> BuildResult:
    started = time.perf_counter()
    backends = [get_backend(n) for n in backend_names]
    features = features_for(backends)
    parts = plan_build(project, options, backends, kernel_artifacts)
    produced: list[Artifact] = []
    if not dry_run:
        for note in parts.notes:
            reporter().info(f"note: {note}")
        for kernel in parts.kernels:
            require_local_codegen(kernel, options)
            runner = container_runner(project, kernel, os.environ)
            run_plan(kernel.plan, container=runner)
            produced += kernel.codegen.collect(kernel.build)
        if kernel_artifacts:
            from rgpu import external

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
    from rgpu import stamp

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
