"""`rgpu build`, `rgpu run`, `rgpu test`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from rgpu.backends import (
    Backend,
    check_codegen,
    codegen_choices,
    get_backend,
    names_help,
    parse_backends,
    split_names,
)
from rgpu.cli.group import (
    ChildExit,
    cli,
    dir_option,
    emit_json,
    json_option,
    load_workspace,
    options_for,
    profile_of,
    step_summary,
    summary_of_failure,
)
from rgpu.cli.program_args import ProgramArgsCommand
from rgpu.config import Options, chosen, parse_platforms, parse_target_platforms
from rgpu.cuda_archs import CudaArchs
from rgpu.errors import RgpuError
from rgpu.host import state
from rgpu.host.state import Target
from rgpu.util.output import reporter
from rgpu.workspace import Workspace

if TYPE_CHECKING:
    from rgpu.host.test import BackendResult

BACKEND_HELP = f"{names_help()}; repeat or comma-separate"


def _archs(values: tuple[str, ...]) -> CudaArchs | None:
    return CudaArchs.parse(values) if values else None


def _platforms(values: tuple[str, ...]) -> tuple[str, ...] | None:
    if not values:
        return None

    return parse_platforms(split_names(values), "--require-platform")


def _targets(values: tuple[str, ...]) -> tuple[str, ...] | None:
    if not values:
        return None

    return parse_target_platforms(split_names(values), "--target-platform")


def _build_first(
    ws: Workspace, options: Options, backends: Sequence[Backend]
) -> tuple[Target, ...]:
    """The build `rgpu run` and `rgpu test` make before they run anything (host/state.Build)."""
    from rgpu import pipeline  # start-up: pipeline and the codegens only for the build commands

    return pipeline.build(ws, options, backends).targets


def last_build_options(ws: Workspace, release: bool | None) -> Options:
    """`rgpu run` and `rgpu test` build what the last build built: its settings (archs,
    codegen, ...; host/state.py), and its profile unless --release/--debug says otherwise."""
    options = options_for(ws, profile=profile_of(release))
    return state.again(options, state.read(ws.rgpu_dir), profile_given=release is not None)


release_option = click.option(
    "--release/--debug", "release", default=None, help="Cargo profile (default release)."
)


F = TypeVar("F", bound=Callable[..., Any])


def backends_option(help: str) -> Callable[[F], F]:
    """`--backend B`, repeatable, each possibly `a,b` (checked by backends.parse_backends)."""
    return click.option("--backend", "backends", multiple=True, metavar="B", help=help)


@cli.command()
@dir_option
@backends_option(
    f"Backend to build ({BACKEND_HELP}). Default: `backend` in [workspace.metadata.rgpu], "
    "else cpu. Backends built before stay built in."
)
@release_option
@click.option(
    "--docker/--no-docker",
    "docker",
    default=None,
    help="Compile kernels in a container (docker or podman) or here. Default: per codegen "
    "(nvptx here; nvvm in a container unless LLVM 7 is found).",
)
@click.option(
    "--image",
    default=None,
    metavar="IMAGE",
    help="Container image for --docker (default: the codegen's).",
)
@click.option("--codegen", default=None, metavar="C", help=f"Kernel codegen ({codegen_choices()}).")
@click.option(
    "--arch",
    "archs",
    multiple=True,
    metavar="A",
    help="CUDA archs, e.g. sm_75,sm_80,sm_90 (the default), or `native`.",
)
@click.option("--dry-run", is_flag=True, help="Print the plan of commands; run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@click.option(
    "--kernel-artifact",
    "kernel_artifacts",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Embed this kernel file (.spv, .ptx) instead of compiling; repeatable. "
    "Remembered: later builds reuse it.",
)
@click.option(
    "--recompile",
    is_flag=True,
    help="Compile every kernel kind, even where an earlier --kernel-artifact stands in.",
)
@click.option(
    "--require-platform",
    "require_platforms",
    multiple=True,
    metavar="P",
    help="Fail when a kernel cannot be translated for P (webgpu, metal, dx12; repeat or "
    "comma-separate). Default: `require-platforms` in [workspace.metadata.rgpu]; else a "
    "warning.",
)
@click.option(
    "--target-platform",
    "target_platforms",
    multiple=True,
    metavar="P",
    help="A platform the project targets (cuda, vulkan, webgpu, metal, dx12; repeat or "
    "comma-separate): kernels that cannot be translated for the others are not warned about. "
    "Default: `target-platforms` in [workspace.metadata.rgpu]; else every platform.",
)
@click.option(
    "--checked/--unchecked",
    "checked",
    default=None,
    help="Checked launches: an out-of-range buffer access is returned as rgpu::Error after "
    "the launch (cpu, cuda). Default: `checked` in [workspace.metadata.rgpu], else unchecked.",
)
@click.option(
    "--yes", "-y", is_flag=True, default=None, help="Allow toolchain installs (RGPU_YES)."
)
def build(
    directory: Path | None,
    backends: tuple[str, ...],
    release: bool | None,
    docker: bool | None,
    image: str | None,
    codegen: str | None,
    archs: tuple[str, ...],
    dry_run: bool,
    as_json: bool,
    kernel_artifacts: tuple[Path, ...],
    recompile: bool,
    require_platforms: tuple[str, ...],
    target_platforms: tuple[str, ...],
    checked: bool | None,
    yes: bool | None,
) -> None:
    """Compile the kernels for the backends, then build every binary, example and test."""
    # start-up: ~81 ms to import pipeline; only this path pays it
    from rgpu import pipeline

    ws = load_workspace(directory)
    options = options_for(
        ws,
        backend=parse_backends(backends, "--backend") or None,
        profile=profile_of(release),
        yes=yes,
        docker=docker,
        image=image,
        codegen=check_codegen(codegen, "--codegen") if codegen is not None else None,
        cuda_archs=_archs(archs),
        require_platforms=_platforms(require_platforms),
        target_platforms=_targets(target_platforms),
        checked=checked,
    )
    options = state.kept_archs(
        options,
        state.read(ws.rgpu_dir),
        archs_chosen=bool(archs) or chosen("cuda-archs", ws.metadata, os.environ),
    )
    names = [b.name for b in options.backends]
    try:
        result = pipeline.build(
            ws,
            options,
            options.backends,
            dry_run=dry_run,
            kernel_artifacts=kernel_artifacts,
            recompile=recompile,
        )
    except RgpuError as error:
        summary_of_failure(f"rgpu build ({', '.join(names)})", error)
        raise
    if not dry_run:
        step_summary(lambda s: s.build_markdown(result))
    if as_json:
        emit_json({"ok": True, "dry_run": dry_run, **result.to_dict()})
    elif dry_run:
        click.echo(result.plan.render())
    else:
        built = ", ".join(t.name for t in result.targets) or "nothing new"
        reporter().info(f"built {built} with backends {', '.join(result.backends)}")


@cli.command(cls=ProgramArgsCommand, context_settings={"allow_extra_args": True})
@dir_option
@click.option(
    "--backend",
    default=None,
    metavar="B",
    help=f"Backend the program uses ({names_help()}; RGPU_BACKEND); built in first if needed.",
)
@click.option("--bin", "binary", default=None, metavar="NAME", help="The binary to run.")
@click.option("--example", default=None, metavar="NAME", help="The example to run.")
@click.option(
    "--engine",
    type=click.Choice(["chromium", "dawn"]),
    default=None,
    help="What runs a --backend webgpu program: headless Chromium (default) or Dawn in Node.",
)
@click.option(
    "--yes", is_flag=True, help="Download what the run lacks without asking (RGPU_YES=1)."
)
@release_option
def run(
    directory: Path | None,
    backend: str | None,
    binary: str | None,
    example: str | None,
    engine: str | None,
    yes: bool,
    release: bool | None,
    args: tuple[str, ...],
) -> None:
    """Build if needed, then run a binary of the workspace with ARGS.

    rgpu's options go before `--`; ARGS, after it, go to the program untouched."""
    # start-up: ~2 ms to import host.run; only this path pays it
    from rgpu.host.run import run as run_program

    ws = load_workspace(directory)
    options = last_build_options(ws, release)
    if yes:
        options = options._replace(yes=True)
    chosen = get_backend(backend, "--backend") if backend is not None else None
    # start-up: pipeline only for the build commands (asker: a missing download's question)
    from rgpu.pipeline import asker

    code = run_program(
        ws,
        options,
        chosen,
        binary,
        example,
        args,
        engine=engine,
        build=_build_first,
        ask=asker(os.environ),
    )
    if code != 0:
        raise ChildExit(code)


@cli.command()
@dir_option
@click.option("--open", "open_browser", is_flag=True, help="Open the documentation in a browser.")
@json_option("doc.schema.json")
def doc(directory: Path | None, open_browser: bool, as_json: bool) -> None:
    """Build the kernel API's documentation (rustdoc of the rgpu crates the workspace uses)."""
    # start-up: ~17 ms to import host.doc; only this path pays it
    from rgpu.host.doc import build_docs

    page = build_docs(load_workspace(directory), open_browser)
    reporter().info(f"the kernel API's documentation: {page}")
    if as_json:
        emit_json({"ok": True, "page": str(page)})


@cli.command()
@dir_option
@backends_option(f"Test exactly these backends ({BACKEND_HELP}); a skip fails.")
@release_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the results as JSON on stdout (rgpu/schemas/test.schema.json); the tests' "
    "own output goes to stderr.",
)
def test(
    directory: Path | None, backends: tuple[str, ...], release: bool | None, as_json: bool
) -> None:
    """Run the workspace's tests with every backend built in; report each backend."""
    # start-up: ~52 ms to import host.test; only this path pays it
    from rgpu.host import test as testing

    ws = load_workspace(directory)
    options = last_build_options(ws, release)
    asked = parse_backends(backends, "--backend")
    try:
        results = testing.run_tests(
            ws, options, asked, build=_build_first, stdout_to_stderr=as_json
        )
    except testing.TestsFailed as failed:
        _report(failed.results, failed.error, as_json)
        summary_of_failure("rgpu test", failed.error)
        if not as_json:
            raise failed.error from None
        # The report on stdout is the JSON result; a second JSON error would break it.
        reporter().error(failed.error.message, failed.error.hint)
        raise ChildExit(int(failed.error.exit_code)) from None
    except RgpuError as error:
        summary_of_failure("rgpu test", error)
        raise
    _report(results, None, as_json)
    step_summary(lambda s: s.tests_markdown(results))


def _report(results: Sequence[BackendResult], error: RgpuError | None, as_json: bool) -> None:
    if as_json:
        emit_json(
            {
                "ok": error is None,
                "results": [r.to_dict() for r in results],
                "error": None if error is None else error.to_dict(),
            }
        )
        return
    for result in results:
        reporter().status(result.status, f"{result.backend}: {result.detail}")
