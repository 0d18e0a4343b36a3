"""Command line: parse, call the library, render the result. Only main() exits."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from rgpu import __version__
from rgpu.errors import ExitCode, RgpuError, UsageError
from rgpu.util.output import reporter

BACKEND_CHOICES = ("cpu", "cuda", "wgpu", "ash")
F = TypeVar("F", bound=Callable[..., Any])

dir_option = click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in DIR (searched upward for the workspace), like git -C.",
)


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def _load_project(directory: Path | None) -> Any:
    from rgpu import project

    return project.load(directory or Path.cwd())


def _options(project: Any, **cli: Any) -> Any:
    from rgpu import config

    return config.resolve(metadata=project.metadata, env=os.environ, cli=cli)


def _split_backends(values: Sequence[str]) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    from rgpu.backends import get_backend

    for name in names:
        get_backend(name)  # unknown names fail here with a did-you-mean
    return list(dict.fromkeys(names))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rgpu")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """rgpu: build plain-Rust GPU kernels for CUDA, Vulkan (wgpu, ash) and the CPU."""
    ctx.obj = {"debug": debug}


@cli.command()
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="Parent directory to create the workspace in.",
)
@click.option("--force", is_flag=True, help="Write into an existing directory (keeps other files).")
def new(name: str, parent: Path, force: bool) -> None:
    """Create a new workspace NAME from the bitonic-sort template."""
    from rgpu.scaffold import new_workspace

    dest, statuses = new_workspace(name, parent, force=force)
    for status in statuses:
        reporter().status(status.word, status.path)
    reporter().info(f"created {dest}")
    reporter().info(f"next: cd {dest} && rgpu run -- --verify")


def _backend_option(default_help: str) -> Callable[[F], F]:
    return click.option(
        "--backend",
        "backends",
        multiple=True,
        metavar="B",
        help=f"Backend to build: {', '.join(BACKEND_CHOICES)}; repeat or comma-separate. "
        f"{default_help}",
    )


@cli.command()
@dir_option
@_backend_option("Default: cpu, or `backend` in [workspace.metadata.rgpu].")
@click.option("--release/--debug", "release", default=None, help="Cargo profile (default release).")
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
    help="Container image for --docker (default: rgpu-toolchain:<version>-offline for nvptx).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan of commands; run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def build(
    directory: Path | None,
    backends: tuple[str, ...],
    release: bool | None,
    docker: bool | None,
    image: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Compile the kernels for a backend, then build the host with its feature."""
    from rgpu import build as pipeline

    project = _load_project(directory)
    profile = None if release is None else ("release" if release else "debug")
    options = _options(project, profile=profile, docker=docker, image=image)
    names = _split_backends(backends) or _split_backends([options.backend])
    result = pipeline.build(project, options, names, dry_run=dry_run)
    if as_json:
        _emit_json({"ok": True, "dry_run": dry_run, **result.to_dict()})
    elif dry_run:
        click.echo(result.plan.render())
    else:
        reporter().info(f"built {result.binary} ({', '.join(result.backends)})")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@dir_option
@click.option("--backend", "backend", default=None, metavar="B", help="Backend to build and run.")
@click.option("--release/--debug", "release", default=None, help="Cargo profile (default release).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(
    directory: Path | None, backend: str | None, release: bool | None, args: tuple[str, ...]
) -> None:
    """Build if needed, then run the demo binary with ARGS (after --)."""
    from rgpu import build as pipeline
    from rgpu.util.cmd import exec_replace

    project = _load_project(directory)
    profile = None if release is None else ("release" if release else "debug")
    options = _options(project, profile=profile)
    if backend is not None:
        names = _split_backends([backend])
    else:
        state = pipeline.read_state(project)
        names = state["backends"] if state else _split_backends([options.backend])
    result = pipeline.build(project, options, names)
    argv = [str(result.binary)]
    if backend is not None:
        argv += ["--backend", backend]
    code = exec_replace([*argv, *args])
    if code != 0:
        raise _ChildExit(code)


@cli.command()
@dir_option
@click.option("--release/--debug", "release", default=None, help="Cargo profile (default release).")
def test(directory: Path | None, release: bool | None) -> None:
    """Run the workspace's own tests, with the backends of the last build."""
    from rgpu import testing

    project = _load_project(directory)
    profile = None if release is None else ("release" if release else "debug")
    options = _options(project, profile=profile)
    testing.run_tests(project, options)


class _ChildExit(Exception):
    """The demo binary exited non-zero: pass its code on, it already said why."""

    def __init__(self, code: int) -> None:
        self.code = code


def _fail(error: RgpuError, as_json: bool, debug: bool) -> NoReturn:
    if debug:
        import traceback

        traceback.print_exc()
    if as_json:
        click.echo(json.dumps({"ok": False, **error.to_dict()}, indent=2, sort_keys=True))
    reporter().error(error.message, error.hint)
    sys.exit(int(error.exit_code))


def main(argv: Sequence[str] | None = None) -> NoReturn:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    as_json = "--json" in args and "--" not in args[: args.index("--json")]
    try:
        cli.main(args=args, prog_name="rgpu", standalone_mode=False)
    except RgpuError as error:
        _fail(error, as_json, debug)
    except _ChildExit as child:
        sys.exit(child.code)
    except click.exceptions.Abort:
        reporter().error("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except KeyboardInterrupt:
        reporter().error("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except click.ClickException as exc:
        _fail(UsageError(exc.format_message(), "see `rgpu --help`"), as_json, debug)
    sys.exit(0)
