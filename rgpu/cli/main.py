"""The command group and the one place rgpu exits: errors become one message and their
exit code (README's table); a traceback only with --debug."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from rgpu import __version__
from rgpu.errors import ExitCode, RgpuError, UsageError
from rgpu.util.output import reporter

dir_option = click.option(
    "-C",
    "directory",
    type=click.Path(path_type=Path),
    default=None,
    help="Run as if started in DIR (searched upward for the workspace), like git -C.",
)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def load_workspace(directory: Path | None) -> Any:
    from rgpu import workspace

    return workspace.load(directory or Path.cwd())


def options_for(ws: Any, **cli: Any) -> Any:
    from rgpu import config

    return config.resolve(metadata=ws.metadata, env=os.environ, cli=cli)


def profile_of(release: bool | None) -> str | None:
    return None if release is None else ("release" if release else "debug")


def step_summary(render: Callable[[Any], str]) -> None:
    """Append to GitHub's step summary; rgpu.ci.summary is imported only under Actions."""
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from rgpu.ci import summary

        summary.append(render(summary))


def summary_of_failure(label: str, error: RgpuError) -> None:
    step_summary(lambda s: s.failure_markdown(label, error))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rgpu")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """rgpu: build plain-Rust GPU kernels for CUDA, Vulkan (wgpu, ash) and the CPU."""
    ctx.obj = {"debug": debug}


class ChildExit(Exception):
    """A program rgpu ran exited non-zero and already said why: pass its code on."""

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


def _interrupted(debug: bool) -> NoReturn:
    if debug:
        import traceback

        traceback.print_exc()
    reporter().error("interrupted")
    sys.exit(int(ExitCode.INTERRUPTED))


def main(argv: Sequence[str] | None = None) -> NoReturn:
    debug = as_json = False
    # Everything inside the try, the commands' imports too: a Ctrl-C at any point of them
    # is one line and exit 130, never a traceback.
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        debug = "--debug" in args
        as_json = "--json" in args and "--" not in args[: args.index("--json")]
        from rgpu.cli import commands  # noqa: F401  (registers every command on `cli`)

        cli.main(args=args, prog_name="rgpu", standalone_mode=False)
    except RgpuError as error:
        _fail(error, as_json, debug)
    except ChildExit as child:
        sys.exit(child.code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _interrupted(debug)
    except click.ClickException as exc:
        _fail(UsageError(exc.format_message(), "see `rgpu --help`"), as_json, debug)
    except UnicodeEncodeError as exc:
        _fail(_path_not_utf8(exc), as_json, debug)
    sys.exit(0)


def _path_not_utf8(exc: UnicodeEncodeError) -> RgpuError:
    """A path with bytes that are not UTF-8 reached something that must write it as text."""
    from rgpu.errors import ConfigError

    bad = exc.object[exc.start : exc.end]
    return ConfigError(
        f"a path here is not valid UTF-8 ({bad!r}): cargo, rustc and rgpu need UTF-8 paths",
        "rename the directory (or move the workspace) to a name that is valid UTF-8",
    )
