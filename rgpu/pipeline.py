"""The build pipeline: kernel compile (per codegen) then host build, joined by artifacts.

Order of a build, all decided here once:
1. the backends: the ones asked for plus the ones already built in (they accumulate);
2. the artifact kinds they need; --kernel-artifact files are checked against them;
3. per codegen: its pin, where it runs (placement), its toolchain (one probe), its plan;
   a codegen whose inputs are unchanged since its last run is skipped (its stamp), and
   external artifacts given earlier stand in for a kind until new ones are given;
4. the kernels directory and its manifest, written only where something changed;
5. the host build (skipped by its stamp when cargo would find nothing to do).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from rgpu import checked
from rgpu.artifacts import external as ext
from rgpu.artifacts.kernels import kernels_of, require_linked
from rgpu.artifacts.manifest import Artifact, read_kernels, read_manifest, write_manifest
from rgpu.backends import Backend, backends_of, resolve_codegen
from rgpu.backends import codegens_for as codegens_of_backend
from rgpu.config import Options
from rgpu.errors import UsageError
from rgpu.host import build as host
from rgpu.host import lockfile
from rgpu.host import state as build_state
from rgpu.kernel_build import KernelPlan, compile_one, kernel_crates, kernel_plan, up_to_date
from rgpu.plan import Plan
from rgpu.util.output import reporter
from rgpu.workspace import Workspace

if TYPE_CHECKING:
    from rgpu.artifacts.portability import Finding
    from rgpu.codegens import Codegen


class BuildResult(NamedTuple):
    backends: tuple[str, ...]
    features: tuple[str, ...]
    profile: str
    plan: Plan
    artifacts: tuple[Artifact, ...]
    targets: tuple[build_state.Target, ...]
    seconds: float
    # Kernels naga cannot take to a platform (artifacts/portability.py), as dicts.
    portability: tuple[dict[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "backends": list(self.backends),
            "features": list(self.features),
            "profile": self.profile,
            "plan": self.plan.to_dict(),
            "artifacts": [a.to_dict() for a in self.artifacts],
            "targets": [{"name": t.name, "kind": t.kind, "path": t.path} for t in self.targets],
            "seconds": round(self.seconds, 3),
            "portability": list(self.portability),
        }


class BuildPlan(NamedTuple):
    # The build's options, its CUDA archs resolved on this machine when it needs them.
    options: Options
    backends: tuple[Backend, ...]
    kernels: tuple[KernelPlan, ...]
    host_plan: Plan
    # The kernel crate's features the host build turns on (host/build.py).
    features: tuple[str, ...]
    # The workspace's Cargo.lock before the build (None: none yet): read once, for the
    # nvptx codegen's copy and for what the build changed in it (host/lockfile.py).
    lock: bytes | None
    external: tuple[Path, ...] = ()
    reused_external: tuple[Artifact, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def whole(self) -> Plan:
        whole = Plan(steps=(), notes=self.notes)
        for kernel in self.kernels:
            whole = whole + kernel.plan
        return whole + self.host_plan


def accumulated(ws: Workspace, asked: Sequence[Backend]) -> tuple[Backend, ...]:
    """The backends asked for, then those already built in (a build never drops one)."""
    previous = build_state.read(ws.rgpu_dir)
    return tuple(dict.fromkeys([*asked, *(previous.backends if previous else ())]))


def needed_kinds(backends: Sequence[Backend]) -> dict[str, tuple[str, ...]]:
    kinds: dict[str, list[str]] = {}
    for backend in backends:
        if backend.artifact:
            kinds.setdefault(backend.artifact, []).append(backend.name)
    return {k: tuple(v) for k, v in kinds.items()}


def plan_build(
    ws: Workspace,
    options: Options,
    asked: Sequence[Backend],
    external: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    *,
    recompile: bool = False,
) -> BuildPlan:
    env = os.environ if env is None else env
    backends = accumulated(ws, asked)
    kinds = needed_kinds(backends)
    ext.check_kinds(external, kinds)
    if "ptx" in kinds or external:
        # `native` asks this machine once, here; every codegen reads the result.
        options = options._replace(cuda_archs=options.cuda_archs.on_this_machine(env))
    given = {ext.kind_of(p) for p in external}
    earlier = [] if recompile else ext.reusable(read_manifest(ws.kernels_dir), set(kinds) - given)
    archs = options.cuda_archs.exact if any(a.kind == "ptx" for a in earlier) else None
    remembered = ext.reusable(earlier, set(kinds) - given, archs)
    covered = given | {a.kind for a in remembered}
    notes = [f"embedding --kernel-artifact {p} (checked, not built)" for p in external]
    # A PTX's cubin (artifacts/sass.py) comes and goes with it: one note for both.
    notes += [
        f"no longer embedding {a.source} (given earlier with --kernel-artifact): it is PTX "
        f"for {a.target}, and the build asks for {', '.join(a.name for a in archs or ())}"
        for a in earlier
        if a not in remembered and a.kind in kinds
    ]
    notes += [
        f"reusing {a.source} (given earlier with --kernel-artifact) for {a.kind}; compile "
        f"instead with `rgpu build --backend {kinds[a.kind][0]} --recompile`"
        for a in remembered
        if a.kind in kinds
    ]
    lock = lockfile.read_bytes(ws.root)
    chosen = codegens_for(backends, options, covered)
    for codegen in chosen:
        checked.require_codegen(options.checked, codegen.name)
    kernels = [kernel_plan(ws, options, codegen, env, lock) for codegen in chosen]
    features = host.features(ws, backends)
    return BuildPlan(
        options=options,
        backends=backends,
        kernels=tuple(kernels),
        host_plan=host.host_plan(ws, backends, options.profile, features),
        features=features,
        lock=lock,
        external=tuple(external),
        reused_external=tuple(remembered),
        notes=tuple(notes),
    )


def codegens_for(backends: Sequence[Backend], options: Options, covered: set[str]) -> list[Codegen]:
    """The codegen of each backend that needs a kernel artifact not already covered:
    --codegen where it can build that backend, else the backend's default. (The codegen's
    name was checked where it entered: config.resolve or the command line.)"""
    from rgpu import codegens  # start-up: ~1 ms that a build without kernels (cpu) skips

    asked = options.codegen
    if asked is not None and not any(asked in codegens_of_backend(b.name) for b in backends):
        names = ", ".join(b.name for b in backends)
        raise UsageError(
            f"codegen `{asked}` builds none of the backends being built ({names})",
            f"codegen {asked} builds {', '.join(backends_of(asked))}: add "
            f"`--backend {backends_of(asked)[0]}`, or drop --codegen",
        )
    chosen: dict[str, Codegen] = {}
    for backend in backends:
        if backend.artifact is None or backend.artifact in covered:
            continue
        name = resolve_codegen(
            backend.name, asked if asked in codegens_of_backend(backend.name) else None
        )
        if name is not None:
            chosen.setdefault(name, codegens.get(name))
    return list(chosen.values())


def build(
    ws: Workspace,
    options: Options,
    asked: Sequence[Backend],
    *,
    dry_run: bool = False,
    kernel_artifacts: Sequence[Path] = (),
    recompile: bool = False,
) -> BuildResult:
    started = time.perf_counter()
    env = os.environ
    parts = plan_build(ws, options, asked, kernel_artifacts, env, recompile=recompile)
    options = parts.options
    features = parts.features
    # webgpu's programs are built for the browser, by their own steps (web/build.py).
    web = any(b.host_target for b in parts.backends)
    produced: list[Artifact] = []
    targets: tuple[build_state.Target, ...] = ()
    found: list[dict[str, str]] = []
    if not dry_run:
        for note in parts.notes:
            reporter().info(f"note: {note}")
        try:
            produced = compile_kernels(ws, options, parts, env)
            found = report_portability(produced, options, ws)
            if web:
                from rgpu.web import build as web_build  # start-up: ~6 ms, webgpu only

                web_build.check_wgsl(ws, read_manifest(ws.kernels_dir), options.require_platforms)
            step = parts.host_plan.steps[0]
            built = host.run(ws, step, env)
            previous = build_state.read(ws.rgpu_dir)
            kept = previous.targets if previous else ()
            targets = kept if built is None else tuple(built)
            if web:
                from rgpu.web import build as web_build  # start-up: ~6 ms, webgpu only

                web_build.build_pages(ws, options.profile, env, options.yes)
        finally:
            # What cargo moved in the user's Cargo.lock, said even when the build failed.
            for line in lockfile.changes(parts.lock, lockfile.read_bytes(ws.root)):
                reporter().info(line)
        build_state.write(
            ws.rgpu_dir,
            build_state.State(
                backends=parts.backends,
                profile=options.profile,
                features=features,
                targets=targets,
                settings=build_state.settings_of(options),
            ),
        )
    return BuildResult(
        backends=tuple(b.name for b in parts.backends),
        features=features,
        profile=options.profile,
        plan=parts.whole,
        artifacts=tuple(produced),
        targets=targets,
        seconds=time.perf_counter() - started,
        portability=tuple(found),
    )


def libraries_of(ws: Workspace) -> dict[str, str]:
    """Kernel -> the library crate that declares it, from the manifest (the kernel crate's
    own kernels are not in it)."""
    return {
        k.name: k.package
        for k in read_kernels(ws.kernels_dir) or ()
        if k.package != ws.kernel_package
    }


def report_portability(
    produced: Sequence[Artifact], options: Options, ws: Workspace | None = None
) -> list[dict[str, str]]:
    """Warn for each kernel naga cannot take to a platform; stop (before the host build)
    when that platform is one the project requires."""
    if not any("portability" in a.extra for a in produced):
        return []  # PTX only (or nothing built): naga checked nothing, and the import costs
    from rgpu.artifacts import portability  # start-up: ~5 ms, only when naga checked SPIR-V

    libraries = libraries_of(ws) if ws is not None else None
    found = portability.findings_of(produced, libraries)
    for finding in shown_findings(found, options):
        reporter().warn(finding.line())
    # Float rounding off Vulkan and CUDA: said to the projects that name those platforms.
    named = {*(options.target_platforms or ()), *options.require_platforms}
    rounding = portability.rounding_line(portability.rounding_of(produced, libraries), named)
    if rounding is not None:
        reporter().info(f"note: {rounding}")
    portability.require(found, options.require_platforms)
    return [f.to_dict() for f in found]


def shown_findings(found: Sequence[Finding], options: Options) -> list[Finding]:
    """The findings that are warnings: those for the platforms the project targets
    (`target-platforms`; unset: every platform) or requires (`require-platforms`: an error
    anyway). The others stay in the result (`--json`), silently."""
    if options.target_platforms is None:
        return list(found)
    wanted = {*options.target_platforms, *options.require_platforms}
    return [f for f in found if f.platform in wanted]


def compile_kernels(
    ws: Workspace, options: Options, parts: BuildPlan, env: Mapping[str, str]
) -> list[Artifact]:
    """Run each codegen (unless its stamp says nothing changed), take the external files,
    then write the kernels directory's manifest."""
    if not parts.kernels and not parts.external and not parts.reused_external:
        if not needed_kinds(parts.backends):
            # Written before cargo starts, even when empty: `embed_kernels!` would create it
            # during the build otherwise, and cargo (which sees an input newer than its
            # build) would then compile again on the next plain `cargo build`.
            write_manifest(ws.kernels_dir, [], checked=options.checked)
        return []
    # start-up: ~20 ms (tarfile, zipfile, lzma) that a build without kernels (cpu) skips
    from rgpu.toolchains import obtain, tools

    previous = read_manifest(ws.kernels_dir)
    # The build tools the codegens that compile will run (spirv-opt, spirv-val, ptxas),
    # present or obtained before any compiler starts: a missing required one stops the
    # build in a second, not after minutes of compiling (toolchains/obtain.py). With
    # consent (--yes) every codegen's are obtained first, so that a PTX built without
    # ptxas is built again with it (its stamp names the ptxas).
    extra = ["nvptx"] if parts.external else []
    if options.yes:
        every = [k.codegen.name for k in parts.kernels]
        obtain.ensure([*every, *extra], env, yes=True, spirv_opt=options.spirv_opt)
    kept = {k.codegen.name: up_to_date(ws, k, previous, env) for k in parts.kernels}
    if not options.yes:
        stale = [name for name, artifacts in kept.items() if artifacts is None]
        obtain.ensure(
            [*stale, *extra], env, yes=False, spirv_opt=options.spirv_opt, confirm=asker(env)
        )
    # The user's files first: a file that is refused stops the build in seconds, before
    # minutes of compiling the other kinds.
    external: list[Artifact] = []
    if parts.external:
        # The kernel crate's own kernels are required; a library's (rgpu-primitives has
        # many a program may never launch) are named in a note when missing, and fail
        # only when launched.
        crates = kernel_crates(ws, env)
        external = ext.collect(
            parts.external,
            ws.kernels_dir,
            required=crates[0].kernels if crates else (),
            cuda_archs=options.cuda_archs.exact,
            ptxas=tools.find_ptxas(env),
        )
        have = {e for a in external for e in a.entry_points}
        lacking = [k for c in crates[1:] for k in c.kernels if k not in have]
        if lacking:
            reporter().info(
                f"note: the --kernel-artifact files lack {len(lacking)} kernels of the "
                f"libraries the kernel crate depends on ({', '.join(lacking[:6])}"
                f"{', ...' if len(lacking) > 6 else ''}): launching those fails"
            )
    produced: list[Artifact] = []
    for kernel in parts.kernels:
        produced += kept[kernel.codegen.name] or compile_one(ws, kernel, env)
    produced += external
    produced += parts.reused_external
    # Which crate each kernel is from (the manifest's `kernels`: what each crate's
    # embed_kernels!() embeds, and what the reports name). Kept from the last manifest when
    # nothing was compiled (a no-op build reads no source and starts no cargo).
    owners = read_kernels(ws.kernels_dir)
    same = sorted((a.path, a.sha256) for a in produced) == sorted(
        (a.path, a.sha256) for a in previous
    )
    if owners is None or not same or parts.external:
        crates = kernel_crates(ws, env)
        owners = kernels_of(crates)
        built = [
            (a.path, a.entry_points)
            for a in produced
            if a.kind in ("ptx", "spirv") and a.codegen != "external"
        ]
        require_linked(built, crates, ws.kernel_dir / "src" / "lib.rs")
    write_manifest(ws.kernels_dir, produced, owners, checked=options.checked)
    return produced


def asker(env: Mapping[str, str]) -> Callable[[str], bool] | None:
    """A yes/no question to the person at the terminal; None where nobody can answer (stdin
    not a terminal, CI): rustup.can_prompt, as `rgpu toolchain install` decides."""
    from rgpu.toolchains.rustup import can_prompt  # start-up: ~3.5 ms, a compile only

    if not can_prompt(sys.stdin.isatty(), env):
        return None

    def ask(question: str) -> bool:
        return click.confirm(question, default=False, err=True)

    return ask
