"""The one place rgpu exits: errors become one message and their exit code (README's
table); a traceback only with --traceback. The commands are registered on `group.cli`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import NoReturn

import click

from rgpu.cli.group import ChildExit, cli
from rgpu.cli.program_args import HintedUsageError
from rgpu.errors import ConfigError, ExitCode, InterruptedByUser, Reported, RgpuError, UsageError
from rgpu.util.output import reporter


def _fail(error: Reported, as_json: bool, debug: bool) -> NoReturn:
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
        ours = args[: args.index("--")] if "--" in args else args
        debug = "--traceback" in ours or "--debug" in _before_the_command(ours)
        as_json = "--json" in ours
        from rgpu.cli import commands  # noqa: F401  (registers every command on `cli`)

        cli.main(args=args, prog_name="rgpu", standalone_mode=False)
    except (RgpuError, InterruptedByUser) as error:
        _fail(error, as_json, debug)
    except ChildExit as child:
        sys.exit(child.code)
    except (click.exceptions.Abort, KeyboardInterrupt) as stop:
        # Click turns a KeyboardInterrupt inside a command into Abort: an InterruptedByUser
        # there still says what was left as it was.
        if isinstance(stop.__cause__, InterruptedByUser):
            _fail(stop.__cause__, as_json, debug)
        _interrupted(debug)
    except click.ClickException as exc:
        _fail(usage_error(exc), as_json, debug)
    except UnicodeEncodeError as exc:
        _fail(_path_not_utf8(exc), as_json, debug)
    sys.exit(0)


def _before_the_command(args: Sequence[str]) -> list[str]:
    """The options before the command name (`rgpu --debug build`: the old --traceback)."""
    before: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-C":
            skip = True
        elif not arg.startswith("-"):
            break
        before.append(arg)
    return before


def usage_error(exc: click.ClickException) -> UsageError:
    """Click's message, and the help of the command it is about (`rgpu build --help`)."""
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if isinstance(ctx, click.Context) else "rgpu"
    if isinstance(exc, HintedUsageError):
        return UsageError(exc.format_message(), exc.hint)
    return UsageError(exc.format_message(), f"see `{path} --help`")


def _path_not_utf8(exc: UnicodeEncodeError) -> RgpuError:
    """A path with bytes that are not UTF-8 reached something that must write it as text."""
    bad = exc.object[exc.start : exc.end]
    return ConfigError(
        f"a path here is not valid UTF-8 ({bad!r}): cargo, rustc and rgpu need UTF-8 paths",
        "rename the directory (or move the workspace) to a name that is valid UTF-8",
    )
