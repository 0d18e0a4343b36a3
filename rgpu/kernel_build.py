"""One codegen's kernel build: its plan (`kernel_plan`: pin, placement, toolchain, then the
codegen's commands), then running it here or in a container, or not at all when nothing it
reads has changed since its last run (its stamp), in which case its artifacts are kept as
they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rgpu.artifacts import kernels
from rgpu.artifacts.kernels import KernelCrate
from rgpu.artifacts.manifest import Artifact, verify
from rgpu.config import Options, cache_dir
from rgpu.errors import ArtifactError, CommandFailedError, ToolchainError
from rgpu.host import stamp
from rgpu.plan import Plan
from rgpu.util.output import reporter
from rgpu.workspace import Workspace, require_workspace_env

if TYPE_CHECKING:
    from rgpu.codegens import Codegen, KernelBuild
    from rgpu.runner import StepRunner


class KernelPlan(NamedTuple):
    """One codegen's build: what it is asked, and its plan."""

    codegen: Codegen
    build: KernelBuild
    plan: Plan


def _with_placement_note(plan: Plan, build: KernelBuild) -> Plan:
    where = build.placement
    if not where.in_container:
        return plan
    note = f"container-capable steps run in a container of {where.image} ({where.why})"
    return Plan(steps=plan.steps, notes=(*plan.notes, note))


def kernel_crates(ws: Workspace, env: Mapping[str, str]) -> tuple[KernelCrate, ...]:
    """The crates holding the kernels a build compiles: the kernel crate and the crates it
    depends on that declare kernels (artifacts/kernels.py); a dependency's kernels need
    RGPU_WORKSPACE, which tells it whose artifacts to embed (workspace.py)."""
    found = kernels.crates(ws.root, ws.kernel_dir, env)
    kernels.kernels_of(found)  # one namespace of entry points: a name twice is an error
    libraries = [c.package for c in found[1:]]
    if libraries:
        require_workspace_env(ws, env, libraries)
    return found


def _kernel_types(ws: Workspace, env: Mapping[str, str]) -> tuple[str, ...]:
    """The scalar types every crate of kernels names (a library's too: its kernels are
    in the same SPIR-V module)."""
    from rgpu.artifacts.capabilities import types_in_sources  # start-up: ~9 ms, spirv only

    types: set[str] = set()
    for crate in kernel_crates(ws, env):
        types.update(types_in_sources(crate.src_dir))
    return tuple(sorted(types))


def _text(data: bytes | None) -> str | None:
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def kernel_plan(
    ws: Workspace,
    options: Options,
    codegen: Codegen,
    env: Mapping[str, str],
    lock: bytes | None = None,
) -> KernelPlan:
    """``lock``: the workspace's Cargo.lock as the pipeline read it before the build."""
    # start-up: ~8 ms (codegens, containers, pins) that a build without kernels (cpu) skips
    from rgpu.codegens import KernelBuild
    from rgpu.containers.placement import decide
    from rgpu.toolchains import pins

    pin = pins.load(codegen.name, env)
    placement = decide(pin, options, env, image=codegen.image(pin, env))
    toolchain = codegen.toolchain(pin, placement, env)
    build = KernelBuild(
        workspace=ws,
        options=options,
        out_dir=ws.kernels_dir,
        pin=pin,
        placement=placement,
        toolchain=toolchain,
        # Only SPIR-V's capabilities follow the source's scalar types; reading the source
        # for the others would be wasted on every build, no-ops included.
        kernel_types=_kernel_types(ws, env) if codegen.artifact_kind == "spirv" else (),
        cargo_lock=_text(lock) if codegen.name == "nvptx" else None,
    )
    return KernelPlan(codegen, build, _with_placement_note(codegen.plan(build), build))


def require_ready(kernel: KernelPlan) -> None:
    """Before compiling here, stop with doctor's line for the first failing check (and its
    fix) rather than with a compiler error 200 lines later. Not for container builds (the
    image brings the toolchain), nor for a codegen that installs its own toolchain when the
    user allowed it (--yes)."""
    from rgpu.codegens import first_failure  # start-up: a build without kernels skips it

    build, codegen = kernel.build, kernel.codegen
    if build.placement.in_container or (codegen.installs_toolchain and build.options.yes):
        return
    failed = first_failure(codegen.checks(build.pin, build.toolchain))
    if failed is not None:
        raise ToolchainError(
            f"the {codegen.name} codegen cannot run here: {failed.name}: {failed.detail}",
            failed.fix,
        )


def installed(kernel: KernelPlan, env: Mapping[str, str]) -> KernelPlan:
    """With consent (--yes), a local build whose codegen can install its missing toolchain
    does so first; then the plan is made again for the toolchain found afterwards."""
    build, codegen = kernel.build, kernel.codegen
    if not build.options.yes or build.placement.in_container:
        return kernel
    toolchain = codegen.install(build, env)
    if toolchain is None:
        return kernel
    build = build._replace(toolchain=toolchain)
    return kernel._replace(build=build, plan=codegen.plan(build))


def container_runner(
    ws: Workspace, kernel: KernelPlan, env: Mapping[str, str]
) -> StepRunner | None:
    """None: run here. Else a runner for the kernel's image, after checking that the
    engine answers and the image exists (each with its own message)."""
    where = kernel.build.placement
    if not where.in_container or where.image is None:
        return None
    # start-up: ~10 ms (the runner, random, hmac) that a build run here skips
    from rgpu.containers import engine as engines
    from rgpu.containers.runner import ContainerRunner

    engine = engines.detect(env)
    engines.require_image(
        engine,
        where.image,
        env,
        engines.image_hint(engine, where.image),
        pull=kernel.build.options.yes,
    )
    return ContainerRunner(
        engine,
        where.image,
        ws.root,
        cache_dir(env),
        env,
        as_root=kernel.codegen.container_as_root,
    )


def checker_identity(kind: str, env: Mapping[str, str]) -> str:
    """What checks this kind of artifact, as part of the stamp's key: a PTX checked without
    ptxas is checked again once a ptxas appears, or when it changes (path, size, mtime)."""
    if kind != "ptx":
        return ""
    from rgpu.toolchains import tools  # start-up: shutil and the tool finders, ptx only

    ptxas = tools.find_ptxas(env)
    if ptxas is None:
        return "ptxas=none"
    try:
        st = os.stat(ptxas)
    except OSError:
        return f"ptxas={ptxas}"
    return f"ptxas={os.path.realpath(ptxas)}:{st.st_size}:{st.st_mtime_ns}"


def _key(kernel: KernelPlan, env: Mapping[str, str]) -> str:
    where = kernel.build.placement  # where and in which image; not why (a message)
    parts = [kernel.codegen.name, str(where.in_container), str(where.image)]
    parts.append(checker_identity(kernel.codegen.artifact_kind, env))
    for step in kernel.plan.steps:
        if not step.keyed:
            continue
        parts += [*step.argv, *sorted(f"{k}={v}" for k, v in step.env.items())]
        parts += [f"{rel}={text}" for rel, text in sorted(step.files.items())]
    return stamp.request_key(parts, env)


def _intact(ws: Workspace, artifacts: Sequence[Artifact]) -> bool:
    try:
        for artifact in artifacts:
            verify(ws.kernels_dir, artifact)
    except ArtifactError:
        return False
    return bool(artifacts)


def up_to_date(
    ws: Workspace, kernel: KernelPlan, previous: Sequence[Artifact], env: Mapping[str, str]
) -> list[Artifact] | None:
    """The codegen's artifacts of the last build when nothing it reads has changed since
    (its stamp), else None: it compiles."""
    codegen, build = kernel.codegen, kernel.build
    mine = [a for a in previous if a.codegen == codegen.name]
    if (
        codegen.dep_infos(build) is not None
        and _intact(ws, mine)
        and stamp.is_fresh(ws.rgpu_dir, f"codegen-{codegen.name}", _key(kernel, env), ws.root, env)
    ):
        reporter().info(f"{codegen.name} kernels: up to date, not compiled")
        return mine
    return None


def compile_one(ws: Workspace, kernel: KernelPlan, env: Mapping[str, str]) -> list[Artifact]:
    """Compile one codegen's kernels (`up_to_date` said it must)."""
    codegen, build = kernel.codegen, kernel.build
    name = f"codegen-{codegen.name}"
    dep_infos = codegen.dep_infos(build)
    from rgpu.runner import run_plan  # start-up: ~1 ms that a no-op build skips

    stamp.forget(ws.rgpu_dir, name)
    kernel = installed(kernel, env)
    key = _key(kernel, env)
    require_ready(kernel)
    # A kernel build is progress: its tools' stdout (cargo-gpu prints there) must not mix
    # with the result on rgpu's stdout (`rgpu build --json`, `rgpu run`'s program).
    try:
        run_plan(kernel.plan, container=container_runner(ws, kernel, env), stdout_to_stderr=True)
    except CommandFailedError as error:
        # A codegen may say in one line what its compiler's output means (spirv: a missing
        # SPIR-V capability and the config key that declares it).
        explain = getattr(codegen, "explain_failure", None)
        better = explain(error.output or "") if explain is not None else None
        if better is None:
            raise
        raise better from None
    produced = codegen.collect(build)
    if dep_infos is not None:
        outputs = [ws.kernels_dir / a.path for a in produced]
        stamp.record(ws.rgpu_dir, name, key, outputs, [d for d in dep_infos if d.is_file()],
                     ws.root, env)  # fmt: skip
    return produced
