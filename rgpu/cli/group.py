"""The `rgpu` command group, and the options and helpers its commands share.

Every command module (build.py, ci.py, doctor.py, scaffold.py, toolchain.py) registers its
commands on `cli` here; main.py imports them and is the one place rgpu exits."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from rgpu import __version__, config, workspace
from rgpu.backends import summary
from rgpu.config import Options
from rgpu.errors import RgpuError
from rgpu.util.output import Reporter, reporter, set_reporter
from rgpu.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])

DIR_HELP = "Run as if started in DIR (searched upward for the workspace), like git -C."


def global_directory(ctx: click.Context) -> Path | None:
    """The `-C DIR` given before the command name (`rgpu -C DIR build`), if any."""
    obj = ctx.find_root().obj
    return obj.get("directory") if isinstance(obj, dict) else None


def _after_or_before(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """`-C DIR` after the command name wins; else the one before it (like git's and cargo's)."""
    return value if value is not None else global_directory(ctx)


def directory_option(help: str = DIR_HELP) -> Callable[[F], F]:
    """`-C DIR` on a command: the same option as before the command name, which it
    overrides."""
    return click.option(
        "-C",
        "directory",
        type=click.Path(path_type=Path),
        default=None,
        metavar="DIR",
        callback=_after_or_before,
        help=help,
    )


dir_option = directory_option()


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def json_option(schema: str) -> Callable[[F], F]:
    """`--json`: the command's result as JSON on stdout (rgpu/schemas/SCHEMA); what it says
    along the way stays on stderr, and a failure is rgpu's error object (cli/main.py)."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help=f"Print the result as JSON on stdout (rgpu/schemas/{schema}).",
    )


def load_workspace(directory: Path | None) -> Workspace:
    return workspace.load(directory or Path.cwd())


def options_for(ws: Workspace, **cli: Any) -> Options:
    """The build options: defaults, the workspace's metadata, RGPU_*, then ``cli`` (typed
    values, None where the command line did not say)."""
    return config.resolve(metadata=ws.metadata, env=os.environ, cli=cli)


def profile_of(release: bool | None) -> str | None:
    return None if release is None else ("release" if release else "debug")


def step_summary(render: Callable[[Any], str]) -> None:
    """Append to GitHub's step summary; rgpu.ci.summary is imported only under Actions."""
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        # start-up: ~20 ms to import ci.summary; only this path pays it
        from rgpu.ci import summary

        summary.append(render(summary))


def summary_of_failure(label: str, error: RgpuError) -> None:
    step_summary(lambda s: s.failure_markdown(label, error))


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"rgpu: build plain-Rust GPU kernels for {summary()}.",
)
@click.version_option(__version__, prog_name="rgpu")
@click.option(
    "-C",
    "directory",
    type=click.Path(path_type=Path),
    default=None,
    metavar="DIR",
    help=DIR_HELP + " Also accepted after the command name.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only warnings, errors and results.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Print more: every file a command writes or keeps."
)
@click.option("--traceback", is_flag=True, help="Show Python tracebacks for errors.")
@click.option(
    "--debug",
    "old_debug",
    is_flag=True,
    hidden=True,
    help="Before the command: the old name of --traceback (after build/run/test it is the "
    "debug profile).",
)
@click.pass_context
def cli(
    ctx: click.Context,
    directory: Path | None,
    quiet: bool,
    verbose: bool,
    traceback: bool,
    old_debug: bool,
) -> None:
    ctx.obj = {"directory": directory, "verbose": False, "quiet": False}
    _set_verbosity(ctx, quiet=quiet, verbose=verbose)
    if old_debug:
        reporter().warn(
            "`rgpu --debug COMMAND` is now `rgpu --traceback COMMAND` (after build, run "
            "and test, --debug picks the debug profile)"
        )


def _set_verbosity(ctx: click.Context, *, quiet: bool = False, verbose: bool = False) -> None:
    obj = ctx.find_root().obj
    if not isinstance(obj, dict):
        return
    obj["quiet"] = obj.get("quiet", False) or quiet
    obj["verbose"] = obj.get("verbose", False) or verbose
    if obj["quiet"] and obj["verbose"]:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other: give one")
    if quiet:
        set_reporter(Reporter(quiet=True))


def verbose() -> bool:
    """Whether -v/--verbose was given (before or after the command name)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return bool(obj.get("verbose")) if isinstance(obj, dict) else False


def _common_params() -> list[click.Parameter]:
    """-q, -v and --traceback after the command name too (`rgpu new demo -v`), like cargo's."""

    def quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            _set_verbosity(ctx, quiet=True)

    def loud(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            _set_verbosity(ctx, verbose=True)

    return [
        click.Option(
            ["-q", "--quiet"],
            is_flag=True,
            expose_value=False,
            callback=quiet,
            help="Print only warnings, errors and results.",
        ),
        click.Option(
            ["-v", "--verbose"],
            is_flag=True,
            expose_value=False,
            callback=loud,
            help="Print more: every file a command writes or keeps.",
        ),
        # main() reads it from the command line before click runs: tracebacks of any error.
        click.Option(
            ["--traceback"],
            is_flag=True,
            expose_value=False,
            help="Show Python tracebacks for errors.",
        ),
    ]


def _existing_directory(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """`-C DIR` on a command that needs no workspace (doctor, toolchain): accepted like
    everywhere, and DIR must exist; nothing else depends on it."""
    chosen = value if value is not None else global_directory(ctx)
    if chosen is not None and not chosen.is_dir():
        raise click.BadParameter(f"{chosen} is not a directory", ctx, param)


def add_common_options(group: click.Group) -> None:
    """Give every command of `group` (and of its subgroups) the common options, and `-C DIR`
    to those that have none (accepted everywhere, like the options before the command)."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            add_common_options(command)
            continue
        names = {p.name for p in command.params}
        if "traceback" not in names:
            command.params.extend(_common_params())
        if "directory" not in names:
            command.params.append(
                click.Option(
                    ["-C", "directory"],
                    type=click.Path(path_type=Path),
                    default=None,
                    metavar="DIR",
                    expose_value=False,
                    callback=_existing_directory,
                    help="Accepted like every command's -C; this command does not use a "
                    "workspace, so it only checks that DIR exists.",
                )
            )


class ChildExit(Exception):
    """A program rgpu ran exited non-zero and already said why: pass its code on."""

    def __init__(self, code: int) -> None:
        self.code = code
